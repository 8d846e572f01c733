"""Fan-out: several backends searched concurrently, one ranked list per backend × query, fused by RRF.

``afan_out(routes, …)`` runs every backend's queries at once on the event loop (each call through
``compose.asearch_applied``, so filters and recency are honoured natively or after the search, and the notes
say which). A backend that raises, or has not answered when the deadline passes, is left out: the others'
lists stand, and its ``BackendRun`` says ``failed`` or ``late`` and why. Only when every backend failed is the
turn a BackendError. Scores are never compared across engines: the caller fuses the lists by rank (RRF).

``route_queries`` decides which queries go where: a paid backend (``capabilities.paid``: web APIs) gets the
standalone query only unless ``CONVSEARCH_WEB_VARIANTS=on``; the dense query (HyDE) goes with the standalone
query to backends with a dense side only.

``fan_out`` is the sync twin: safe to call with or without a running event loop (inside one, the turn runs
on a fresh loop in a worker thread; web adapters keep their pooled connections across such turns through
``ON_TURN_LOOP``). ``FanOut`` wraps several backends as one SearchBackend (what ``open_backend`` returns for a
comma list); the Pipeline unwraps it to route per backend.

>>> from convsearch.backends.base import InMemoryBackend
>>> from convsearch.types import Document
>>> a = InMemoryBackend([Document("1", "AnySearch 价格")]); a.name = "a"
>>> b = InMemoryBackend([Document("2", "AnySearch pricing")]); b.name = "b"
>>> r = fan_out(route_queries([a, b], ["AnySearch"]), top_k=3)
>>> [len(x) for x in r.lists], r.partial
([1, 1], False)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from ..errors import BackendError, ConvsearchError, DeadlineExceeded
from ..infra.deadline import Deadline
from ..types import BackendRun, Hit
from .base import FILTER_FIELDS, Capabilities, Filters, Recency, SearchBackend, takes_many
from .compose import Applied, asearch_applied, asearch_many_applied

T = TypeVar("T")

OK, FAILED, LATE = "ok", "failed", "late"


@dataclass(frozen=True, slots=True)
class Route:
    """What one backend is asked: its queries (the standalone one first) and the dense query for the first."""

    backend: SearchBackend
    queries: tuple[str, ...]
    dense_query: str | None = None

    @property
    def name(self) -> str:
        return str(getattr(self.backend, "name", type(self.backend).__name__))


@dataclass(frozen=True, slots=True)
class FanOutResult:
    """The ranked lists of the backends that answered (backend order, then query order) and every run."""

    lists: tuple[tuple[Hit, ...], ...]
    runs: tuple[BackendRun, ...]

    @property
    def partial(self) -> bool:
        """Some backend failed or was late: the lists hold the others' results only."""
        return any(r.status != OK for r in self.runs)

    @property
    def errors(self) -> tuple[str, ...]:
        """``"name: failed: why"`` per backend that did not answer."""
        return tuple(f"{r.backend}: {r.status}: {r.why}" for r in self.runs if r.status != OK)


def route_queries(backends: Sequence[SearchBackend], queries: Sequence[str], *, web_variants: bool = False,
                  dense_query: str | None = None) -> list[Route]:
    """Which queries go to which backend (see the module docstring). ``queries[0]`` is the standalone query."""
    qs = tuple(dict.fromkeys(queries))
    routes = []
    for b in backends:
        caps = b.capabilities
        mine = qs if (web_variants or not caps.paid) else qs[:1]
        routes.append(Route(b, mine, dense_query if caps.dense else None))
    return routes


async def _run_route(route: Route, *, top_k: int, filters: Filters | None, recency: Recency | None,
                     today: date | None) -> list[Applied]:
    if len(route.queries) > 1 and takes_many(route.backend):  # all variants in one call
        return [await asearch_many_applied(route.backend, route.queries, top_k=top_k, filters=filters,
                                           recency=recency, dense_query=route.dense_query, today=today)]
    calls = [asearch_applied(route.backend, q, top_k=top_k, filters=filters, recency=recency,
                             dense_query=route.dense_query if i == 0 else None, today=today)
             for i, q in enumerate(route.queries)]
    return list(await asyncio.gather(*calls))


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def afan_out(routes: Sequence[Route], *, top_k: int = 10, filters: Filters | None = None,
                   recency: Recency | None = None, today: date | None = None,
                   deadline: Deadline | None = None) -> FanOutResult:
    """Search every route concurrently under ``deadline``; BackendError only when no backend answered."""
    deadline = deadline or Deadline.never()
    t0 = time.perf_counter()
    done_at: dict[int, float] = {}

    async def timed(i: int, route: Route) -> list[Applied]:
        try:
            return await _run_route(route, top_k=top_k, filters=filters, recency=recency, today=today)
        finally:
            done_at[i] = time.perf_counter()

    tasks = [asyncio.ensure_future(timed(i, r)) for i, r in enumerate(routes)]
    remaining = deadline.remaining()
    if tasks:
        await asyncio.wait(tasks, timeout=None if remaining == float("inf") else max(remaining, 0.0))
    lists: list[tuple[Hit, ...]] = []
    runs: list[BackendRun] = []
    first_exc: BaseException | None = None
    for i, (route, task) in enumerate(zip(routes, tasks, strict=True)):
        ms = round(((done_at.get(i) or time.perf_counter()) - t0) * 1000, 3)
        if not task.done():
            task.cancel()
            runs.append(BackendRun(route.name, LATE, route.queries,
                                   f"no answer within the {deadline.budget_s:g}s deadline", ms))
            continue
        exc = task.exception()
        if exc is not None:
            first_exc = first_exc or exc
            runs.append(BackendRun(route.name, FAILED, route.queries, _why(exc), ms))
            continue
        applied = task.result()
        notes = tuple(dict.fromkeys(n for a in applied for n in a.notes))
        lists.extend(a.hits for a in applied)
        runs.append(BackendRun(route.name, OK, route.queries, "", ms, notes, sum(len(a.hits) for a in applied)))
    pending = [t for t in tasks if not t.done()]
    if pending:  # let the cancellations land (a worker thread behind one keeps running, its result dropped)
        await asyncio.gather(*pending, return_exceptions=True)
    if routes and all(r.status != OK for r in runs):
        if len(routes) == 1:  # the only backend: its own error, as if there were no fan-out
            if first_exc is not None:
                raise first_exc
            raise DeadlineExceeded(f"backend {runs[0].backend}: {runs[0].why}")
        raise BackendError("no backend answered: " + "; ".join(f"{r.backend}: {r.status}: {r.why}" for r in runs)) \
            from first_exc
    return FanOutResult(tuple(lists), tuple(runs))


