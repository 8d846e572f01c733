"""Moved to ``convsearch.infra.cache`` (``TTLCache``, ``MemoryCache``, ``NullCache``, ``cache_key``).

What stays here is a shim for the callers not moved yet (``rewrite/__init__.py``, ``server/service.py``):
``LRUCache`` and ``NoCache`` are the new caches that also answer the old one-namespace calls ``get(key)`` /
``put(key, value)``. New code imports from ``convsearch.infra.cache``; this module goes once nothing uses it.
"""

from __future__ import annotations

from typing import Any

from ..infra.cache import MemoryCache, NullCache, TTLCache, cache_key

Cache = TTLCache
_LEGACY_NS = ""  # the namespace of the old one-namespace calls


class LRUCache(MemoryCache):
    """``MemoryCache(maxsize, ttl_s=)`` that also takes the old ``get(key)`` / ``put(key, value)``."""

    def __init__(self, maxsize: int = 1024, ttl_s: float | None = None) -> None:
        super().__init__(maxsize, ttl_s=ttl_s)

    def get(self, ns: str, key: str | None = None) -> Any | None:
        return super().get(_LEGACY_NS, ns) if key is None else super().get(ns, key)

    def put(self, key: str, value: Any) -> None:
        self.set(_LEGACY_NS, key, value)


class NoCache(NullCache):
    """``NullCache`` that also takes the old ``get(key)`` / ``put(key, value)``."""

    def get(self, ns: str, key: str | None = None) -> Any | None:
        return None

    def put(self, key: str, value: Any) -> None:
        pass


__all__ = ["Cache", "LRUCache", "NoCache", "cache_key"]
