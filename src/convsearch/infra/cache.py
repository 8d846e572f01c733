"""TTL caches behind one small protocol: namespaces, per-entry time to live, sync and async twins.

``TTLCache`` is the contract (``get(ns, key)``, ``set(ns, key, value, ttl_s=None)``, ``delete``, ``clear(ns)``,
``aget``/``aset``/``adelete`` for caches that live in another process, e.g. Redis). A namespace separates what
must never answer for another: a tenant, an agent, a kind of value (``"acme:rewrite"``, ``"acme:web:tavily"``).

``MemoryCache`` is the in-process implementation: thread-safe, bounded (least recently used entries go first),
a default TTL plus a per-entry one, and hit/miss/eviction counters (``stats()``, per namespace too).
``NullCache`` stores nothing (the double for "always call"). ``cache_key`` makes keys from everything that
decides a value, so a changed prompt, model or window is a miss, never a stale hit.

``None`` means "not there": values must not be ``None``.

>>> c = MemoryCache(maxsize=2, ttl_s=60)
>>> c.set("acme:rewrite", "k", "AnySearch 的价格")
>>> c.get("acme:rewrite", "k"), c.get("beta:rewrite", "k")
('AnySearch 的价格', None)
>>> c.stats().hits, c.stats().misses
(1, 1)
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..config import Section
from ..errors import ConfigError
from ..secret import Secret


@dataclass(frozen=True, slots=True)
class CacheSettings(Section):
    """The caches' settings: ``size`` and ``ttl_s`` of the server's response cache (per tenant), and ``url``, a
    Redis that the web cache and the outbound limiter share across workers (a Secret: it may hold a password)."""

    name = "cache"
    prefix = "CONVSEARCH_CACHE_"
    url: Secret | None = field(default=None, repr=False)
    size: int = 1024
    ttl_s: float = 60.0

    def check(self) -> None:
        self._require("ttl_s")
        self._require("size", positive=False)
        if self.url and not self.url.reveal().startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError("CONVSEARCH_CACHE_URL must be a redis://, rediss:// or unix:// URL")


@runtime_checkable
class TTLCache(Protocol):
    """A namespaced key → value store with a time to live; safe to share between threads."""

    def get(self, ns: str, key: str) -> Any | None: ...

    def set(self, ns: str, key: str, value: Any, ttl_s: float | None = None) -> None: ...

    def delete(self, ns: str, key: str) -> None: ...

    def clear(self, ns: str | None = None) -> None: ...

    async def aget(self, ns: str, key: str) -> Any | None: ...

    async def aset(self, ns: str, key: str, value: Any, ttl_s: float | None = None) -> None: ...

    async def adelete(self, ns: str, key: str) -> None: ...


def cache_key(kind: str, *, model: str, prompt: str, turns: Iterable[tuple[str, str]], query: str,
              topic: str | None = None, extra: Any = None) -> str:
    """A SHA-256 digest of everything that decides an LLM's answer (``kind`` separates rewrites, variants,
    HyDE); exactly what would be sent, so any change is a miss."""
    payload = json.dumps([kind, model, prompt, [list(t) for t in turns], query, topic or "", extra],
                         ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters since the cache was made: look-ups that hit / missed, entries dropped for room / for age."""

    hits: int = 0
    misses: int = 0
    evictions: int = 0
    expirations: int = 0
    size: int = 0

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class MemoryCache:
    """``TTLCache`` in this process: one LRU over every namespace, bounded by ``maxsize`` entries.

    ``ttl_s`` is the default time to live (None: until evicted); ``set(..., ttl_s=)`` overrides it per entry,
    and a TTL ≤ 0 stores nothing. ``clock`` (monotonic seconds) is injectable for tests. ``maxsize=0``
    turns the cache off.
    """

    def __init__(self, maxsize: int = 1024, *, ttl_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if maxsize < 0:
            raise ValueError("maxsize must not be negative")
        self.maxsize = maxsize
        self.ttl_s = ttl_s
        self._clock = clock
        self._data: OrderedDict[tuple[str, str], tuple[float, Any]] = OrderedDict()  # → (expires at, value)
        self._lock = threading.Lock()
        self._counts: dict[str, list[int]] = {}  # ns → [hits, misses, evictions, expirations]

    def _count(self, ns: str, i: int) -> None:
        c = self._counts.get(ns)
        if c is None:
            c = self._counts[ns] = [0, 0, 0, 0]
        c[i] += 1

    def get(self, ns: str, key: str) -> Any | None:
        with self._lock:
            item = self._data.get((ns, key))
            if item is not None and item[0] <= self._clock():
                del self._data[(ns, key)]
                self._count(ns, 3)
                item = None
            if item is None:
                self._count(ns, 1)
                return None
            self._data.move_to_end((ns, key))
            self._count(ns, 0)
            return item[1]

    def set(self, ns: str, key: str, value: Any, ttl_s: float | None = None) -> None:
        ttl = self.ttl_s if ttl_s is None else ttl_s
        if self.maxsize == 0 or value is None or (ttl is not None and ttl <= 0):
            return
        expires = float("inf") if ttl is None else self._clock() + ttl
        with self._lock:
            self._data[(ns, key)] = (expires, value)
            self._data.move_to_end((ns, key))
            while len(self._data) > self.maxsize:
                (old_ns, _), _ = self._data.popitem(last=False)
                self._count(old_ns, 2)

    def delete(self, ns: str, key: str) -> None:
        with self._lock:
            self._data.pop((ns, key), None)

    def clear(self, ns: str | None = None) -> None:
        """Drop every entry of ``ns`` (every entry when None); counters stay."""
        with self._lock:
            if ns is None:
                self._data.clear()
                return
            for k in [k for k in self._data if k[0] == ns]:
                del self._data[k]

    async def aget(self, ns: str, key: str) -> Any | None:
        return self.get(ns, key)  # in-process: nothing to wait for

    async def aset(self, ns: str, key: str, value: Any, ttl_s: float | None = None) -> None:
        self.set(ns, key, value, ttl_s)

    async def adelete(self, ns: str, key: str) -> None:
        self.delete(ns, key)

    def stats(self, ns: str | None = None) -> CacheStats:
        """Counters of one namespace, or of all of them."""
        with self._lock:
            rows = [self._counts.get(ns, [0, 0, 0, 0])] if ns is not None else list(self._counts.values())
            size = len(self._data) if ns is None else sum(1 for k in self._data if k[0] == ns)
        hits, misses, evictions, expirations = (sum(r[i] for r in rows) for i in range(4))
        return CacheStats(hits, misses, evictions, expirations, size)

    @property
    def hits(self) -> int:
        return self.stats().hits

    @property
    def misses(self) -> int:
        return self.stats().misses

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"MemoryCache(maxsize={self.maxsize}, ttl_s={self.ttl_s}, size={len(self)})"


class NullCache:
    """A ``TTLCache`` that stores nothing."""

    def get(self, ns: str, key: str) -> Any | None:
        return None

    def set(self, ns: str, key: str, value: Any, ttl_s: float | None = None) -> None:
        pass

    def delete(self, ns: str, key: str) -> None:
        pass

    def clear(self, ns: str | None = None) -> None:
        pass

    async def aget(self, ns: str, key: str) -> Any | None:
        return None

    async def aset(self, ns: str, key: str, value: Any, ttl_s: float | None = None) -> None:
        pass

    async def adelete(self, ns: str, key: str) -> None:
        pass


__all__ = ["CacheStats", "MemoryCache", "NullCache", "TTLCache", "cache_key"]