# True inside the throwaway event loop of a sync turn (``run_sync``): a backend with a pooled sync client (the
# web adapters) then runs its sync call in a thread, so its connections outlive the turn's loop.
ON_TURN_LOOP: contextvars.ContextVar[bool] = contextvars.ContextVar("convsearch_on_turn_loop", default=False)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code, whether or not this thread already runs an event loop.

    A fresh loop per call (its own thread pool, so a late backend's thread from an earlier turn never holds up
    this one), closed without waiting for worker threads (a late backend's thread is left to finish on its own
    rather than holding up the turn, which ``asyncio.run`` would do)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_on_new_loop(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="convsearch-fanout") as ex:
        # the turn's context (infra.turn: deadline, scope, trace notes) goes along to the worker thread
        return ex.submit(contextvars.copy_context().run, _run_on_new_loop, coro).result()


def _run_on_new_loop(coro: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.new_event_loop()
    token = ON_TURN_LOOP.set(True)  # copied into the loop's tasks
    try:
        return loop.run_until_complete(coro)
    finally:
        ON_TURN_LOOP.reset(token)
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()  # shuts the default executor down with wait=False


def fan_out(routes: Sequence[Route], *, top_k: int = 10, filters: Filters | None = None,
            recency: Recency | None = None, today: date | None = None,
            deadline: Deadline | None = None) -> FanOutResult:
    """The sync twin of :func:`afan_out`."""
    return run_sync(afan_out(routes, top_k=top_k, filters=filters, recency=recency, today=today, deadline=deadline))


class FanOut:
    """Several backends as one SearchBackend: each searched concurrently (``afan_out``), their lists fused by RRF.

    Filters and recency are applied per member (natively or after), so the FanOut declares them all. A member
    that fails or is late is left out; all failing is a BackendError. ``deadline_s`` bounds each search."""

    name = "fanout"

    def __init__(self, backends: Sequence[SearchBackend], *, deadline_s: float | None = None) -> None:
        if not backends:
            raise ConvsearchError("a FanOut needs at least one backend")
        self.backends = tuple(backends)
        self.deadline_s = deadline_s
        caps = [b.capabilities for b in self.backends]
        self.capabilities = Capabilities(
            dense=any(c.dense for c in caps), remote=any(c.remote for c in caps), web=any(c.web for c in caps),
            paid=any(c.paid for c in caps),
            filters=frozenset(FILTER_FIELDS), recency=frozenset(r for r in Recency if r is not Recency.NO_LIMIT))

    def _deadline(self) -> Deadline:
        return Deadline(self.deadline_s) if self.deadline_s else Deadline.never()

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        from ..fuse import fuse_rrf

        routes = route_queries(self.backends, [query], dense_query=dense_query)
        r = await afan_out(routes, top_k=top_k, filters=Filters.of(filters), recency=Recency.parse(recency),
                           deadline=self._deadline())
        return fuse_rrf(r.lists, limit=top_k)

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        return run_sync(self.asearch(query, top_k=top_k, filters=filters, recency=recency, dense_query=dense_query))

    def close(self) -> None:
        """Close every member (each one, even when an earlier one raises)."""
        errors = []
        for b in self.backends:
            try:
                b.close()
            except Exception as exc:  # noqa: BLE001 - close the rest, then report
                errors.append(exc)
        if errors:
            raise errors[0]

    def __repr__(self) -> str:
        return f"FanOut({', '.join(getattr(b, 'name', '?') for b in self.backends)})"


__all__ = ["FAILED", "LATE", "ON_TURN_LOOP", "OK", "BackendRun", "FanOut", "FanOutResult", "Route", "afan_out",
           "fan_out", "route_queries", "run_sync"]
