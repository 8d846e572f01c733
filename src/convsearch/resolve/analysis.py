"""One turn as the resolver reads it: built once per turn (``analyse``, by the pipeline's plan), handed to the gate
(``gate.decide``), the scorer and the rewriter as an argument, and described in the trace.

An ``Analysis`` holds the window, the query (in the form the gate reads: ``shapes.asked_form``; ``typed`` is the
query as typed), the session topic and the ``Language`` detected once, and answers every question the gate and the
rule rewriter ask of the turn: the latest answer's offer accepted, a positional reference into a listed answer, a
fragment that fills a slot of the previous question, a bare reply to the other speaker's question, the query's
mentions, the conversation's focus (with and without the topic). Each answer is computed the first time it is asked
for and kept, so the gate and the rewriter never compute the same thing twice in a turn; ``asked()`` lists what was
computed (``--debug``, ``trace``).

>>> from convsearch.types import Message
>>> a = analyse([Message("user", "AnySearch 支持哪些检索方式？")], "价格呢？")
>>> a.lang, a.offer() is None, a.ordinal() is None, [m.text for m in a.mentions]
('zh', True, True, ['价格'])
>>> sorted(a.asked())
['mentions', 'offer', 'ordinal']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..lang.base import Mention
from ..types import Message
from .entities import mentions, name_like, topic_entity
from .focus import Focus, find_focus
from .frame import compare_in_history, slot_spans
from .language import Language, by_script, complete_fragment, detect
from .language import language as language_of
from .offer import accepted_offer
from .ordinal import resolve_ordinal
from .reply import answer_echo, wh_answer
from .shapes import asked_form

T = TypeVar("T")
_MISSING = object()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A phrase of the history the question may lean on, with what is known about it (the features a resolver,
    rule or learned, reads): its text and kind (``proper``; ``cls``: the mention class, e.g. ns / nr / proper /
    noun; ``relational``: an aspect noun such as 价格 or types), the turn it came from (index into the window,
    ``role``, ``distance``: turns back from the question, 1 = the latest), its slot type in the previous user
    question when it sits in one (place, time_day, platform …), whether it is the focus, and whether the question
    names it already."""

    text: str
    proper: bool
    cls: str
    relational: bool
    turn: int
    role: str
    distance: int
    slot: str | None
    in_frame: bool
    is_focus: bool
    in_query: bool


