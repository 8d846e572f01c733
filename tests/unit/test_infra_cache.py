"""infra/cache.py: the TTLCache contract, MemoryCache (LRU bound, per-entry TTL, namespaces, counters,
thread safety, async twins), and NullCache."""

from __future__ import annotations

import asyncio
import threading

import pytest

from convsearch.infra.cache import CacheStats, MemoryCache, NullCache, TTLCache, cache_key


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_both_implementations_follow_the_protocol():
    assert isinstance(MemoryCache(), TTLCache) and isinstance(NullCache(), TTLCache)


def test_namespaces_are_separate():
    c = MemoryCache()
    c.set("acme:rewrite", "k", "AnySearch 的价格")
    c.set("beta:rewrite", "k", "NovaDB pricing")
    assert c.get("acme:rewrite", "k") == "AnySearch 的价格" and c.get("beta:rewrite", "k") == "NovaDB pricing"
    assert c.get("acme:web", "k") is None
    c.clear("acme:rewrite")
    assert c.get("acme:rewrite", "k") is None and c.get("beta:rewrite", "k") == "NovaDB pricing"
    c.delete("beta:rewrite", "k"), c.delete("beta:rewrite", "never there")
    assert len(c) == 0
    c.set("a", "1", 1), c.set("b", "2", 2)
    c.clear()
    assert len(c) == 0


def test_lru_bound_evicts_the_least_recently_used():
    c = MemoryCache(maxsize=2)
    c.set("n", "a", 1), c.set("n", "b", 2)
    assert c.get("n", "a") == 1  # a is now the most recent
    c.set("n", "c", 3)
    assert c.get("n", "b") is None and c.get("n", "a") == 1 and c.get("n", "c") == 3 and len(c) == 2
    assert c.stats().evictions == 1
    off = MemoryCache(maxsize=0)
    off.set("n", "a", 1)
    assert off.get("n", "a") is None and len(off) == 0
    with pytest.raises(ValueError):
        MemoryCache(maxsize=-1)


def test_default_and_per_entry_ttl():
    clock = Clock()
    c = MemoryCache(ttl_s=60, clock=clock)
    c.set("web", "short", "x", ttl_s=5)
    c.set("web", "default", "y")
    c.set("web", "forever-ish", "z", ttl_s=3600)
    c.set("web", "zero", "w", ttl_s=0)  # a TTL ≤ 0 stores nothing
    clock.t += 6
    assert c.get("web", "short") is None and c.get("web", "default") == "y" and c.get("web", "zero") is None
    clock.t += 60
    assert c.get("web", "default") is None and c.get("web", "forever-ish") == "z"
    s = c.stats("web")
    assert (s.hits, s.misses, s.expirations, s.size) == (2, 3, 2, 1)
    no_ttl = MemoryCache(clock=clock)
    no_ttl.set("n", "k", "v")
    clock.t += 10 ** 9
    assert no_ttl.get("n", "k") == "v"


def test_counters_per_namespace_and_overall():
    c = MemoryCache()
    c.set("a", "k", 1)
    c.get("a", "k"), c.get("a", "k"), c.get("a", "x"), c.get("b", "k")
    assert c.stats("a") == CacheStats(hits=2, misses=1, size=1)
    assert c.stats() == CacheStats(hits=2, misses=2, size=1) and c.stats().hit_rate == 0.5
    assert (c.hits, c.misses) == (2, 2) and CacheStats().hit_rate == 0.0
    assert "size=1" in repr(c)


def test_none_is_not_a_value():
    c = MemoryCache()
    c.set("n", "k", None)
    assert len(c) == 0


def test_async_twins():
    c = MemoryCache()

    async def main():
        await c.aset("n", "k", "值")
        got = await c.aget("n", "k")
        await c.adelete("n", "k")
        return got, await c.aget("n", "k")

    assert asyncio.run(main()) == ("值", None)
    n = NullCache()

    async def null():
        await n.aset("n", "k", 1)
        await n.adelete("n", "k")
        return await n.aget("n", "k")

    assert asyncio.run(null()) is None
    n.set("n", "k", 1), n.delete("n", "k"), n.clear(), n.clear("n")
    assert n.get("n", "k") is None


def test_thread_safe_under_contention():
    c = MemoryCache(maxsize=64)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(500):
                c.set(f"t{i % 3}", str(j % 100), j)
                c.get(f"t{(i + 1) % 3}", str(j % 100))
                if j % 50 == 0:
                    c.clear(f"t{i % 3}")
        except BaseException as exc:  # noqa: BLE001 - collected for the assert
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = c.stats()
    assert not errors and len(c) <= 64 and s.hits + s.misses == 8 * 500


def test_cache_key_is_stable_and_separates_kinds():
    base = dict(model="m", prompt="p", turns=[("user", "AnySearch 支持哪些检索方式？")], query="价格呢？")
    assert cache_key("rewrite", **base) == cache_key("rewrite", **base) != cache_key("hyde", **base)
    assert len(cache_key("rewrite", **base)) == 64
