"""What one turn carries across layers without widening every signature: its deadline, its scope (tenant,
agent) and a sink for trace notes.

The SearchBackend contract has no deadline or tenant parameter; a web backend still has to know how long it may
wait (``CONVSEARCH_DEADLINE_S`` covers the whole turn) and whose cache namespace it serves, and to say what it
decided (queued ms, key, retries, breaker, failover, cache hit/miss). The pipeline or the server opens a
``turn(...)``; backends read ``deadline()`` / ``scope()`` and call ``note(...)``. Context variables follow
``asyncio`` tasks and ``asyncio.to_thread``, so a fan-out's concurrent searches all see the turn's values and
write into the same sink. Outside any turn: no deadline, scope ``("local", "default")``, notes dropped.

>>> with turn(deadline_s=2.0, tenant="acme") as notes:
...     note("tavily: key #0, queued 0 ms")
...     scope()
('acme', 'default')
>>> notes
['tavily: key #0, queued 0 ms']
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .deadline import Deadline

_DEADLINE: ContextVar[Deadline | None] = ContextVar("convsearch_deadline", default=None)
_SCOPE: ContextVar[tuple[str, str]] = ContextVar("convsearch_scope", default=("local", "default"))
_NOTES: ContextVar[list[str] | None] = ContextVar("convsearch_notes", default=None)


@contextmanager
def turn(*, deadline: Deadline | None = None, deadline_s: float | None = None, tenant: str | None = None,
         agent: str | None = None) -> Iterator[list[str]]:
    """Open a turn: its deadline (``deadline`` or a fresh one of ``deadline_s``; default: the enclosing one),
    its scope, and a fresh notes list (yielded). Nested turns keep what they do not set."""
    dl = deadline if deadline is not None else (Deadline(deadline_s) if deadline_s is not None else _DEADLINE.get())
    t0, a0 = _SCOPE.get()
    notes: list[str] = []
    tokens = (_DEADLINE.set(dl), _SCOPE.set((tenant or t0, agent or a0)), _NOTES.set(notes))
    try:
        yield notes
    finally:
        _NOTES.reset(tokens[2])
        _SCOPE.reset(tokens[1])
        _DEADLINE.reset(tokens[0])


def deadline() -> Deadline:
    """The current turn's deadline (``Deadline.never()`` outside a turn)."""
    return _DEADLINE.get() or Deadline.never()


def scope() -> tuple[str, str]:
    """(tenant, agent) of the current turn."""
    return _SCOPE.get()


def note(text: str) -> None:
    """Add a trace note to the current turn (dropped outside one)."""
    sink = _NOTES.get()
    if sink is not None:
        sink.append(text)


__all__ = ["deadline", "note", "scope", "turn"]
