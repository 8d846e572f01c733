"""The outbound limiter (sliding window per key, bounded wait, rotation, cool-downs), the breaker, and the
parsing of rates and rate-limit headers. A fake clock: no sleeping."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest

from convsearch.backends.web._http import parse_rate, retry_after_s
from convsearch.errors import BackendError, ConfigError
from convsearch.infra.ratelimit import CircuitBreaker, MemoryWindowStore, OutboundLimiter, QueueTimeout, backoff_s


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def take(lim):
    """One attempt: the key index when granted now, else the seconds to wait (nothing logged)."""
    slot, wait = lim._reserve(float("inf"))
    return slot.index if slot is not None else round(wait, 3)


def test_sliding_window_says_when_the_next_slot_frees_up():
    clock = Clock()
    lim = OutboundLimiter("p", 1, limit=2, window_s=10, max_wait_s=30, clock=clock, margin_s=0)
    assert [take(lim), take(lim), take(lim)] == [0, 0, 10]  # the 3rd must wait for the 1st to leave the window
    clock.t += 4
    assert take(lim) == 6  # a waiting call logs nothing: the answer only counts down
    clock.t += 6
    assert [take(lim), take(lim)] == [0, 0.0]  # the 1st left... and the 2nd left at the same time
    assert take(lim) == 10


def test_keys_rotate_least_used_first_and_double_the_budget():
    clock = Clock()
    lim = OutboundLimiter("p", 2, limit=2, window_s=10, max_wait_s=30, clock=clock, margin_s=0)
    assert [take(lim) for _ in range(5)] == [0, 1, 0, 1, 10]


def test_wait_is_bounded_by_max_wait_and_by_the_deadline():
    clock = Clock()
    lim = OutboundLimiter("p", 1, limit=1, window_s=60, max_wait_s=5, clock=clock, margin_s=0)
    take(lim)
    with pytest.raises(QueueTimeout, match="next free slot is in 60.00 s") as e:
        lim._reserve(float("inf"))
    assert isinstance(e.value, BackendError)
    lim2 = OutboundLimiter("q", 1, limit=1, window_s=2, max_wait_s=5, clock=clock, margin_s=0)
    take(lim2)
    with pytest.raises(QueueTimeout):
        lim2._reserve(1.0)  # the deadline leaves 1 s, the slot is 2 s away
    assert lim2._reserve(3.0) == (None, 2)


def test_a_cooled_key_is_skipped_until_its_reset():
    clock = Clock()
    lim = OutboundLimiter("p", 2, limit=100, window_s=60, clock=clock, max_wait_s=60, margin_s=0)
    lim.cool(0, 30)
    assert {take(lim) for _ in range(3)} == {1}
    lim3 = OutboundLimiter("p1", 1, limit=100, window_s=60, clock=clock, max_wait_s=60, margin_s=0)
    lim3.cool(0, 7)
    assert take(lim3) == 7  # one key only: wait out its reset


def test_settle_moves_a_call_to_its_answer_time():
    clock = Clock()
    lim = OutboundLimiter("p", 1, limit=1, window_s=10, clock=clock, max_wait_s=60, margin_s=0)
    slot, _ = lim._reserve(float("inf"))
    clock.t += 3  # the answer took 3 s: the provider may have counted the call as late as that
    lim.settle(slot)
    assert take(lim) == 10


def test_shared_store_shares_the_budget():
    clock, store = Clock(), MemoryWindowStore()
    a = OutboundLimiter("p", 1, limit=1, window_s=10, store=store, clock=clock, max_wait_s=30, margin_s=0)
    b = OutboundLimiter("p", 1, limit=1, window_s=10, store=store, clock=clock, max_wait_s=30, margin_s=0)
    assert take(a) == 0 and take(b) == 10


def test_acquire_sleeps_until_a_slot_and_reports_the_wait():
    import asyncio
    import time

    lim = OutboundLimiter("sleepy", 1, limit=2, window_s=0.3, max_wait_s=2, margin_s=0)
    t = time.monotonic()
    slots = [lim.acquire() for _ in range(3)]
    assert time.monotonic() - t >= 0.29 and slots[2].queued_ms >= 290 and slots[0].queued_ms == 0

    async def many():
        return await asyncio.gather(*(lim.aacquire() for _ in range(4)))

    got = asyncio.run(many())
    assert sorted(s.queued_ms > 0 for s in got).count(True) >= 2  # 4 callers, 2 per window


def test_breaker_opens_probes_and_closes():
    clock = Clock()
    br = CircuitBreaker(failures=3, cooldown_s=10, clock=clock)
    for _ in range(2):
        br.failure()
    assert br.allow() == (True, "closed")
    br.success()
    for _ in range(3):
        br.failure()
    assert br.allow() == (False, "open")
    clock.t += 10
    assert br.allow() == (True, "half-open")
    assert br.allow() == (False, "half-open")  # one probe at a time
    br.failure()
    assert br.state == "open"
    clock.t += 10
    assert br.allow() == (True, "half-open")
    br.success()
    assert br.state == "closed" and br.allow() == (True, "closed")


def test_backoff_grows_is_capped_and_jittered():
    rng = random.Random(7)
    xs = [backoff_s(a, base_s=0.1, cap_s=1.0, rng=rng) for a in range(6)]
    assert all(0.05 <= x < 1.5 for x in xs) and xs[3] > xs[0]
    assert len({round(backoff_s(0, rng=rng), 6) for _ in range(5)}) == 5


@pytest.mark.parametrize("raw,expect", [("100/min", (100, 60.0)), ("10/s", (10, 1.0)), ("5000/hour", (5000, 3600.0)),
                                        ("100/6s", (100, 6.0)), (" 1 / second ", (1, 1.0)), ("off", None), ("", None)])
def test_parse_rate(raw, expect):
    assert parse_rate(raw) == expect


@pytest.mark.parametrize("raw", ["fast", "0/min", "100/0s", "100/fortnight"])
def test_bad_rates_name_the_variable(raw):
    with pytest.raises(ConfigError, match="CONVSEARCH_BRAVE_RATE"):
        parse_rate(raw, variable="CONVSEARCH_BRAVE_RATE")


def test_retry_after_forms():
    now = 1_800_000_000.0
    assert retry_after_s({"retry-after": "7"}, now=now) == 7
    assert 29 <= retry_after_s({"retry-after": formatdate(now + 30, usegmt=True)}, now=now) <= 30
    brave = {"x-ratelimit-remaining": "0, 9000", "x-ratelimit-reset": "1, 1419704"}
    assert retry_after_s(brave, now=now) == 1  # the per-second window is the spent one
    monthly = {"x-ratelimit-remaining": "1, 0", "x-ratelimit-reset": "1, 1419704"}
    assert retry_after_s(monthly, now=now) == 1419704
    assert retry_after_s({"x-ratelimit-reset": str(int(now) + 12)}, now=now) == 12  # epoch seconds
    assert retry_after_s({}, now=now) is None


def test_the_window_has_a_small_safety_margin_by_default():
    clock = Clock()
    lim = OutboundLimiter("p", 1, limit=1, window_s=6, clock=clock, max_wait_s=30)
    take(lim)
    assert take(lim) == pytest.approx(6.14)  # 6 s + 2% + 20 ms


def test_a_first_attempt_grant_counts_as_granted_and_only_a_waiter_as_queued():
    from convsearch.infra.ratelimit import STATS

    lim = OutboundLimiter("first-try", 1, limit=1, window_s=0.2, max_wait_s=2, margin_s=0)
    lim.acquire()
    second = lim.acquire()  # sleeps ~0.2 s for the window
    counts, waits = STATS.snapshot()
    assert counts[("first-try", "granted")] == 1 and counts[("first-try", "queued")] == 1
    assert second.queued_ms >= 190 and waits["first-try"][1] == 2
