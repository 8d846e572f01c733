"""Rolling summaries: fold a long session's older messages into a short stored summary.

When a session (or one speaker's thread in a room) holds more than ``threshold`` windowable messages
(default 14), every message but the most recent ``keep`` (default 8) is folded into the summary, capped at
``max_chars`` (default 1,200). Refreshing is incremental: the summarizer gets the previous summary as a
leading message named ``summary`` plus the messages folded since, the way progressive LLM summaries work.

Summarizers: anything with ``summarize(messages) -> str | None`` (an LLM hook), and
:class:`ExtractiveSummarizer`, the offline default: the salient entities and the user's earlier questions,
so that after 50 turns the rewriter still sees what the conversation is about. An LLM summarizer that
raises or returns nothing falls back to the extractive one, and the summary's ``method`` says so.

Refreshes run after a turn on one background thread (:class:`BackgroundRefresher`), never inside it.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime, timezone
from typing import Protocol, runtime_checkable

from ..lang import detect
from ..resolve.entities import mentions
from ..text import detect_lang
from ..types import Message
from .base import HistoryStore, Scope, Summary
from .memory import SUMMARY_NAME, summary_message

log = logging.getLogger("convsearch.history")

DEFAULT_THRESHOLD = 14
DEFAULT_KEEP = 8
DEFAULT_MAX_CHARS = 1200


@runtime_checkable
class Summarizer(Protocol):
    """Folds messages into a summary. A first message named ``summary`` carries the previous summary."""

    def summarize(self, messages: Sequence[Message]) -> str | None: ...


# Labels the rule rewriter's mention finder reads past (no noun, no capital, no pronoun), so that the summary's
# first entity is what it sees; each topics line ends a sentence.
_LABELS = {  # lang: (topics label, questions label, entity separator, question separator, end of topics)
    "zh": ("此前谈到：", "先前问过：", "、", "；", "。"),
    "en": ("discussed: ", "asked: ", "; ", "; ", "."),
}
_MAX_MENTION_CHARS = 40


def _parse_previous(text: str) -> tuple[list[str], list[str], str | None]:
    """Entities, questions and language back out of a summary this class wrote."""
    ents: list[str] = []
    qs: list[str] = []
    lang: str | None = None
    for line in text.splitlines():
        for code, (topics, questions, esep, qsep, end) in _LABELS.items():
            if line.startswith(topics):
                body = line[len(topics):]
                body = body[: -len(end)] if body.endswith(end) else body
                ents = [e.strip() for e in body.split(esep.strip()) if e.strip()]
                lang = code
            elif line.startswith(questions):
                qs = [q.strip() for q in line[len(questions):].split(qsep.strip()) if q.strip()]
                lang = code
    return ents, qs, lang


class ExtractiveSummarizer:
    """Offline summary: salient entities (proper nouns first, the user's mentions weighted over the
    assistant's, recent over old) and the user's earlier questions (most recent last)::

        discussed: AnySearch; NovaDB.
        asked: What search modes does AnySearch support?; And the price?

    (Chinese sessions get 此前谈到：… / 先前问过：…). It always fits ``max_chars``: the oldest questions go first,
    then the least salient entities.
    """

    name = "extractive"

    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS, max_entities: int = 8, max_questions: int = 10,
                 question_chars: int = 100) -> None:
        self.max_chars = max_chars
        self.max_entities = max_entities
        self.max_questions = max_questions
        self.question_chars = question_chars

    def summarize(self, messages: Sequence[Message]) -> str | None:
        prev_ents: list[str] = []
        prev_qs: list[str] = []
        prev_lang: str | None = None
        if messages and messages[0].name == SUMMARY_NAME:
            prev_ents, prev_qs, prev_lang = _parse_previous(messages[0].content)
            messages = messages[1:]
        scores: dict[str, float] = {}
        shown: dict[str, str] = {}
        for rank, e in enumerate(prev_ents):  # the old ranking carries over, decaying
            key = e.lower()
            scores[key] = scores.get(key, 0.0) + 2.0 * (len(prev_ents) - rank) / len(prev_ents)
            shown[key] = e
        n = max(len(messages), 1)
        questions = list(prev_qs)
        said = Counter(detect(m.content).code for m in messages if m.role == "user").most_common(2)
        for i, m in enumerate(messages):
            recency = 1.0 + i / n
            user = m.role == "user"
            for x in mentions(m.content):
                if x.relational or len(x.text) > _MAX_MENTION_CHARS:
                    continue
                w = (3.0 if x.proper else 1.0) * (1.0 if user else 0.5) * recency
                key = x.text.lower()
                scores[key] = scores.get(key, 0.0) + w
                shown.setdefault(key, x.text)
            if user:
                q = " ".join(m.content.split())
                if len(q) > self.question_chars:
                    q = q[: self.question_chars - 1] + "…"
                if q in questions:
                    questions.remove(q)
                questions.append(q)
        if not scores and not questions:
            return None
        if said and (len(said) == 1 or said[0][1] != said[1][1]):
            lang = said[0][0]  # the language most of the user's turns are in
        else:  # no user turn decides: keep the summary's language, else the text's
            lang = prev_lang or detect_lang(" ".join(m.content for m in messages))
        ranked = sorted(scores, key=lambda k: -scores[k])
        ents = [shown[k] for k in ranked][: self.max_entities]
        qs = questions[-self.max_questions:]
        topics, qlabel, esep, qsep, end = _LABELS.get(lang, _LABELS["en"])
        while True:
            lines = []
            if ents:
                lines.append(topics + esep.join(ents) + end)
            if qs:
                lines.append(qlabel + qsep.join(qs))
            out = "\n".join(lines)
            if len(out) <= self.max_chars:
                return out
            if len(qs) > 1:
                qs = qs[1:]
            elif len(ents) > 1:
                ents = ents[:-1]
            else:
                return out[: self.max_chars]


def _summarize(summarizer: Summarizer | None, messages: Sequence[Message], max_chars: int) -> tuple[str | None, str]:
    """Text and method; an LLM summarizer that fails or says nothing falls back to the extractive one."""
    fallback = ExtractiveSummarizer(max_chars=max_chars)
    if summarizer is None or isinstance(summarizer, ExtractiveSummarizer):
        return (summarizer or fallback).summarize(messages), "extractive"
    name = str(getattr(summarizer, "name", type(summarizer).__name__))
    try:
        out = summarizer.summarize(messages)
    except Exception as exc:  # fail open: an LLM hook must never lose the summary
        log.info("summarizer %s failed (%s: %s); using the extractive one", name, type(exc).__name__, exc)
        return fallback.summarize(messages), f"extractive (fallback: {name} failed)"
    if not out or not out.strip():
        return fallback.summarize(messages), f"extractive (fallback: {name} gave nothing)"
    return out.strip(), name


def refresh_summary(store: HistoryStore, scope: Scope, *, speaker: str | None = None,
                    summarizer: Summarizer | None = None, threshold: int = DEFAULT_THRESHOLD,
                    keep: int = DEFAULT_KEEP, max_chars: int = DEFAULT_MAX_CHARS) -> Summary | None:
    """Fold what is older than the last ``keep`` messages into the stored summary once the session (or
    ``speaker``'s thread) holds more than ``threshold``. Returns the summary now in force (None if none)."""
    prev = store.summary(scope, speaker=speaker)
    done = prev.folded if prev else 0
    rows = store.window(scope, None, speaker=speaker, after=prev.through if prev else 0)
    if done + len(rows) <= threshold or len(rows) <= keep:
        return prev
    fold = rows[: len(rows) - keep]
    msgs = ([summary_message(prev)] if prev else []) + [r.as_message() for r in fold]
    text, method = _summarize(summarizer, msgs, max_chars)
    if not text:
        return prev
    if len(text) > max_chars:
        text = text[: max_chars - 1] + "…"
    new = Summary(text, fold[-1].seq, done + len(fold), method, datetime.now(timezone.utc))
    return new if store.save_summary(scope, new, speaker=speaker) else store.summary(scope, speaker=speaker)


class BackgroundRefresher:
    """Runs summary refreshes on one daemon worker thread, after the turns that asked for them.

    Throttled per key (a session or a speaker's thread): the first request waits ``delay`` seconds (default
    0.25 s), and requests arriving meanwhile join it, so a burst of turns costs one refresh and the work
    lands when the conversation pauses rather than on top of the next turn (a refresh is CPU work and
    shares the interpreter with the turns). A later request never postpones a waiting one, so a busy
    session is still refreshed at least every ``delay`` seconds. ``flush()`` runs everything waiting now
    and returns when it is done; it also runs at interpreter exit, so a one-shot CLI turn keeps its summary.
    """

    def __init__(self, delay: float = 0.25) -> None:
        self.delay = delay
        self.errors = 0
        self.runs = 0
        self._cv = threading.Condition()
        self._due: dict[Hashable, tuple[float, Callable[[], object]]] = {}
        self._busy = False
        self._now = False  # flush asked: ignore the delays
        self._thread: threading.Thread | None = None
        atexit.register(self.flush, 10.0)

    def schedule(self, key: Hashable, job: Callable[[], object]) -> bool:
        """Queue ``job`` for ``key``; True if a new refresh was queued, False if it joined a waiting one."""
        with self._cv:
            waiting = key in self._due
            deadline = self._due[key][0] if waiting else time.monotonic() + self.delay
            self._due[key] = (deadline, job)  # the newest job (latest settings) runs at the first deadline
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="convsearch-summary", daemon=True)
                self._thread.start()
            self._cv.notify_all()
            return not waiting

    def _work(self) -> None:
        while True:
            with self._cv:
                while True:
                    if self._due:
                        key, (deadline, job) = min(self._due.items(), key=lambda kv: kv[1][0])
                        wait_s = 0.0 if self._now else deadline - time.monotonic()
                        if wait_s <= 0:
                            del self._due[key]
                            self._busy = True
                            break
                        self._cv.wait(wait_s)
                    else:
                        self._now = False
                        self._cv.wait()
            try:
                job()
            except Exception as exc:  # a failed refresh only delays the summary
                self.errors += 1
                log.info("summary refresh failed: %s: %s", type(exc).__name__, exc)
            finally:
                with self._cv:
                    self._busy = False
                    self.runs += 1
                    self._cv.notify_all()

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Run every waiting refresh now and wait for them; False on timeout."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            self._now = True
            self._cv.notify_all()
            while self._due or self._busy:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cv.wait(left)
            self._now = False
            return True


_default: BackgroundRefresher | None = None
_default_lock = threading.Lock()


def default_refresher() -> BackgroundRefresher:
    """The process-wide background refresher (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = BackgroundRefresher()
        return _default


__all__ = ["BackgroundRefresher", "ExtractiveSummarizer", "Summarizer", "default_refresher", "refresh_summary"]
