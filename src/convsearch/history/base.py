"""The history contracts: where a conversation lives, scoped tenant → agent → session.

Two small protocols, both implemented by :class:`~convsearch.history.memory_store.InMemoryStore` (the test
double) and :class:`~convsearch.history.sql.SqlStore` (SQLite / PostgreSQL):

- :class:`HistoryStore`: messages (idempotent appends by client message id) and the rolling summary;
- :class:`MemoryStore`: the task stack (results actually cited in earlier rounds) and the opt-in profile.

Every method takes a :class:`Scope`; nothing lists or reads across tenants. In a shared room each message
may carry a ``speaker``; a reader that passes ``speaker`` sees that person's *thread*: their own turns and
the assistant's replies to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..config import Section, Switch
from ..errors import ConfigError, InputError, MessageTooLarge
from ..secret import Secret
from ..types import Message
from ..window import to_messages


@dataclass(frozen=True, slots=True)
class HistorySettings(Section):
    """The history store's settings (CONVSEARCH_DB_*, _MAX_MESSAGE_BYTES, _HISTORY_TOKENS, _SUMMARY_*, _TASK_ROUNDS,
    _PROFILE; the table in convsearch.config). ``db_url`` may hold a password: a Secret."""

    name = "history"
    prefix = "CONVSEARCH_"
    db_url: Secret | None = field(default=None, repr=False)
    db_timeout: float = 1.0
    max_message_bytes: int = 65536
    history_tokens: int = 1500
    summary_threshold: int = 14
    summary_chars: int = 1200
    summary_keep: int = 8
    task_rounds: int = 3
    profile: Switch = Switch.OFF

    def check(self) -> None:
        self._require("max_message_bytes", "history_tokens", "summary_chars", "task_rounds")
        self._require("db_timeout", "summary_keep", positive=False)
        if self.summary_threshold < self.summary_keep:
            raise ConfigError("CONVSEARCH_SUMMARY_THRESHOLD must be at least CONVSEARCH_SUMMARY_KEEP")

MAX_ID_CHARS = 128
MAX_SESSION_CHARS = 256


def _check_id(kind: str, value: Any, limit: int = MAX_ID_CHARS) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{kind} must be a non-empty string")
    if len(value) > limit:
        raise InputError(f"{kind} is {len(value)} characters long; the limit is {limit}")
    if any(ord(c) < 32 for c in value):
        raise InputError(f"{kind} must not contain control characters")
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """Tenant → agent → session: the address of one conversation. Every store call takes one.

    >>> Scope("acme", "support-bot", "s-42")
    Scope(tenant='acme', agent='support-bot', session='s-42')
    """

    tenant: str
    agent: str
    session: str

    def __post_init__(self) -> None:
        _check_id("tenant", self.tenant)
        _check_id("agent", self.agent)
        _check_id("session", self.session, MAX_SESSION_CHARS)


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message as the store keeps it: the message plus its id, order and room metadata.

    ``id`` is the client's message id (generated when the client gave none); ``seq`` orders messages
    within a store; ``thread`` is the speaker whose thread the message belongs to (the asker an
    assistant reply answers), None outside shared rooms.
    """

    id: str
    seq: int
    role: str
    content: str
    kind: str = "text"
    partial: bool = False
    name: str | None = None
    speaker: str | None = None
    thread: str | None = None
    reply_to: str | None = None
    created_at: datetime | None = None

    def as_message(self) -> Message:
        return Message(role=self.role, content=self.content, kind=self.kind, partial=self.partial,  # type: ignore[arg-type]
                       name=self.name)


@dataclass(frozen=True, slots=True)
class Summary:
    """The rolling summary of a session (or of one speaker's thread): everything up to message ``through``
    (a ``seq``) folded into at most a few hundred words; ``folded`` counts the messages it covers."""

    text: str
    through: int
    folded: int
    method: str
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class CitedResult:
    """A search result the assistant actually cited in an earlier round (one task-stack entry)."""

    turn_id: str
    n: int
    id: str
    title: str = ""
    url: str = ""
    snippet: str = ""


@dataclass(frozen=True, slots=True)
class Fact:
    """One long-term profile fact the user stated ("budget" → "5000 元")."""

    key: str
    value: str
    source: str | None = None  # the message id it came from
    updated_at: datetime | None = None


