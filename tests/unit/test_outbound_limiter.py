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


def test_sliding_window_queues_instead_of_failing():
    clock = Clock()
    lim = OutboundLimiter("p", 1, limit=2, window_s=10, max_wait_s=30, clock=clock, margin_s=0)
    waits = [lim._reserve(float("inf"))[1] for _ in range(5)]
    assert waits == [0, 0, 10, 10, 20]  # the 3rd call starts when the 1st leaves the window, and so on
    clock.t += 25  # the window (t+15, t+25] holds one call (t+20): one more now, the next at t+30
    assert [lim._reserve(float("inf"))[1] for _ in range(2)] == [0, 5]


def test_keys_rotate_least_used_first_and_double_the_budget():
    clock = Clock()
    lim = OutboundLimiter("p", 2, limit=2, window_s=10, max_wait_s=30, clock=clock, margin_s=0)
    slots = [lim._reserve(float("inf"))[0] for _ in range(5)]
    assert [s.index for s in slots] == [0, 1, 0, 1, 0]
    assert [s.queued_ms for s in slots] == [0, 0, 0, 0, 10_000]


def test_wait_is_bounded_by_max_wait_and_by_the_deadline():
    clock = Clock()
    lim = OutboundLimiter("p", 1, limit=1, window_s=60, max_wait_s=5, clock=clock, margin_s=0)
    lim._reserve(float("inf"))
    with pytest.raises(QueueTimeout, match="next free slot is in 60.00 s") as e:
        lim._reserve(float("inf"))
    assert isinstance(e.value, BackendError)
    lim2 = OutboundLimiter("q", 1, limit=1, window_s=2, max_wait_s=5, clock=clock, margin_s=0)
    lim2._reserve(float("inf"))
    with pytest.raises(QueueTimeout):
        lim2._reserve(1.0)  # the deadline leaves 1 s, the slot is 2 s away
    assert lim2._reserve(3.0)[1] == 2  # a refused call reserved nothing


def test_a_cooled_key_is_skipped_until_its_reset():
    clock = Clock()
    lim = OutboundLimiter("p", 2, limit=100, window_s=60, clock=clock, max_wait_s=60, margin_s=0)
    lim.cool(0, 30)
    assert {lim._reserve(float("inf"))[0].index for _ in range(3)} == {1}
    lim3 = OutboundLimiter("p1", 1, limit=100, window_s=60, clock=clock, max_wait_s=60, margin_s=0)
    lim3.cool(0, 7)
    assert lim3._reserve(float("inf"))[1] == 7  # one key only: wait out its reset


def test_shared_store_shares_the_budget():
    clock, store = Clock(), MemoryWindowStore()
    a = OutboundLimiter("p", 1, limit=1, window_s=10, store=store, clock=clock, max_wait_s=30, margin_s=0)
    b = OutboundLimiter("p", 1, limit=1, window_s=10, store=store, clock=clock, max_wait_s=30, margin_s=0)
    assert a._reserve(float("inf"))[1] == 0 and b._reserve(float("inf"))[1] == 10


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
    lim._reserve(float("inf"))
    assert lim._reserve(float("inf"))[1] == pytest.approx(6.14)  # 6 s + 2% + 20 ms
