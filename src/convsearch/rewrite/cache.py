"""Rewrite cache: the same (history window, query, topic, model, prompt) gives the same rewrite without a call.

Keys are SHA-256 digests of exactly what the LLM would be sent, so a changed prompt, model or window is a
miss, never a stale hit. Only accepted outputs are stored: a failure is retried on the next turn.

Example::

    cache = LRUCache(maxsize=1024)
    key = cache_key("rewrite", model="qwen2.5", prompt=system, turns=[("user", "AnySearch 支持哪些检索方式？")],
                    query="价格呢？")
    cache.get(key)   # None, then whatever was put
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Cache(Protocol):
    """A small key → value store; implementations must be safe to share between threads."""

    def get(self, key: str) -> Any | None: ...

    def put(self, key: str, value: Any) -> None: ...


def cache_key(kind: str, *, model: str, prompt: str, turns: Iterable[tuple[str, str]], query: str,
              topic: str | None = None, extra: Any = None) -> str:
    """A digest of everything that decides the LLM's answer (``kind`` separates rewrites, variants, HyDE)."""
    payload = json.dumps([kind, model, prompt, [list(t) for t in turns], query, topic or "", extra],
                         ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class LRUCache:
    """Thread-safe LRU with an optional time to live (seconds); ``hits``/``misses`` for the trace and benches."""

    def __init__(self, maxsize: int = 1024, ttl_s: float | None = None) -> None:
        self.maxsize = maxsize
        self.ttl_s = ttl_s
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any | None:
        with self._lock:
            item = self._data.get(key)
            if item is None or (self.ttl_s is not None and time.monotonic() - item[0] > self.ttl_s):
                if item is not None:
                    del self._data[key]
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return item[1]

    def put(self, key: str, value: Any) -> None:
        if self.maxsize <= 0:
            return
        with self._lock:
            self._data[key] = (time.monotonic(), value)
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class NoCache:
    """Stores nothing (the double for 'always call')."""

    def get(self, key: str) -> Any | None:
        return None

    def put(self, key: str, value: Any) -> None:
        pass


__all__ = ["Cache", "LRUCache", "NoCache", "cache_key"]
