"""``InMemoryStore``: the history test double. Same contract as the SQL store, kept in dicts, thread-safe.

Set ``store.down = True`` to make every call raise :class:`~convsearch.errors.HistoryUnavailable`, the way a
locked or unreachable database does.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from ..errors import HistoryUnavailable, MessageIdConflict
from ..types import Message
from ..window import in_window
from .base import (CitedResult, Fact, Scope, StoredMessage, Summary, check_id, check_size, checked_append,
                   thread_filter)

_Key = tuple[str, str, str]


def _key(scope: Scope) -> _Key:
    return (scope.tenant, scope.agent, scope.session)


def resolve_thread(role: str, speaker: str | None, replied: StoredMessage | None,
                   latest_user: StoredMessage | None) -> str | None:
    """Whose thread a new message joins: a user's own; an assistant reply joins the asker's (the message it
    replies to, else the named speaker, else the latest user turn)."""
    if role != "assistant":
        return speaker
    if replied is not None:
        return replied.thread
    if speaker is not None:
        return speaker
    return latest_user.thread if latest_user is not None else None


def same_message(a: StoredMessage, m: Message) -> bool:
    return (a.role, a.content, a.kind, a.partial) == (m.role, m.content, m.kind, m.partial)


class InMemoryStore:
    """A HistoryStore + MemoryStore in memory (for tests and throwaway sessions)."""

    name = "memory"

    def __init__(self, *, max_message_bytes: int = 65536) -> None:
        self.max_message_bytes = max_message_bytes
        self.down = False
        self._lock = threading.RLock()
        self._seq = 0
        self._msgs: dict[_Key, list[StoredMessage]] = {}
        self._ids: dict[tuple[_Key, str], StoredMessage] = {}
        self._summaries: dict[tuple[_Key, str], Summary] = {}
        self._results: dict[_Key, list[tuple[int, str, str | None, CitedResult, bool]]] = {}
        self._facts: dict[tuple[str, str, str], dict[str, Fact]] = {}

    @contextmanager
    def batch(self, *, write: bool = False) -> Iterator[None]:
        """Same shape as ``SqlStore.batch``; each call here is already atomic."""
        self._up()
        yield

    def _up(self) -> None:
        if self.down:
            raise HistoryUnavailable("history store unavailable: the in-memory store is marked down")

    # --- messages ---------------------------------------------------------------------------------
    def append(self, scope: Scope, message: Message | dict[str, Any], *, message_id: str | None = None,
               speaker: str | None = None, reply_to: str | None = None) -> StoredMessage:
        m = checked_append(message, max_bytes=self.max_message_bytes, message_id=message_id, speaker=speaker,
                           reply_to=reply_to)
        self._up()
        k = _key(scope)
        with self._lock:
            if message_id is not None and (k, message_id) in self._ids:
                old = self._ids[(k, message_id)]
                if not same_message(old, m):
                    raise MessageIdConflict(f"message id {message_id!r} already holds a different message")
                return old
            rows = self._msgs.setdefault(k, [])
            replied = self._ids.get((k, reply_to)) if reply_to else None
            latest_user = next((r for r in reversed(rows) if r.role == "user"), None)
            self._seq += 1
            row = StoredMessage(id=message_id or uuid.uuid4().hex, seq=self._seq, role=m.role, content=m.content,
                                kind=m.kind, partial=m.partial, name=m.name, speaker=speaker,
                                thread=resolve_thread(m.role, speaker, replied, latest_user), reply_to=reply_to,
                                created_at=datetime.now(timezone.utc))
            rows.append(row)
            self._ids[(k, row.id)] = row
            return row

    def messages(self, scope: Scope, *, after: int = 0, limit: int | None = None) -> list[StoredMessage]:
        self._up()
        with self._lock:
            rows = [r for r in self._msgs.get(_key(scope), []) if r.seq > after]
        return rows[-limit:] if limit else rows

    def window(self, scope: Scope, n: int | None, *, speaker: str | None = None, after: int = 0) -> list[StoredMessage]:
        self._up()
        if n is not None and n <= 0:
            return []
        with self._lock:
            rows = [r for r in self._msgs.get(_key(scope), []) if r.seq > after and in_window(r.as_message())]
        rows = thread_filter(rows, speaker)
        return rows[-n:] if n else rows

    def summary(self, scope: Scope, *, speaker: str | None = None) -> Summary | None:
        self._up()
        with self._lock:
            return self._summaries.get((_key(scope), speaker or ""))

    def save_summary(self, scope: Scope, summary: Summary, *, speaker: str | None = None) -> bool:
        self._up()
        with self._lock:
            k = (_key(scope), speaker or "")
            old = self._summaries.get(k)
            if old is not None and old.through >= summary.through:
                return False
            self._summaries[k] = replace(summary, updated_at=summary.updated_at or datetime.now(timezone.utc))
            return True

    def delete_session(self, scope: Scope) -> int:
        self._up()
        k = _key(scope)
        with self._lock:
            rows = self._msgs.pop(k, [])
            for r in rows:
                self._ids.pop((k, r.id), None)
            for sk in [sk for sk in self._summaries if sk[0] == k]:
                del self._summaries[sk]
            self._results.pop(k, None)
            return len(rows)

    def close(self) -> None:
        pass

    # --- task stack -------------------------------------------------------------------------------
    def record_results(self, scope: Scope, turn_id: str, results: Sequence[CitedResult], *,
                       speaker: str | None = None) -> None:
        check_id("turn id", turn_id)
        self._up()
        with self._lock:
            rows = self._results.setdefault(_key(scope), [])
            have = {(t, r.n) for _, t, _, r, _ in rows}
            for r in results:
                if (turn_id, r.n) not in have:
                    self._seq += 1
                    rows.append((self._seq, turn_id, speaker, replace(r, turn_id=turn_id), False))

    def mark_cited(self, scope: Scope, ns: Sequence[int], *, turn_id: str | None = None,
                   speaker: str | None = None) -> int:
        self._up()
        with self._lock:
            rows = self._results.get(_key(scope), [])
            mine = [x for x in rows if speaker is None or x[2] == speaker]
            if turn_id is None:
                if not mine:
                    return 0
                turn_id = max(mine, key=lambda x: x[0])[1]
            want = set(ns)
            n = 0
            for i, (seq, t, sp, r, cited) in enumerate(rows):
                if t == turn_id and r.n in want and (speaker is None or sp == speaker) and not cited:
                    rows[i] = (seq, t, sp, r, True)
                    n += 1
            return n

    def cited(self, scope: Scope, *, rounds: int = 3, speaker: str | None = None) -> list[CitedResult]:
        self._up()
        with self._lock:
            rows = [x for x in self._results.get(_key(scope), []) if speaker is None or x[2] == speaker]
        last: dict[str, int] = {}
        for seq, t, *_ in rows:
            last[t] = max(seq, last.get(t, 0))
        turns = sorted(last, key=lambda t: -last[t])[:max(rounds, 0)]
        order = {t: i for i, t in enumerate(turns)}
        kept = [(order[t], r.n, r) for _, t, _, r, cited in rows if cited and t in order]
        return [r for *_, r in sorted(kept, key=lambda x: (x[0], x[1]))]

    # --- profile ----------------------------------------------------------------------------------
    def facts(self, scope: Scope, user: str) -> list[Fact]:
        check_id("user", user)
        self._up()
        with self._lock:
            return sorted(self._facts.get((scope.tenant, scope.agent, user), {}).values(), key=lambda f: f.key)

    def remember(self, scope: Scope, user: str, facts: Sequence[Fact]) -> None:
        check_id("user", user)
        self._up()
        now = datetime.now(timezone.utc)
        with self._lock:
            d = self._facts.setdefault((scope.tenant, scope.agent, user), {})
            for f in facts:
                check_id("fact key", f.key)
                check_size(f.value, self.max_message_bytes)
                d[f.key] = replace(f, updated_at=f.updated_at or now)

    def forget(self, scope: Scope, user: str, keys: Sequence[str] | None = None) -> int:
        check_id("user", user)
        self._up()
        with self._lock:
            d = self._facts.get((scope.tenant, scope.agent, user), {})
            gone = list(d) if keys is None else [k for k in keys if k in d]
            for k in gone:
                del d[k]
            return len(gone)


__all__ = ["InMemoryStore", "resolve_thread", "same_message"]
