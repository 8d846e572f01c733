"""Request rate limits: inbound (per tenant: ``RateLimiter``, a token bucket) and outbound (per upstream key:
``OutboundLimiter``, a sliding window with a bounded wait, key rotation, 429 cool-downs, and a circuit breaker).

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
import random
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import QueueTimeout


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


# --- outbound: calls to paid upstream APIs (web search providers) -----------------------------------------
#
# A provider allows ``limit`` requests per ``window_s`` per key (e.g. 100/min). Refusing the 101st call of a
# burst would fail a user's turn although a slot frees up seconds later, so a call over the limit *waits* for
# the earliest free slot of any key, as long as that is within ``max_wait_s`` and the turn's deadline. The window
# is a sliding log of reserved slot times (each call reserves the slot it will start in, so concurrent callers
# queue behind each other instead of all waking at once). Keys rotate: the key with the earliest free slot wins,
# ties go to the least used. An upstream 429 cools that key until its Retry-After / X-RateLimit-Reset. The log
# lives in a ``WindowStore``: in memory (one process) or Redis (``RedisWindowStore``: workers share one budget).


@dataclass(frozen=True, slots=True)
class Slot:
    """A granted call: which key (``index``) and how long it waited for its slot (``queued_ms``)."""

    index: int
    queued_ms: float
    at: float
    member: str = ""


class WindowStore(Protocol):
    """Where the sliding-window logs and cool-downs live.

    ``reserve`` looks at ``keys`` and picks the one whose next free slot is earliest (ties: the least used). If
    that slot is now (``≤ now``), it logs the call under ``member`` and returns (index, now, True); otherwise it
    logs nothing and returns (index, slot, False): the caller waits until then and asks again. ``settle`` moves a
    logged call to the time its answer came back: the provider counted it when it arrived, somewhere between our
    send and its answer, so the answer's time is the safe end of its window."""

    def reserve(self, keys: Sequence[str], limit: int, window_s: float, now: float,
                member: str) -> tuple[int, float, bool]: ...

    def settle(self, key: str, member: str, at: float) -> None: ...

    def cool(self, key: str, until: float) -> None: ...


