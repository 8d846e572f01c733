"""What a backend cannot do natively, applied after its search by one shared wrapper, and said in the trace.

``search_applied(backend, query, filters=…, recency=…, dense_query=…)`` sends a backend only what its
``capabilities`` declare; the rest of the filters and the recency window are applied to its hits afterwards (it
is asked for more hits so that filtering rarely leaves the list short), and ``dense_query`` goes only to a
backend with a dense side. ``Applied.notes`` say, per option, ``natively``, ``after the search`` or ``not
applicable`` — never silently ignored.

>>> from convsearch.backends.base import InMemoryBackend
>>> r = search_applied(InMemoryBackend(), "x", recency=Recency.WEEK)
>>> r.notes
('recency week: natively',)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from ..types import Hit
from .base import Filters, Recency, SearchBackend, hit_date, takes_many

# How many more hits to ask for when some filtering happens after the search.
OVERFETCH = 4


@dataclass(frozen=True, slots=True)
class Plan:
    """What goes to the backend and what is applied after (built from its capabilities; no I/O)."""

    native_filters: Filters | None
    after_filters: Filters | None
    native_recency: Recency | None
    after_since: date | None
    dense_query: str | None
    fetch_k: int
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Applied:
    """A backend's hits with every requested option honoured, and how each was honoured."""

    hits: tuple[Hit, ...]
    notes: tuple[str, ...] = ()


def plan_search(backend: SearchBackend, *, top_k: int, filters: Filters | dict[str, Any] | None = None,
                recency: Recency | str | None = None, dense_query: str | None = None,
                today: date | None = None) -> Plan:
    """Split the requested options into what ``backend`` applies natively and what is applied after."""
    caps = backend.capabilities
    f = Filters.of(filters)
    rec = Recency.parse(recency)
    notes: list[str] = []
    native: dict[str, str] = {}
    after: dict[str, str] = {}
    for k, v in (f.fields() if f else {}).items():
        if k in caps.filters:
            native[k] = v
            notes.append(f"filter {k}: natively")
        else:
            after[k] = v
            notes.append(f"filter {k}: after the search")
    native_rec: Recency | None = None
    after_since: date | None = None
    if rec is not None and rec is not Recency.NO_LIMIT:
        # A backend counts its window back from its own day (``backend.today`` when it has one, else the real
        # date); a caller's other ``today`` (a replayed session) is honoured by applying the window after.
        real_today = today is None or today == (getattr(backend, "today", None) or date.today())
        wider = _nearest_wider(rec, caps.recency) if real_today else None
        if rec in caps.recency and real_today:
            native_rec = rec
            notes.append(f"recency {rec.value}: natively")
        elif wider is not None:  # e.g. SearXNG has no week: ask for a month, keep the week after
            native_rec, after_since = wider, rec.since(today or date.today())
            notes.append(f"recency {rec.value}: after the search")
            notes.append(f"recency {rec.value}: {wider.value} natively first (the nearest wider window)")
        else:
            after_since = rec.since(today or date.today())
            notes.append(f"recency {rec.value}: after the search")
    dq = None
    if dense_query:
        if caps.dense:
            dq = dense_query
            notes.append("dense query: natively")
        else:
            notes.append("dense query: not applicable (no dense side)")
    fetch_k = top_k * OVERFETCH if (after or after_since) else top_k
    return Plan(Filters.of(native), Filters.of(after), native_rec, after_since, dq, fetch_k, tuple(notes))


def _nearest_wider(rec: Recency, native: frozenset[Recency]) -> Recency | None:
    """The narrowest window the backend applies natively that is wider than ``rec`` (None if it has none)."""
    wider = [r for r in native if r.days is not None and rec.days is not None and r.days > rec.days]
    return min(wider, key=lambda r: r.days or 0) if wider else None


def apply_after(hits: list[Hit], plan: Plan, top_k: int) -> tuple[Hit, ...]:
    """Keep the hits that pass what the backend could not apply; ranks renumbered 1..n."""
    if plan.after_filters is None and plan.after_since is None:
        return tuple(hits[:top_k])
    out: list[Hit] = []
    for h in hits:
        if plan.after_filters is not None and not plan.after_filters.matches(h):
            continue
        if plan.after_since is not None and ((d := hit_date(h)) is None or d < plan.after_since):
            continue
        out.append(h if h.rank == len(out) + 1 else Hit(h.id, h.title, h.text, h.score, h.url, h.date, h.source,
                                                        len(out) + 1, h.metadata))
        if len(out) >= top_k:
            break
    return tuple(out)


