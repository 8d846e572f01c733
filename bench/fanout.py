"""Benchmark: fan-out over three backends with scripted delays of 50 / 100 / 150 ms.

The backends are ``convsearch.testing.backends.ScriptedBackend``s (the in-memory backend behind an
``asyncio.sleep``), so only the fan-out itself is measured: a turn searched one backend after another would
take the sum of the delays (300 ms per query); concurrently it takes about the slowest (target ≤ 180 ms).

Timed per turn, wall clock: ``Pipeline.search`` (the sync entry: a fresh event loop per turn) and
``Pipeline.asearch`` (on the caller's loop) over a zh and an en follow-up, the whole turn (plan, fan-out,
fuse, dedup, rerank, format). Each backend gets every query of the turn (standalone + variants) concurrently,
so the turn's time does not grow with the number of queries either. A third row sets the turn's deadline to
120 ms: the 150 ms backend is left out (``partial``) and the turn ends at the deadline.
"""

from __future__ import annotations

import asyncio
import time

from common import pct, run_worker, table, verdict

DELAYS_S = (0.05, 0.10, 0.15)
TARGET_MS = 180.0
DEADLINE_S = 0.12


def _setup(deadline_s: float = 10.0):
    from convsearch import Document, Pipeline, Settings
    from convsearch.testing.backends import ScriptedBackend

    docs = [Document("zh-price", "AnySearch 的价格：专业版每月 99 元", title="AnySearch 价格", lang="zh"),
            Document("zh-modes", "AnySearch 支持关键词检索和混合检索", title="AnySearch 检索方式", lang="zh"),
            Document("en-launch", "SpaceX first launched Falcon 1 in 2006", title="Falcon 1", lang="en"),
            Document("en-founded", "SpaceX was founded by Elon Musk in 2002", title="SpaceX", lang="en")]
    backends = [ScriptedBackend(f"b{int(d * 1000)}ms", docs, delay_s=d) for d in DELAYS_S]
    turns = [("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}]),
             ("When did it first launch?", [{"role": "user", "content": "Who founded SpaceX?"}])]
    return Pipeline(backends, settings=Settings(deadline_s=deadline_s)), turns


def work(quick: bool = False) -> dict:
    n = 10 if quick else 30
    out: dict = {"delays_ms": [int(d * 1000) for d in DELAYS_S], "sum_ms": sum(DELAYS_S) * 1000,
                 "target_ms": TARGET_MS, "turns": n}
    p, turns = _setup()
    samples: list[int] = []
    queries = 0
    for i in range(n):
        q, h = turns[i % 2]
        t0 = time.perf_counter_ns()
        r = p.search(q, h)
        samples.append(time.perf_counter_ns() - t0)
        assert not r.partial and len(r.trace.backends) == 3
        queries += len(r.trace.queries)
    out["sync"] = pct(samples)
    out["queries_per_turn"] = queries / n

    async def many() -> list[int]:
        got = []
        for i in range(n):
            q, h = turns[i % 2]
            t0 = time.perf_counter_ns()
            await p.asearch(q, h)
            got.append(time.perf_counter_ns() - t0)
        return got

    out["async"] = pct(asyncio.run(many()))
    p.close()

    p, turns = _setup(DEADLINE_S)
    late: list[int] = []
    partial = 0
    for i in range(n):
        q, h = turns[i % 2]
        t0 = time.perf_counter_ns()
        r = p.search(q, h)
        late.append(time.perf_counter_ns() - t0)
        partial += r.partial and [b.status for b in r.trace.backends] == ["ok", "ok", "late"]
    out["deadline"] = {"deadline_ms": DEADLINE_S * 1000, **pct(late), "partial_share": partial / n}
    out["met"] = out["sync"]["p99"] <= TARGET_MS and out["async"]["p99"] <= TARGET_MS
    return out


def run(quick: bool = False) -> dict:
    return run_worker("fanout", "work", {"quick": quick})


def render(r: dict) -> str:
    d = r["deadline"]
    rows = [("`Pipeline.search` (sync; a fresh event loop per turn)", r["sync"]["p50"], r["sync"]["p99"],
             r["sync"]["max"], f"≤ {r['target_ms']:g} ms", verdict(r["sync"]["p99"] <= r["target_ms"])),
            ("`Pipeline.asearch` (on the caller's loop)", r["async"]["p50"], r["async"]["p99"], r["async"]["max"],
             f"≤ {r['target_ms']:g} ms", verdict(r["async"]["p99"] <= r["target_ms"])),
            (f"sync, turn deadline {d['deadline_ms']:g} ms (the 150 ms backend is late: partial in "
             f"{d['partial_share']:.0%} of turns)", d["p50"], d["p99"], d["max"], "≈ the deadline", "-")]
    return "\n".join([
        "## Fan-out over three backends (scripted delays 50 / 100 / 150 ms)",
        "",
        "Three `ScriptedBackend`s (in-memory search behind an `asyncio.sleep` of "
        f"{', '.join(map(str, r['delays_ms']))} ms); "
        f"{r['turns']} turns alternating a zh and an en follow-up, {r['queries_per_turn']:.1f} queries per turn, "
        f"each sent to every backend concurrently. One after another the turn would take "
        f"{r['sum_ms']:g} ms per query; the target is about the slowest backend.",
        "",
        table(("turn", "p50 ms", "p99 ms", "max ms", "target", "verdict"), rows),
    ])
