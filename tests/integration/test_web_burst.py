"""A burst over a rate-limited web provider holds: 30 concurrent turns over Tavily with two keys at 12 requests/s
each (the replay server enforces the same limit per key and answers 429 past it), 20 bursts back to back, every
turn answered with hits. Bounded: 600 turns, about 25 s."""

from __future__ import annotations

import asyncio
import time

import pytest

from convsearch.backends.web.guard import reset_shared_caches
from convsearch.config import Settings
from convsearch.pipeline import Pipeline
from convsearch.testing.web_replay import WebReplayServer

pytestmark = pytest.mark.integration

KEYS = ("key-a", "key-b")
RUNS, CONCURRENT = 20, 30


def test_twenty_bursts_of_thirty_over_two_keys_at_twelve_a_second_are_all_answered() -> None:
    with WebReplayServer("tavily", keys=KEYS, limit=(12, 1.0)) as srv:
        s = Settings.from_env({"CONVSEARCH_BACKENDS": "tavily", "CONVSEARCH_DENSE": "off",
                               "CONVSEARCH_TAVILY_API_KEYS": ",".join(KEYS), "CONVSEARCH_TAVILY_BASE_URL": srv.base_url,
                               "CONVSEARCH_TAVILY_RATE": "12/s", "CONVSEARCH_WEB_CACHE": "off"})
        reset_shared_caches()
        outcomes: list[str] = []
        t0 = time.monotonic()
        with Pipeline.from_settings(s) as p:
            for run in range(RUNS):
                async def turn(i: int, run: int = run) -> str:
                    r = await p.asearch(f"AnySearch pricing plan {run}-{i}", [])
                    return "ok" if r.hits and not r.partial else f"{'partial' if r.partial else 'empty'}: {r.errors}"

                async def burst() -> list[str]:
                    return await asyncio.gather(*(turn(i) for i in range(CONCURRENT)))

                outcomes.extend(asyncio.run(burst()))
        took = time.monotonic() - t0
        bad = [o for o in outcomes if o != "ok"]
        assert not bad, f"{len(bad)} of {len(outcomes)} turns not answered: {bad[:3]}"
        # our limiter kept to the budget the provider enforces: at most a stray 429 at a window's edge
        assert srv.served.get(200, 0) >= RUNS * CONCURRENT and srv.served.get(429, 0) <= RUNS, srv.served
        # 12/s on each of two keys: 600 calls take at least ~24 s of budget, minus the first burst's full window
        assert took >= (RUNS * CONCURRENT / 24) - 2, took