def search_applied(backend: SearchBackend, query: str, *, top_k: int = 10,
                   filters: Filters | dict[str, Any] | None = None, recency: Recency | str | None = None,
                   dense_query: str | None = None, today: date | None = None) -> Applied:
    """``backend.search`` with every filter, recency window and dense query honoured natively or after."""
    plan = plan_search(backend, top_k=top_k, filters=filters, recency=recency, dense_query=dense_query, today=today)
    hits = backend.search(query, top_k=plan.fetch_k, filters=plan.native_filters, recency=plan.native_recency,
                          dense_query=plan.dense_query)
    return Applied(apply_after(hits, plan, top_k), plan.notes)


async def asearch_applied(backend: SearchBackend, query: str, *, top_k: int = 10,
                          filters: Filters | dict[str, Any] | None = None, recency: Recency | str | None = None,
                          dense_query: str | None = None, today: date | None = None) -> Applied:
    """The async twin of :func:`search_applied` (``backend.asearch``)."""
    plan = plan_search(backend, top_k=top_k, filters=filters, recency=recency, dense_query=dense_query, today=today)
    hits = await backend.asearch(query, top_k=plan.fetch_k, filters=plan.native_filters,
                                 recency=plan.native_recency, dense_query=plan.dense_query)
    return Applied(apply_after(hits, plan, top_k), plan.notes)


def search_many_applied(backend: SearchBackend, queries: Sequence[str], *, top_k: int = 10,
                        filters: Filters | dict[str, Any] | None = None, recency: Recency | str | None = None,
                        dense_query: str | None = None, today: date | None = None) -> Applied:
    """Every query variant as ONE list, each document with its best score (``search_many`` semantics): one
    ``backend.search_many`` call when the backend offers it (``ManyQueryBackend``), else one ``search`` per
    query merged by ``fuse_max``. Options are honoured natively or after, as ``search_applied`` does."""
    from ..fuse import fuse_max

    plan = plan_search(backend, top_k=top_k, filters=filters, recency=recency, dense_query=dense_query, today=today)
    kw: dict[str, Any] = {"top_k": plan.fetch_k, "filters": plan.native_filters, "recency": plan.native_recency}
    if takes_many(backend):
        hits = backend.search_many(list(queries), dense_query=plan.dense_query, **kw)
    else:
        hits = fuse_max([backend.search(q, dense_query=plan.dense_query if i == 0 else None, **kw)
                         for i, q in enumerate(queries)], limit=plan.fetch_k)
    return Applied(apply_after(hits, plan, top_k), plan.notes)


async def asearch_many_applied(backend: SearchBackend, queries: Sequence[str], *, top_k: int = 10,
                               filters: Filters | dict[str, Any] | None = None, recency: Recency | str | None = None,
                               dense_query: str | None = None, today: date | None = None) -> Applied:
    """The async twin of :func:`search_many_applied` (``asearch_many`` / ``asearch``)."""
    from ..fuse import fuse_max

    plan = plan_search(backend, top_k=top_k, filters=filters, recency=recency, dense_query=dense_query, today=today)
    kw: dict[str, Any] = {"top_k": plan.fetch_k, "filters": plan.native_filters, "recency": plan.native_recency}
    if takes_many(backend):
        hits = await backend.asearch_many(list(queries), dense_query=plan.dense_query, **kw)
    else:
        lists = await asyncio.gather(*(backend.asearch(q, dense_query=plan.dense_query if i == 0 else None, **kw)
                                       for i, q in enumerate(queries)))
        hits = fuse_max(lists, limit=plan.fetch_k)
    return Applied(apply_after(hits, plan, top_k), plan.notes)


__all__ = ["OVERFETCH", "Applied", "Plan", "apply_after", "asearch_applied", "asearch_many_applied", "plan_search",
           "search_applied", "search_many_applied"]
