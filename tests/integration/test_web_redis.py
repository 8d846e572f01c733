"""The shared web cache, look-up counts and outbound rate budget on a real Redis (two limiters = two workers)."""

from __future__ import annotations

import asyncio
import time

import pytest

from convsearch.backends.web._http import reset_shared_state
from convsearch.backends.web.cached import CachedWeb
from convsearch.config import Settings
from convsearch.infra.ratelimit import OutboundLimiter, QueueTimeout
from convsearch.infra.redis_store import RedisCache, RedisSeenCounter, RedisWindowStore
from convsearch.infra.turn import turn
from convsearch.testing.web_replay import WebReplayServer

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _fresh():
    reset_shared_state()
    yield
    reset_shared_state()


def test_cache_roundtrip_with_ttl_and_namespaces(redis_url):
    c = RedisCache.from_url(redis_url)
    c.set("acme:support:web", "k", [{"title": "深圳天气"}], ttl_s=0.3)
    assert c.get("acme:support:web", "k") == [{"title": "深圳天气"}]
    assert c.get("beta:support:web", "k") is None
    assert asyncio.run(c.aget("acme:support:web", "k")) == [{"title": "深圳天气"}]
    time.sleep(0.4)
    assert c.get("acme:support:web", "k") is None  # Redis expired it
    asyncio.run(c.aset("acme:support:web", "k2", {"a": 1}, ttl_s=60))
    c.clear("acme:support:web")
    assert c.get("acme:support:web", "k2") is None


def test_seen_counts_are_shared_and_windowed(redis_url):
    a, b = RedisSeenCounter.from_url(redis_url), RedisSeenCounter.from_url(redis_url)
    assert [a.seen("ns", "q", 3600), b.seen("ns", "q", 3600), a.seen("ns", "q", 3600)] == [1, 2, 3]
    assert a.seen("ns", "other", 3600) == 1
    time.sleep(0.25)
    assert a.seen("ns", "q", 0.2) == 1  # the earlier three fell out of a 0.2 s window


def test_two_workers_share_one_budget(redis_url):
    clock = [1_000_000.0]

    def worker(max_wait=30):
        return OutboundLimiter("tavily", 2, limit=3, window_s=10, store=RedisWindowStore.from_url(redis_url),
                               clock=lambda: clock[0], max_wait_s=max_wait, margin_s=0)

    w1, w2 = worker(), worker()
    got = [(w1 if i % 2 else w2)._reserve(float("inf")) for i in range(8)]
    assert sorted(s.index for s, _ in got[:6]) == [0, 0, 0, 1, 1, 1]  # 2 keys × 3, shared by both workers
    assert [w for s, w in got[6:]] == [10, 10] and all(s is None for s, _ in got[6:])
    first = got[0][0]
    clock[0] += 2
    w1.settle(first)  # its answer came 2 s later: it stays in its key's window until +12
    clock[0] += 8
    other, _ = w2._reserve(float("inf"))
    assert other.index != first.index  # the least used key first
    w1.cool(other.index, 60)  # an upstream 429 on it: cooled for both workers
    assert [w2._reserve(float("inf"))[0].index for _ in range(2)] == [first.index] * 2
    assert w1._reserve(float("inf")) == (None, 2.0)  # the settled call frees its slot at +12
    with pytest.raises(QueueTimeout):
        worker(max_wait=1)._reserve(float("inf"))


def test_adapters_share_the_limiter_and_cache_through_redis(redis_url):
    with WebReplayServer("brave", keys=["b1"], limit=(2, 60.0)) as srv:
        env = {"CONVSEARCH_BRAVE_API_KEYS": "b1", "CONVSEARCH_BRAVE_BASE_URL": srv.base_url,
               "CONVSEARCH_BRAVE_RATE": "2/min", "CONVSEARCH_CACHE_URL": redis_url, "CONVSEARCH_WEB_MAX_WAIT_S": "0.5"}
        from convsearch.backends.registry import open_backend

        s = Settings.from_env(env)
        b = open_backend(s, "brave")
        assert isinstance(b.backend, CachedWeb) and isinstance(b.backend.cache, RedisCache)  # Policed(CachedWeb(…))
        with turn() as notes:
            b.search("SpaceX Falcon 1")
            b.search("SpaceX Falcon 1")  # from Redis: no upstream call
            b.search("hybrid search explained")
        assert notes.count("cache hit (brave)") == 1 and len(srv.requests) == 2
        with pytest.raises(QueueTimeout):
            b.search("AnySearch pricing plans")  # the 3rd call in the minute: the shared window is full
        assert srv.served == {200: 2}  # never sent, so never a 429
        b.close()
