"""Per-key request rate limits: the ``RateLimiter`` contract and an in-memory token bucket.

A bucket holds up to ``burst`` tokens and refills at ``rate`` tokens per second; a request takes one. When
the bucket is empty the request is refused with the time until a token is back (the HTTP layer sends it as
``Retry-After``). The token bucket is the classic algorithm of network traffic shaping (Tanenbaum,
*Computer Networks*, §5.4); it allows short bursts and bounds the long-run rate.

>>> limiter = TokenBucketLimiter(rate=2, burst=2)
>>> [limiter.acquire("acme").allowed for _ in range(3)]
[True, True, False]
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Allowance:
    """A limiter's answer: ``allowed``, and when refused, ``retry_after`` seconds until it would be."""

    allowed: bool
    retry_after: float = 0.0
    remaining: float = 0.0

    @property
    def retry_after_header(self) -> str:
        """``Retry-After`` takes whole seconds: rounded up, at least 1."""
        return str(max(1, math.ceil(self.retry_after)))


@runtime_checkable
class RateLimiter(Protocol):
    """``acquire(key)`` spends one request of ``key``'s allowance (``aacquire``: the async twin, for limiters
    that keep their state in a remote store)."""

    def acquire(self, key: str, *, cost: float = 1.0) -> Allowance: ...

    async def aacquire(self, key: str, *, cost: float = 1.0) -> Allowance: ...


@dataclass(frozen=True, slots=True)
class Rate:
    """``rate`` tokens per second (0: unlimited), at most ``burst`` at once."""

    rate: float
    burst: float

    @property
    def unlimited(self) -> bool:
        return self.rate <= 0


class TokenBucketLimiter:
    """Token buckets in memory, one per key, thread-safe; ``rates`` overrides the default ``Rate`` per key.

    ``clock`` is injectable (tests); idle full buckets are dropped, so memory is bounded by active keys.
    """

    def __init__(self, rate: float, burst: float, *, rates: dict[str, Rate] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if rate < 0 or burst <= 0:
            raise ValueError("rate must be ≥ 0 and burst > 0")
        self.default = Rate(rate, burst)
        self.rates = dict(rates or {})
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}  # key → (tokens, at)

    def rate_for(self, key: str) -> Rate:
        return self.rates.get(key, self.default)

    def acquire(self, key: str, *, cost: float = 1.0) -> Allowance:
        r = self.rate_for(key)
        if r.unlimited:
            return Allowance(True, 0.0, math.inf)
        with self._lock:
            now = self._clock()
            tokens, at = self._buckets.get(key, (r.burst, now))
            tokens = min(r.burst, tokens + (now - at) * r.rate)
            if tokens >= cost:
                tokens -= cost
                self._buckets[key] = (tokens, now)
                self._prune(now)
                return Allowance(True, 0.0, tokens)
            self._buckets[key] = (tokens, now)
            return Allowance(False, (cost - tokens) / r.rate, tokens)

    async def aacquire(self, key: str, *, cost: float = 1.0) -> Allowance:
        return self.acquire(key, cost=cost)

    def _prune(self, now: float) -> None:
        if len(self._buckets) < 4096:
            return
        for k, (tokens, at) in list(self._buckets.items()):
            r = self.rate_for(k)
            if tokens + (now - at) * r.rate >= r.burst:  # full again: same as a fresh bucket
                del self._buckets[k]


class Unlimited:
    """A RateLimiter that allows everything."""

    def acquire(self, key: str, *, cost: float = 1.0) -> Allowance:
        return Allowance(True, 0.0, math.inf)

    async def aacquire(self, key: str, *, cost: float = 1.0) -> Allowance:
        return self.acquire(key, cost=cost)


__all__ = ["Allowance", "Rate", "RateLimiter", "TokenBucketLimiter", "Unlimited"]
