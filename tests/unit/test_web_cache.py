"""The web cache tiers and the failover chain, over in-memory doubles (no network)."""

from __future__ import annotations

import asyncio

import pytest

from convsearch.backends.base import Capabilities, Recency
from convsearch.backends.web.cached import CachedWeb, Failover, MemorySeenCounter
from convsearch.errors import BackendError
from convsearch.infra.cache import MemoryCache
from convsearch.infra.turn import turn
from convsearch.types import Hit


class Scripted:
    """A paid web backend double: counts calls, answers a fixed hit, or raises what it is told to."""

    capabilities = Capabilities(remote=True, web=True, paid=True)

    def __init__(self, name: str = "tavily", *, fail: Exception | None = None, empty: bool = False) -> None:
        self.name, self.fail, self.empty, self.calls = name, fail, empty, 0

    def search(self, query, *, top_k=10, filters=None, recency=None, dense_query=None):
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        if self.empty:
            return []
        return [Hit(f"//{self.name}.example/{self.calls}", query, f"{self.name} answer", 1.0, "https://x.example",
                    "2026-11-30", self.name, 1, {"provider": self.name})]

    async def asearch(self, query, **kw):
        return self.search(query, **kw)

    def close(self):
        pass


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def cached(backend, clock=None):
    clock = clock or Clock()
    return CachedWeb(backend, MemoryCache(64, clock=clock), seen=MemorySeenCounter(clock=clock)), clock


def test_ordinary_queries_are_cached_ten_minutes():
    b = Scripted()
    c, clock = cached(b)
    with turn() as notes:
        first = c.search("AnySearch 支持哪些检索方式", top_k=5)
        again = c.search("  anysearch   支持哪些检索方式 ", top_k=5)  # normalised: same key
    assert b.calls == 1 and again[0].id == first[0].id and again[0].metadata["cache"] == "hit"
    assert notes == ["cache miss (tavily); stored for 10 min", "cache hit (tavily)"]
    clock.t += 601
    c.search("AnySearch 支持哪些检索方式", top_k=5)
    assert b.calls == 2


def test_hot_queries_stay_thirty_minutes():
    b = Scripted()
    c, clock = cached(b)
    for _ in range(2):
        c.search("hybrid search explained")
        clock.t += 601  # expired each time: a miss that counts a look-up
    with turn() as notes:
        c.search("hybrid search explained")  # the third look-up within the hour: hot
    assert notes == ["cache miss (tavily); stored for 30 min"]
    clock.t += 29 * 60
    c.search("hybrid search explained")
    assert b.calls == 3


@pytest.mark.parametrize("q", ["深圳今天天气", "latest AI search news", "Bitcoin price", "中超比分"])
def test_time_sensitive_queries_are_never_cached(q):
    b = Scripted()
    c, _ = cached(b)
    with turn() as notes:
        c.search(q)
        c.search(q)
    assert b.calls == 2 and notes[0] == "cache skipped (tavily): time-sensitive query"


def test_errors_and_empty_answers_are_not_cached():
    bad = Scripted(fail=BackendError("tavily: HTTP 503"))
    c, _ = cached(bad)
    for _ in range(2):
        with pytest.raises(BackendError):
            c.search("SpaceX founder")
    assert bad.calls == 2
    empty = Scripted(empty=True)
    c2, _ = cached(empty)
    assert c2.search("SpaceX founder") == [] and c2.search("SpaceX founder") == [] and empty.calls == 2


def test_tenants_agents_recency_and_top_k_never_share_an_entry():
    b = Scripted()
    c, _ = cached(b)
    with turn(tenant="acme", agent="support"):
        c.search("SpaceX founder")
    with turn(tenant="beta", agent="support"):
        c.search("SpaceX founder")
    with turn(tenant="acme", agent="sales"):
        c.search("SpaceX founder")
    with turn(tenant="acme", agent="support"):
        c.search("SpaceX founder", recency=Recency.YEAR)
        c.search("SpaceX founder", top_k=3)
        c.search("SpaceX founder")  # the first one again: a hit
    assert b.calls == 5


def test_async_twin_uses_the_same_cache():
    b = Scripted("brave")
    c, _ = cached(b)
    asyncio.run(c.asearch("SpaceX founder"))
    assert c.search("SpaceX founder")[0].metadata["cache"] == "hit" and b.calls == 1


def test_failover_tries_the_next_provider_and_says_why():
    a = Scripted("tavily", fail=BackendError("tavily: breaker open"))
    b = Scripted("brave")
    f = Failover([a, b])
    with turn() as notes:
        hits = f.search("SpaceX founder")
    assert hits[0].source == "brave" and notes == ["failover tavily → brave: BackendError"]
    assert f.name == "web" and f.providers == ("tavily", "brave") and f.capabilities.paid


def test_failover_all_failing_names_each():
    f = Failover([Scripted("tavily", fail=BackendError("tavily: 503")),
                  Scripted("brave", fail=BackendError("brave: unreachable"))])
    with pytest.raises(BackendError, match="every web provider failed: tavily: tavily: 503; brave: brave: unreachable"):
        asyncio.run(f.asearch("SpaceX founder"))


def test_the_cache_key_includes_the_provider_set():
    cache, seen = MemoryCache(64), MemorySeenCounter()
    one = CachedWeb(Failover([Scripted("tavily")]), cache, seen=seen)
    two = CachedWeb(Failover([Scripted("tavily"), Scripted("brave")]), cache, seen=seen)
    one.search("SpaceX founder")
    assert two.search("SpaceX founder")[0].metadata.get("cache") is None


def test_concurrent_identical_misses_share_one_upstream_call():
    class Slow(Scripted):
        async def asearch(self, query, **kw):
            await asyncio.sleep(0.05)
            return self.search(query, **kw)

    b = Slow("tavily")
    c, _ = cached(b)

    async def many():
        with turn() as notes:
            got = await asyncio.gather(*(c.asearch("SpaceX founder") for _ in range(20)))
        return got, notes

    got, notes = asyncio.run(many())
    assert b.calls == 1 and all(g[0].id == got[0][0].id for g in got)
    assert notes.count("cache hit (tavily, in flight)") == 19


def test_a_failed_leader_is_not_shared():
    class Flaky(Scripted):
        async def asearch(self, query, **kw):
            await asyncio.sleep(0.02)
            if self.calls == 0:
                self.calls += 1
                raise BackendError("tavily: HTTP 503")
            return self.search(query, **kw)

    b = Flaky("tavily")
    c, _ = cached(b)

    async def two():
        return await asyncio.gather(c.asearch("SpaceX founder"), c.asearch("SpaceX founder"), return_exceptions=True)

    a, second = asyncio.run(two())
    assert isinstance(a, BackendError) and second[0].source == "tavily"  # the follower searched itself


def test_sync_single_flight_across_threads():
    import threading
    import time as _t

    class SlowSync(Scripted):
        def search(self, query, **kw):
            _t.sleep(0.05)
            return super().search(query, **kw)

    b = SlowSync("brave")
    c, _ = cached(b)
    out = []
    ts = [threading.Thread(target=lambda: out.append(c.search("SpaceX founder"))) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert b.calls == 1 and len(out) == 8