class Analysis:
    """The facts of one turn, each computed on first use and kept (see the module docstring).

    ``history`` is the windowed history as a tuple, ``query`` the asked form of the question, ``q`` that form
    stripped (what the gate reads), ``typed`` the question as typed, ``topic`` the session topic, ``language`` the
    question's ``Language`` (``lang`` its code)."""

    __slots__ = ("history", "query", "q", "typed", "topic", "language", "lang", "_memo")

    def __init__(self, history: tuple[Message, ...], query: str, topic: str | None, language: Language, *,
                 typed: str | None = None) -> None:
        self.history = history
        self.query = query
        self.q = query.strip()
        self.typed = query if typed is None else typed
        self.topic = topic
        self.language = language
        self.lang = language.code
        self._memo: dict[tuple[str, str], Any] = {}

    def _kept(self, name: str, text: str, compute: Callable[[], T]) -> T:
        key = (name, text)
        got = self._memo.get(key, _MISSING)
        if got is _MISSING:
            got = self._memo[key] = compute()
        return got  # type: ignore[no-any-return]

    def matches(self, history: Sequence[Message], typed: str, topic: str | None) -> bool:
        """Is this the analysis of that turn (the question as typed; an analysis handed to a rewriter may be of
        another)?"""
        return typed == self.typed and topic == self.topic and tuple(history) == self.history

    # --- the query's shape ----------------------------------------------------------------------------------
    @property
    def mentions(self) -> tuple[Mention, ...]:
        """The noun phrases the question names."""
        return self._kept("mentions", self.q, lambda: mentions(self.q, self.lang))

    @property
    def named_topic(self) -> str:
        """The session topic's name when it reads as a name ("Vlade Divac"), else ""."""
        def compute() -> str:
            name = topic_entity(self.topic) if self.topic else ""
            return name if name and name_like(name) else ""
        return self._kept("named_topic", "", compute)

    # --- what the question does with the history ------------------------------------------------------------
    def offer(self, text: str | None = None) -> str | None:
        """What the latest answer offered, when ``text`` (default: the question) accepts it ("Yes please")."""
        t = self.q if text is None else text
        return self._kept("offer", t, lambda: accepted_offer(t, self.history))

    def ordinal(self, text: str | None = None) -> tuple[int, int, str] | None:
        """(start, end, item) of a positional reference into a listed answer ("the third step", "第二种")."""
        t = self.q if text is None else text
        return self._kept("ordinal", t, lambda: resolve_ordinal(t, self.history, self.lang))

    @property
    def frame(self) -> str | None:
        """The latest user question (the frame a fragment completes)."""
        return self._kept("frame", "", lambda: next((m.content for m in reversed(self.history) if m.role == "user"),
                                                    None))

    def fragment(self, frame: str | None = None, text: str | None = None) -> tuple[str, str] | None:
        """(rewrite, how) when ``text`` (default: the question) is a fragment that fills a slot of ``frame``
        (default: the latest user question)."""
        f = self.frame if frame is None else frame
        t = self.q if text is None else text
        return self._kept("fragment", f"{t}\x00{f or ''}",
                          lambda: complete_fragment(t, f, self.language) if f else None)

    def compared(self, text: str | None = None) -> tuple[str, str] | None:
        """(rewrite, how) when ``text`` (default: the question) asks which of the two things the user's last
        questions named."""
        t = self.q if text is None else text
        return self._kept("compared", t, lambda: compare_in_history(t, self.history,
                                                                     (by_script(t) or self.language).code))

    def echo(self, text: str | None = None) -> tuple[str, str] | None:
        """A bare yes/no reply completed with the predicate it answers ("会" → "会游泳")."""
        t = self.q if text is None else text
        return self._kept("echo", t, lambda: answer_echo(t, self.history))

    def wh(self, text: str | None = None) -> tuple[str, str] | None:
        """A fragment answer to the other speaker's wh-question ("二环" → "在二环上班")."""
        t = self.q if text is None else text
        return self._kept("wh", t, lambda: wh_answer(t, self.history))

    # --- the history's candidates ---------------------------------------------------------------------------
    @property
    def focus(self) -> Focus:
        """The conversation's focus from the history alone."""
        return self._kept("focus", "", lambda: find_focus(self.history))

    @property
    def topic_focus(self) -> Focus:
        """The conversation's focus with the session topic standing in when the history names nothing."""
        return self._kept("topic_focus", "", lambda: find_focus(self.history, self.topic))

    @property
    def candidates(self) -> tuple[Candidate, ...]:
        """Every mention of the window, newest turn first (a phrase named again is listed once, at its latest
        turn), with its facts (``Candidate``). Not read by the shipped rules: it is what a learned resolver and
        the trace read."""
        def compute() -> tuple[Candidate, ...]:
            frame = self.frame or ""
            slots = {frame[s:e].lower(): kind for s, e, kind in slot_spans(frame)} if frame else {}
            focus = self.topic_focus.entity
            q = self.q.lower()
            out: list[Candidate] = []
            seen: set[str] = set()
            n = len(self.history)
            for i in range(n - 1, -1, -1):
                m = self.history[i]
                for x in mentions(m.content):
                    key = x.text.lower()
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(Candidate(x.text, x.proper, x.cls, x.relational, i, m.role, n - i, slots.get(key),
                                         key in frame.lower(), focus is not None and x.text == focus.text,
                                         key in q))
            return tuple(out)
        return self._kept("candidates", "", compute)

    def asked(self) -> dict[str, Any]:
        """What was computed this turn, by name (a fact asked about two texts is listed under its name and text)."""
        out: dict[str, Any] = {}
        for (name, text), value in self._memo.items():
            said = text.split("\x00", 1)[0]
            out[name if said in ("", self.q) else f"{name}({said})"] = value
        return out

    def describe(self, *, candidates: bool = False) -> dict[str, Any]:
        """The analysis as plain data, for the trace and ``--debug``: the turn and every fact computed for it
        (with ``candidates``, the history's candidates too, computed if they were not)."""
        if candidates:
            _ = self.candidates
        facts: dict[str, Any] = {}
        for key, value in self.asked().items():
            facts[key] = _plain(value)
        return {"lang": self.lang, "query": self.query, "topic": self.topic, "turns": len(self.history),
                "facts": facts}


def analyse(history: Sequence[Message], query: str, topic: str | None = None, *,
            lang: str | None = None) -> Analysis:
    """The turn's analysis: its language detected once from the question as typed (or the language of code ``lang``),
    the question in the form the gate reads."""
    language = language_of(lang) if lang else detect(query)
    return Analysis(tuple(history), asked_form(query, language.code), topic, language, typed=query)


def _plain(value: Any) -> Any:
    if isinstance(value, Candidate):
        return {k: getattr(value, k) for k in Candidate.__slots__}
    if isinstance(value, Mention):
        return value.text
    if isinstance(value, Focus):
        return {"entity": value.entity.text if value.entity else None, "source": value.source,
                "subject": value.subject.text if value.subject else None}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value