@runtime_checkable
class HistoryStore(Protocol):
    """Messages and rolling summaries, scoped tenant → agent → session."""

    max_message_bytes: int

    def append(self, scope: Scope, message: Message | dict[str, Any], *, message_id: str | None = None,
               speaker: str | None = None, reply_to: str | None = None) -> StoredMessage:
        """Store one message; appending the same ``message_id`` again returns the stored one (no duplicate).
        For an assistant message ``speaker`` names the asker it answers (default: the latest user turn's)."""
        ...

    def messages(self, scope: Scope, *, after: int = 0, limit: int | None = None) -> list[StoredMessage]:
        """Every stored message with ``seq > after``, oldest first (the last ``limit`` when given)."""
        ...

    def window(self, scope: Scope, n: int | None, *, speaker: str | None = None,
               after: int = 0) -> list[StoredMessage]:
        """The last ``n`` messages the history window keeps (``window.in_window``), oldest first; with
        ``speaker``, only that speaker's thread. An unknown session gives []."""
        ...

    def summary(self, scope: Scope, *, speaker: str | None = None) -> Summary | None: ...

    def save_summary(self, scope: Scope, summary: Summary, *, speaker: str | None = None) -> bool:
        """Store ``summary`` unless the stored one already covers as much (``through``); True if stored."""
        ...

    def delete_session(self, scope: Scope) -> int:
        """Forget a session: its messages, summaries and results. Returns the number of messages removed."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class MemoryStore(Protocol):
    """The task stack (cited results) and the opt-in long-term profile."""

    def record_results(self, scope: Scope, turn_id: str, results: Sequence[CitedResult], *,
                       speaker: str | None = None) -> None:
        """Remember the numbered results a turn offered (none is cited yet)."""
        ...

    def mark_cited(self, scope: Scope, ns: Sequence[int], *, turn_id: str | None = None,
                   speaker: str | None = None) -> int:
        """Mark results [n] of ``turn_id`` (default: the thread's latest turn with results) as cited."""
        ...

    def cited(self, scope: Scope, *, rounds: int = 3, speaker: str | None = None) -> list[CitedResult]:
        """The cited results of the last ``rounds`` turns that offered results, newest turn first."""
        ...

    def facts(self, scope: Scope, user: str) -> list[Fact]:
        """The profile of ``user`` under the scope's tenant and agent (sessions share it)."""
        ...

    def remember(self, scope: Scope, user: str, facts: Sequence[Fact]) -> None: ...

    def forget(self, scope: Scope, user: str, keys: Sequence[str] | None = None) -> int: ...


def check_size(content: str, limit: int) -> None:
    """MessageTooLarge when ``content`` is over ``limit`` bytes of UTF-8; InputError when it is not text
    every database keeps as is (lone surrogates, NUL characters)."""
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InputError(f"message is not valid Unicode text ({exc.reason} at character {exc.start})") from exc
    if "\x00" in content:
        raise InputError("message contains a NUL character")
    if size > limit:
        raise MessageTooLarge(f"message is {size:,} bytes; the limit is {limit:,} (CONVSEARCH_MAX_MESSAGE_BYTES)")


def check_id(kind: str, value: str | None) -> str | None:
    return None if value is None else _check_id(kind, value)


def thread_filter(rows: Sequence[StoredMessage], speaker: str | None) -> list[StoredMessage]:
    """A shared room seen by one speaker: their own turns and the assistant's replies to them."""
    return list(rows) if speaker is None else [r for r in rows if r.thread == speaker]


__all__ = ["CitedResult", "Fact", "HistoryStore", "MemoryStore", "Scope", "StoredMessage", "Summary",
           "check_id", "check_size", "thread_filter"]


def checked_append(message: Message | dict[str, Any], *, max_bytes: int, message_id: str | None,
                   speaker: str | None, reply_to: str | None) -> Message:
    """The checks every store runs before an append: a known role, the size limit, well-formed ids."""
    m = to_messages([message])[0]
    check_size(m.content, max_bytes)
    for kind, value in (("message id", message_id), ("speaker", speaker), ("reply_to", reply_to)):
        check_id(kind, value)
    return m
