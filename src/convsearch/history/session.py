"""``Conversation``: one conversation in a store, as a turn uses it (load memory, record the turn, add replies).

>>> from convsearch import search_with_context
>>> from convsearch.backends.base import InMemoryBackend
>>> from convsearch.history import InMemoryStore
>>> from convsearch.types import Document
>>> index = InMemoryBackend([Document("price", "AnySearch 专业版每月 99 元", title="AnySearch 价格")])
>>> conv = Conversation(InMemoryStore(), Scope("acme", "support-bot", "s-42"))
>>> r = search_with_context("AnySearch 的价格", backend=index, session=conv)   # reads the window, records the turn
>>> _ = conv.add({"role": "assistant", "content": "专业版每月 99 元 [1]。"})   # [1] goes on the task stack
>>> [m.role for m in conv.store.messages(conv.scope)]
['user', 'assistant']
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager as ContextManager
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import Any

from ..config import Settings, Switch
from ..errors import HistoryUnavailable
from ..types import Citation, Message
from ..window import to_messages
from .base import CitedResult, HistorySettings, HistoryStore, MemoryStore, Scope, StoredMessage, Summary
from .memory import Memory, cited_refs, dedupe_tasks, extract_facts, fit_tokens
from .summary import BackgroundRefresher, Summarizer, default_refresher, refresh_summary

REFRESH_MODES = ("background", "inline", "off")


def _batch(store: Any, *, write: bool) -> ContextManager[Any]:
    """``store.batch(write=...)`` when the store offers one (SqlStore: one transaction), else nothing."""
    batch = getattr(store, "batch", None)
    return batch(write=write) if batch is not None else nullcontext()


@dataclass(frozen=True)
class Conversation:
    """A store plus a scope, and how this caller takes part in it.

    ``speaker``: who is asking, in a shared room (their own turns plus the replies to them are their
    history). ``user``: whose long-term profile to use (default: the speaker, else the session id).
    ``profile``: inject that profile into this turn's memory (it is only *collected* when
    ``CONVSEARCH_PROFILE=on``). ``turn_id``: the client's id for this turn's query, so a retried turn is
    stored once. ``summarizer``: an LLM hook (``summarize(messages) -> str | None``); None is extractive.
    ``refresh``: ``background`` (default, throttled: see BackgroundRefresher), ``inline`` (tests) or ``off``.
    """

    store: HistoryStore
    scope: Scope
    speaker: str | None = None
    user: str | None = None
    profile: bool = False
    turn_id: str | None = None
    summarizer: Summarizer | None = None
    refresh: str = "background"
    refresher: BackgroundRefresher | None = None  # None: the process-wide one (default_refresher())

    def __post_init__(self) -> None:
        if self.refresh not in REFRESH_MODES:
            raise ValueError(f"refresh must be one of {REFRESH_MODES}, not {self.refresh!r}")

    def turn(self, turn_id: str | None) -> "Conversation":
        """The same conversation for one turn with the client's id for it."""
        return replace(self, turn_id=turn_id)

    @property
    def profile_user(self) -> str:
        return self.user or self.speaker or self.scope.session

    # --- reading ----------------------------------------------------------------------------------
    def load(self, settings: Settings | None = None) -> Memory:
        """The turn's memory: summary, window within the token budget, task stack, profile when asked.
        Raises HistoryUnavailable when the store cannot be read."""
        s = settings or Settings()
        tasks: tuple[CitedResult, ...] = ()
        facts: tuple[Any, ...] = ()
        with _batch(self.store, write=False):
            summary = self.store.summary(self.scope, speaker=self.speaker)
            rows = self.store.window(self.scope, s.window, speaker=self.speaker)
            if isinstance(self.store, MemoryStore):
                rounds = HistorySettings.of(s).task_rounds
                tasks = dedupe_tasks(self.store.cited(self.scope, rounds=rounds, speaker=self.speaker))
                if self.profile:
                    facts = tuple(self.store.facts(self.scope, self.profile_user))
        if summary is not None:
            rows = [r for r in rows if r.seq > summary.through]
        window = fit_tokens([r.as_message() for r in rows], HistorySettings.of(s).history_tokens)
        return Memory(window=window, summary=summary, tasks=tasks, profile=facts)

    # --- writing ----------------------------------------------------------------------------------
    def add(self, message: Message | dict[str, Any], *, message_id: str | None = None, reply_to: str | None = None,
            settings: Settings | None = None) -> StoredMessage:
        """Append a message from outside a search turn (typically the assistant's reply). A reply's
        ``[n]`` markers mark those results of the asker's latest turn as cited (the task stack); a user
        message's stated facts go to the profile when collection is on. Then the summary is refreshed."""
        s = settings or Settings()
        m = to_messages([message])[0]
        with _batch(self.store, write=True):
            row = self.store.append(self.scope, m, message_id=message_id, speaker=self.speaker, reply_to=reply_to)
            if isinstance(self.store, MemoryStore):
                if m.role == "assistant" and m.kind == "text" and not m.partial:
                    refs = cited_refs(m.content)
                    if refs:
                        self.store.mark_cited(self.scope, refs,
                                              speaker=row.thread if self.speaker is None else self.speaker)
                elif m.role == "user":
                    self._collect_facts(m.content, row.id, s)
        self.schedule_refresh(s)
        return row

    def record_turn(self, query: str, citations: Sequence[Citation], settings: Settings | None = None) -> StoredMessage:
        """Store the turn's query and the numbered results it offered, then refresh the summary."""
        s = settings or Settings()
        with _batch(self.store, write=True):  # the query and its results land together or not at all
            row = self.store.append(self.scope, Message("user", query), message_id=self.turn_id, speaker=self.speaker)
            if isinstance(self.store, MemoryStore):
                if citations:
                    self.store.record_results(self.scope, row.id, [
                        CitedResult(row.id, c.n, c.id, c.title, c.url, c.snippet) for c in citations],
                        speaker=self.speaker)
                self._collect_facts(query, row.id, s)
        self.schedule_refresh(s)
        return row

    def _collect_facts(self, text: str, source: str, s: Settings) -> None:
        if HistorySettings.of(s).profile is not Switch.ON or not isinstance(self.store, MemoryStore):
            return
        facts = extract_facts(text, source=source)
        if facts:
            self.store.remember(self.scope, self.profile_user, facts)

    # --- summary ----------------------------------------------------------------------------------
    def refresh_summary(self, settings: Settings | None = None) -> Summary | None:
        h = HistorySettings.of(settings or Settings())
        return refresh_summary(self.store, self.scope, speaker=self.speaker, summarizer=self.summarizer,
                               threshold=h.summary_threshold, keep=h.summary_keep, max_chars=h.summary_chars)

    def schedule_refresh(self, settings: Settings | None = None) -> None:
        """Refresh the summary as ``refresh`` says: on the background thread (never blocking), now, or not."""
        if self.refresh == "off":
            return
        if self.refresh == "inline":
            self.refresh_summary(settings)
            return
        (self.refresher or default_refresher()).schedule((id(self.store), self.scope, self.speaker),
                                                         lambda: self.refresh_summary(settings))


def history_for_turn(conv: Conversation, given: Sequence[Message],
                     settings: Settings) -> tuple[Memory | None, tuple[Message, ...], tuple[str, ...]]:
    """(memory, the history the rewriter sees, trace notes) for a turn in ``conv``. With the store
    unavailable the turn runs statelessly on ``given`` (the caller's own messages, already windowed),
    and a note says so."""
    try:
        memory = conv.load(settings)
    except HistoryUnavailable as exc:
        return None, tuple(given), (f"{exc}; ran statelessly with the {len(given)} given messages",)
    return memory, memory.history(), ()


def record_for_turn(conv: Conversation, query: str, citations: Sequence[Citation],
                    settings: Settings) -> tuple[str, ...]:
    """Store the turn; trace notes (empty when it was stored)."""
    try:
        conv.record_turn(query, citations, settings)
    except HistoryUnavailable as exc:
        return (f"{exc}; this turn was not recorded",)
    return ()


__all__ = ["Conversation", "history_for_turn", "record_for_turn"]
