"""The token-bucket RateLimiter: bursts, refill, Retry-After, per-key buckets and overrides."""

from __future__ import annotations

import pytest

from convsearch.infra.ratelimit import Allowance, Rate, RateLimiter, TokenBucketLimiter, Unlimited


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_burst_then_refused_with_retry_after() -> None:
    clock = Clock()
    lim = TokenBucketLimiter(rate=2, burst=3, clock=clock)
    assert [lim.acquire("a").allowed for _ in range(3)] == [True, True, True]
    refused = lim.acquire("a")
    assert not refused.allowed
    assert refused.retry_after == pytest.approx(0.5)
    assert refused.retry_after_header == "1"  # whole seconds, rounded up


def test_refills_at_the_rate_and_caps_at_burst() -> None:
    clock = Clock()
    lim = TokenBucketLimiter(rate=2, burst=3, clock=clock)
    for _ in range(3):
        lim.acquire("a")
    clock.t += 0.5
    assert lim.acquire("a").allowed
    assert not lim.acquire("a").allowed
    clock.t += 100  # a long idle time refills to the burst, not beyond
    assert [lim.acquire("a").allowed for _ in range(4)] == [True, True, True, False]


def test_keys_have_their_own_buckets_and_overrides() -> None:
    clock = Clock()
    lim = TokenBucketLimiter(rate=1, burst=1, rates={"big": Rate(100, 50), "free": Rate(0, 1)}, clock=clock)
    assert lim.acquire("a").allowed and not lim.acquire("a").allowed
    assert lim.acquire("b").allowed  # a's empty bucket is not b's
    assert all(lim.acquire("big").allowed for _ in range(50))
    assert all(lim.acquire("free").allowed for _ in range(1000))  # rate 0: unlimited


def test_retry_after_header_is_at_least_one_second() -> None:
    assert Allowance(False, 0.001).retry_after_header == "1"
    assert Allowance(False, 2.2).retry_after_header == "3"


def test_protocol_and_async_twin() -> None:
    import asyncio

    for lim in (TokenBucketLimiter(1, 1), Unlimited()):
        assert isinstance(lim, RateLimiter)
        assert asyncio.run(lim.aacquire("k")).allowed


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError):
        TokenBucketLimiter(rate=-1, burst=1)
    with pytest.raises(ValueError):
        TokenBucketLimiter(rate=1, burst=0)