class MemoryWindowStore:
    """The window logs in this process (thread-safe): per key a time-sorted list of (time, member)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._log: dict[str, list[tuple[float, str]]] = {}
        self._cool: dict[str, float] = {}

    def reserve(self, keys: Sequence[str], limit: int, window_s: float, now: float,
                member: str = "") -> tuple[int, float, bool]:
        import bisect

        with self._lock:
            best: tuple[float, int, int] | None = None
            for i, k in enumerate(keys):
                q = self._log.setdefault(k, [])
                cut = bisect.bisect_right(q, (now - window_s, "\uffff"))
                if cut:
                    del q[:cut]
                slot = max(now, self._cool.get(k, 0.0))
                if len(q) >= limit:
                    slot = max(slot, q[len(q) - limit][0] + window_s)
                cand = (slot, len(q), i)
                if best is None or cand < best:
                    best = cand
            assert best is not None
            slot, _, i = best
            if slot > now:
                return i, slot, False
            bisect.insort(self._log[keys[i]], (now, member))
            return i, now, True

    def settle(self, key: str, member: str, at: float) -> None:
        import bisect

        with self._lock:
            q = self._log.get(key, [])
            for j in range(len(q) - 1, -1, -1):
                if q[j][1] == member:
                    if at > q[j][0]:
                        del q[j]
                        bisect.insort(q, (at, member))
                    return

    def cool(self, key: str, until: float) -> None:
        with self._lock:
            self._cool[key] = max(self._cool.get(key, 0.0), until)


class CircuitBreaker:
    """Per provider: opens after ``failures`` consecutive failed calls; after ``cooldown_s`` one probe call is let
    through (half-open); its success closes the breaker, its failure opens it again."""

    def __init__(self, failures: int = 5, cooldown_s: float = 30.0, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.failures = failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._count = 0
        self._opened_at: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        """closed | open | half-open"""
        with self._lock:
            return self._state()

    def _state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "half-open" if self._clock() - self._opened_at >= self.cooldown_s else "open"

    def allow(self) -> tuple[bool, str]:
        """Whether a call may start, and the state it starts in (a half-open breaker lets one probe through)."""
        with self._lock:
            st = self._state()
            if st == "closed":
                return True, st
            if st == "half-open" and not self._probing:
                self._probing = True
                return True, st
            return False, st

    def success(self) -> None:
        with self._lock:
            self._count, self._opened_at, self._probing = 0, None, False

    def failure(self) -> None:
        with self._lock:
            self._count += 1
            if self._probing or self._count >= self.failures:
                self._opened_at = self._clock()
            self._probing = False

    def release(self) -> None:
        """A probe that ended neither way (a 429, a bad request): let another probe through."""
        with self._lock:
            self._probing = False


def backoff_s(attempt: int, *, base_s: float = 0.1, cap_s: float = 2.0, rng: random.Random | None = None) -> float:
    """Jittered exponential backoff before retry ``attempt`` (0-based): base·2^attempt, capped, times a random
    factor in [0.5, 1.5) so that callers failed together do not retry together."""
    r: float = rng.random() if rng is not None else random.random()
    return float(min(cap_s, base_s * (2 ** attempt)) * (0.5 + r))


class OutboundLimiter:
    """``limit`` calls per ``window_s`` for each of ``n_keys`` keys of one provider; ``acquire`` waits (sync,
    ``aacquire`` async) for the earliest free slot of any key, up to ``max_wait_s`` and the deadline, else raises
    QueueTimeout. ``cool(index, seconds)`` after an upstream 429. ``clock`` must be wall time when the store is
    shared between processes (Redis).

    ``margin_s`` widens our window a little beyond the provider's (default 2% + 20 ms, at most 0.5 s): a slot is
    reserved before the request travels, and a request that took 5 ms longer than the one a window earlier would
    otherwise land inside the provider's window and earn a 429."""

    def __init__(self, provider: str, n_keys: int, limit: int, window_s: float, *, max_wait_s: float = 5.0,
                 store: WindowStore | None = None, clock: Callable[[], float] = time.time,
                 namespace: str = "convsearch:rl", margin_s: float | None = None) -> None:
        if n_keys < 1 or limit < 1 or window_s <= 0:
            raise ValueError("n_keys and limit must be ≥ 1 and window_s > 0")
        self.provider = provider
        self.limit = limit
        self.window_s = window_s
        self.margin_s = min(0.5, 0.02 * window_s + 0.02) if margin_s is None else margin_s
        self.max_wait_s = max_wait_s
        self.store: WindowStore = store or MemoryWindowStore()
        self._clock = clock
        # keys are named by provider and index: the key values themselves never reach the store
        self.keys = [f"{namespace}:{provider}:{i}" for i in range(n_keys)]

    def _try(self, member: str) -> tuple[int, float, bool, float]:
        now = self._clock()
        i, at, granted = self.store.reserve(self.keys, self.limit, self.window_s + self.margin_s, now, member)
        return i, at, granted, now

    def _refuse(self, wait: float, allowed: float) -> QueueTimeout:
        STATS.count(self.provider, "queue_timeout")
        return QueueTimeout(f"{self.provider}: every key is at its rate limit ({self.limit} per {self.window_s:g} s); "
                            f"the next free slot is in {wait:.2f} s, more than the {allowed:.2f} s this call may "
                            "wait", wait, provider=self.provider)

    def _granted(self, i: int, at: float, member: str, waited: float) -> Slot:
        STATS.count(self.provider, "queued" if waited > 0 else "granted")
        STATS.observe_wait(self.provider, waited)
        return Slot(i, round(waited * 1000, 1), at, member)

    def _attempt(self, member: str, waited: float, remaining_s: float) -> tuple[Slot | None, float]:
        """One attempt, no sleeping, by a caller that has already waited ``waited`` s: (Slot, 0) when a key is
        free now, else (None, seconds until one may be); QueueTimeout when that is further than what is left of
        the allowed wait. A grant on the first attempt (``waited == 0``) counts as granted, a later one as queued."""
        i, at, granted, now = self._try(member)
        if granted:
            return self._granted(i, at, member, waited), 0.0
        allowed = max(0.0, min(self.max_wait_s, remaining_s) - waited)
        if at - now > allowed:
            raise self._refuse(at - now, allowed)
        return None, at - now

    def _reserve(self, remaining_s: float) -> tuple[Slot | None, float]:
        """One first attempt (no sleeping), for tests and benchmarks of the window."""
        return self._attempt(uuid.uuid4().hex, 0.0, remaining_s)

    def acquire(self, remaining_s: float = float("inf")) -> Slot:
        """Wait (sleeping) for a free slot; waiters ask again when the slot they were told of comes (with a few
        ms of jitter so that they do not all ask at once), so the log only ever holds calls really sent."""
        start, member, waited = time.monotonic(), uuid.uuid4().hex, 0.0
        while True:
            slot, wait = self._attempt(member, waited, remaining_s)
            if slot is not None:
                return slot
            time.sleep(wait + random.random() * 0.005)
            waited = time.monotonic() - start

    async def aacquire(self, remaining_s: float = float("inf")) -> Slot:
        """The async twin of :meth:`acquire`."""
        import asyncio

        start, member, waited = time.monotonic(), uuid.uuid4().hex, 0.0
        while True:
            slot, wait = self._attempt(member, waited, remaining_s)
            if slot is not None:
                return slot
            await asyncio.sleep(wait + random.random() * 0.005)
            waited = time.monotonic() - start

    def settle(self, slot: Slot) -> None:
        """The call of ``slot`` got its answer: log it at this time (see ``WindowStore.settle``)."""
        self.store.settle(self.keys[slot.index], slot.member, self._clock())

    def cool(self, index: int, seconds: float) -> None:
        self.store.cool(self.keys[index], self._clock() + max(0.0, seconds))
        STATS.count(self.provider, "cooled")


class OutboundStats:
    """Counters of the outbound decisions (by provider and kind) and the queue waits, for ``/metrics``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: dict[tuple[str, str], int] = {}
        self.wait_sum: dict[str, float] = {}
        self.wait_n: dict[str, int] = {}

    def count(self, provider: str, kind: str, n: int = 1) -> None:
        with self._lock:
            self.counts[(provider, kind)] = self.counts.get((provider, kind), 0) + n

    def observe_wait(self, provider: str, wait_s: float) -> None:
        with self._lock:
            self.wait_sum[provider] = self.wait_sum.get(provider, 0.0) + wait_s
            self.wait_n[provider] = self.wait_n.get(provider, 0) + 1

    def snapshot(self) -> tuple[dict[tuple[str, str], int], dict[str, tuple[float, int]]]:
        with self._lock:
            return dict(self.counts), {p: (self.wait_sum[p], self.wait_n[p]) for p in self.wait_n}


STATS = OutboundStats()

__all__ += ["STATS", "CircuitBreaker", "MemoryWindowStore", "OutboundLimiter", "OutboundStats", "QueueTimeout",
            "Slot", "WindowStore", "backoff_s"]
