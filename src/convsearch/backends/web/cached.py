"""The web result cache in tiers, and failover across providers: the two wrappers the ``web`` backend is made of.

``CachedWeb(backend, cache)``: key = tenant + agent (``infra.turn.scope()``) + the provider set + the normalised
query (NFKC, case, white space) + recency + top_k + filters; TTL by tier:

- **hot** (the same key looked up ≥ ``hot_after`` = 3 times in the last hour): 30 min;
- **ordinary**: 10 min;
- **time-sensitive** queries (``timesense.time_sensitive``: 今天, 天气, latest, price …): never cached.

Concurrent look-ups of one key share one upstream call (single flight): 50 users asking the same thing at the
same second cost one call, not 50; the others say ``cache hit (in flight)``. Errors and empty answers are never
cached (a provider's bad minute must not become ten minutes of nothing); a
partial answer is an error here (the wrapped backend raised). Each look-up says ``cache hit`` / ``cache miss`` /
``cache skipped`` in the trace notes and is counted in ``infra.ratelimit.STATS`` (→ /metrics). The cache is any
``TTLCache`` (``MemoryCache`` in-process, ``RedisCache`` shared by workers); the look-up counts live in a
``SeenCounter`` beside it (memory, or a Redis sorted set).

``Failover([a, b, …])``: searches ``a``; when it fails (breaker open, rate limit queue full, unreachable, 5xx
after retries), ``b``, and so on; the trace says ``failover a → b: why``. All failing is a BackendError naming
each.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, Protocol

from ...errors import BackendError, ConvsearchError
from ...infra import turn
from ...infra.cache import TTLCache
from ...infra.ratelimit import STATS
from ...timesense import time_sensitive
from ...types import Hit
from ..base import Capabilities, Filters, Recency, SearchBackend

HOT_TTL_S = 30 * 60
TTL_S = 10 * 60
HOT_AFTER = 3
HOT_WINDOW_S = 3600.0


class SeenCounter(Protocol):
    """``seen(ns, key)``: record one look-up now and return how many there were in the last ``window_s``."""

    def seen(self, ns: str, key: str, window_s: float) -> int: ...


class MemorySeenCounter:
    """Look-up times per key in this process (bounded: the oldest keys go first past ``maxsize``)."""

    def __init__(self, maxsize: int = 10_000, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.maxsize = maxsize
        self._clock = clock
        self._lock = threading.Lock()
        self._log: dict[tuple[str, str], deque[float]] = {}

    def seen(self, ns: str, key: str, window_s: float) -> int:
        now = self._clock()
        with self._lock:
            q = self._log.pop((ns, key), None) or deque()
            q.append(now)
            while q and q[0] <= now - window_s:
                q.popleft()
            self._log[(ns, key)] = q  # re-inserted: dict order is recency of use
            while len(self._log) > self.maxsize:
                self._log.pop(next(iter(self._log)))
            return len(q)


def normalise_query(q: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", q).lower().split())


def _to_json(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    return [asdict(h) for h in hits]


def _from_json(rows: Any) -> list[Hit]:
    return [Hit(**{**r, "metadata": {**r.get("metadata", {}), "cache": "hit"}}) for r in rows]


class CachedWeb:
    """A web backend (or a Failover) behind the tiered cache. Same contract as the wrapped backend."""

    def __init__(self, backend: SearchBackend, cache: TTLCache, *, seen: SeenCounter | None = None,
                 ttl_s: float = TTL_S, hot_ttl_s: float = HOT_TTL_S, hot_after: int = HOT_AFTER,
                 hot_window_s: float = HOT_WINDOW_S) -> None:
        self.backend = backend
        self.cache = cache
        self.seen = seen or MemorySeenCounter()
        self.ttl_s, self.hot_ttl_s, self.hot_after, self.hot_window_s = ttl_s, hot_ttl_s, hot_after, hot_window_s
        self.name = getattr(backend, "name", "web")
        self.capabilities: Capabilities = backend.capabilities
        self.providers = tuple(getattr(backend, "providers", (self.name,)))
        self._lock = threading.Lock()
        self._flights: dict[tuple[str, str], Any] = {}  # key → (loop, Future) | (Event, holder)

    def _key(self, query: str, top_k: int, filters: Filters | None, recency: Recency | None) -> tuple[str, str]:
        tenant, agent = turn.scope()
        ns = f"{tenant}:{agent}:web"
        f = Filters.of(filters)
        raw = json.dumps([sorted(self.providers), normalise_query(query), recency.value if recency else None,
                          top_k, f.fields() if f else {}], ensure_ascii=False, separators=(",", ":"))
        return ns, hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def _plan(self, query: str, top_k: int, filters: Filters | None,
              recency: Recency | str | None) -> tuple[str, str, float] | None:
        """(ns, key, ttl) for a cacheable search, None for a time-sensitive one (said in the trace)."""
        if time_sensitive(query) is not None:
            STATS.count("cache", "skipped")
            turn.note(f"cache skipped ({self.name}): time-sensitive query")
            return None
        ns, key = self._key(query, top_k, filters, Recency.parse(recency))
        n = self.seen.seen(ns, key, self.hot_window_s)
        ttl = self.hot_ttl_s if n >= self.hot_after else self.ttl_s
        return ns, key, ttl

    def _hit(self, ns: str, value: Any) -> list[Hit]:
        STATS.count("cache", "hit")
        turn.note(f"cache hit ({self.name})")
        return _from_json(value)

    def _miss(self, ttl: float) -> None:
        STATS.count("cache", "miss")
        turn.note(f"cache miss ({self.name}); stored for {ttl / 60:g} min" if ttl
                  else f"cache miss ({self.name})")

    def _shared(self, rows: list[dict[str, Any]]) -> list[Hit]:
        STATS.count("cache", "in_flight")
        turn.note(f"cache hit ({self.name}, in flight)")
        return _from_json(rows)

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        plan = self._plan(query, top_k, filters, recency)
        if plan is None:
            return self.backend.search(query, top_k=top_k, filters=filters, recency=recency, dense_query=dense_query)
        ns, key, ttl = plan
        value = self.cache.get(ns, key)
        if value is not None:
            return self._hit(ns, value)
        with self._lock:
            flight: Any = self._flights.get((ns, key))
            leader = flight is None or not isinstance(flight[0], threading.Event)
            if leader:
                flight = (threading.Event(), {})
                self._flights[(ns, key)] = flight
        event, holder = flight
        if not leader:
            event.wait(turn.deadline().remaining() if turn.deadline().remaining() != float("inf") else None)
            if "rows" in holder:
                return self._shared(holder["rows"])
            # the leader failed or we ran out of patience: search ourselves (errors are never shared)
            return self.backend.search(query, top_k=top_k, filters=filters, recency=recency)
        try:
            hits = self.backend.search(query, top_k=top_k, filters=filters, recency=recency, dense_query=dense_query)
            self._miss(ttl if hits else 0)
            rows = _to_json(hits)
            if hits:
                self.cache.set(ns, key, rows, ttl_s=ttl)
                holder["rows"] = rows
            return hits
        finally:
            with self._lock:
                self._flights.pop((ns, key), None)
            event.set()

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        import asyncio

        plan = self._plan(query, top_k, filters, recency)
        if plan is None:
            return await self.backend.asearch(query, top_k=top_k, filters=filters, recency=recency,
                                              dense_query=dense_query)
        ns, key, ttl = plan
        value = await self.cache.aget(ns, key)
        if value is not None:
            return self._hit(ns, value)
        loop = asyncio.get_running_loop()
        with self._lock:
            flight: Any = self._flights.get((ns, key))
            leader = flight is None or flight[0] is not loop
            if leader:
                flight = (loop, loop.create_future())
                self._flights[(ns, key)] = flight
        fut = flight[1]
        if not leader:
            try:
                rows = await asyncio.shield(fut)
            except Exception:  # noqa: BLE001 — the leader's error is its own; search ourselves
                rows = None
            if rows:
                return self._shared(rows)
            return await self.backend.asearch(query, top_k=top_k, filters=filters, recency=recency)
        try:
            hits = await self.backend.asearch(query, top_k=top_k, filters=filters, recency=recency,
                                              dense_query=dense_query)
            self._miss(ttl if hits else 0)
            rows = _to_json(hits)
            if hits:
                await self.cache.aset(ns, key, rows, ttl_s=ttl)
            if not fut.done():
                fut.set_result(rows)
            return hits
        except BaseException:
            if not fut.done():
                fut.set_result(None)
            raise
        finally:
            with self._lock:
                if self._flights.get((ns, key), (None, None))[1] is fut:
                    self._flights.pop((ns, key), None)

    def close(self) -> None:
        self.backend.close()

    def __repr__(self) -> str:
        return f"CachedWeb({self.backend!r})"


class Failover:
    """Several web backends in order of preference; the next one is tried only when the one before fails."""

    def __init__(self, backends: Sequence[SearchBackend]) -> None:
        if not backends:
            raise ConvsearchError("a Failover needs at least one backend")
        self.backends = tuple(backends)
        self.providers = tuple(getattr(b, "name", "?") for b in self.backends)
        self.name = "web" if len(self.backends) > 1 else self.providers[0]
        caps = [b.capabilities for b in self.backends]
        # a web adapter takes any window (natively, via a wider one, or by date after: WebBackend.native_recency);
        # with other members, only what all of them apply natively (the shared wrapper does the rest after)
        rec: frozenset[Recency]
        if all(hasattr(b, "native_recency") for b in self.backends):
            rec = frozenset(r for r in Recency if r is not Recency.NO_LIMIT)
        else:
            rec = frozenset.intersection(*(c.recency for c in caps))
        filt = frozenset.intersection(*(c.filters for c in caps))
        self.capabilities = Capabilities(remote=True, web=True, paid=any(c.paid for c in caps), recency=rec,
                                         filters=filt)

    def _failed(self, i: int, exc: Exception, errors: list[str]) -> None:
        errors.append(f"{self.providers[i]}: {exc}")
        if i + 1 < len(self.backends):
            STATS.count(self.providers[i], "failover")
            turn.note(f"failover {self.providers[i]} → {self.providers[i + 1]}: {type(exc).__name__}")

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        errors: list[str] = []
        for i, b in enumerate(self.backends):
            try:
                return b.search(query, top_k=top_k, filters=filters, recency=recency)
            except BackendError as exc:
                self._failed(i, exc, errors)
        raise BackendError("every web provider failed: " + "; ".join(errors))

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        errors: list[str] = []
        for i, b in enumerate(self.backends):
            try:
                return await b.asearch(query, top_k=top_k, filters=filters, recency=recency)
            except BackendError as exc:
                self._failed(i, exc, errors)
        raise BackendError("every web provider failed: " + "; ".join(errors))

    def close(self) -> None:
        for b in self.backends:
            b.close()

    def __repr__(self) -> str:
        return f"Failover({', '.join(self.providers)})"


__all__ = ["HOT_AFTER", "HOT_TTL_S", "TTL_S", "CachedWeb", "Failover", "MemorySeenCounter", "SeenCounter",
           "normalise_query"]
