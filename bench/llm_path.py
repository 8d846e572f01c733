"""Benchmark: the LLM path against a real OpenAI-compatible server on loopback (the official SDK end to end).

    .venv/bin/python bench/llm_path.py            # prints the markdown section
    .venv/bin/python bench/llm_path.py --quick    # fewer turns

Measured (issue 4):

1. **Gate-resolved turns add < 1 ms.** Turns the rule gate judges standalone, from the four dev sets, through
   ``plan_queries`` with the ``auto`` rewriter (LLM configured; the server answers after 200 ms) and with the
   rule rewriter, alternately on the same turns: the difference per turn. No request may reach the server.
2. **An LLM timeout costs at most timeout + 50 ms** before the fallback (rules) result is back: the server
   answers after 3 s; the rewriter's budget is 0.2 s / 1 s (sync client) and 0.2 s (async client).
   Also the success path (200 ms server: our overhead above it) and a server that fails with HTTP 500
   (one retry, then rules).
3. **LLM calls per 100 turns** on each dev set with ``auto`` (server with no latency, echo replies): only the
   turns the gate sends on cost a call; a second pass over the same turns is answered by the cache.

The server runs in its own process (``python -m convsearch.testing.openai_server``) so its threads never
compete with the timed code for the GIL. Data is read in place from ../shared/data/conv-rewrite.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, data_file, pct, table, verdict  # noqa: E402

DEV_SETS = {
    "canard": "canard/dev.jsonl",
    "trec-cast": "trec-cast/cast2019_eval.jsonl",
    "su2019-zh": "rewrite-su2019-zh/dev.jsonl",
    "restoration-zh": "restoration-200k-zh/valid.jsonl",
}
LATENCY_S = 0.2
TIMEOUTS_S = (0.2, 1.0)
TARGET_ADDED_MS = 1.0
TARGET_OVERSHOOT_MS = 50.0
WINDOW = 8


@contextmanager
def server(latency: float = 0.0, fail_status: int = 0):
    """A loopback OpenAI-compatible server in a subprocess; yields its base URL."""
    args = [sys.executable, "-m", "convsearch.testing.openai_server", "--latency", str(latency)]
    if fail_status:
        args += ["--fail-status", str(fail_status)]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline().strip()
        if not line.startswith("READY "):
            raise RuntimeError(f"fake server did not start: {line!r}")
        yield line.split(" ", 1)[1]
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def _settings(base_url: str, **kw):
    from convsearch.config import Settings

    env = {"CONVSEARCH_LLM_BASE_URL": base_url, "CONVSEARCH_LLM_MODEL": "fake", "CONVSEARCH_LLM_API_KEY": "sk-bench"}
    env.update({f"CONVSEARCH_{k.upper()}": str(v) for k, v in kw.items()})
    return Settings.from_env(env)


def _turns(rel: str, limit: int | None, *, gold: list[bool] | None = None):
    """(history window, question, topic) of the file's turns; ``gold`` collects the human needs-rewrite flags."""
    from convsearch.eval.data import iter_records, topic_text
    from convsearch.window import history_window

    out = []
    for r in iter_records(data_file(rel)):
        if not r.question.strip():
            continue
        out.append((history_window(r.messages(), WINDOW), r.question, topic_text(r)))
        if gold is not None:
            gold.append(bool(r.needs_rewrite))
        if limit and len(out) >= limit:
            break
    return out


# --- 1. gate-resolved turns -----------------------------------------------------------------------
def gate_overhead(quick: bool) -> dict:
    from convsearch.resolve.gate import needs_rewrite
    from convsearch.pipeline import plan_queries
    from convsearch.rewrite import get_rewriter
    from convsearch.resolve.rules import RuleRewriter

    per_set = 150 if quick else 600
    turns = []
    for rel in DEV_SETS.values():
        got = [t for t in _turns(rel, per_set * 3) if not needs_rewrite(t[0], t[1], topic=t[2]).needed]
        turns += got[:per_set]
    with server(LATENCY_S) as url:
        s = _settings(url)
        auto = get_rewriter("auto", s)
        rules = RuleRewriter()
        try:
            for h, q, topic in turns:  # warm-up: every LRU cache as warm for one rewriter as for the other
                plan_queries(q, h, rewriter=rules, settings=s, topic=topic)
                plan_queries(q, h, rewriter=auto, settings=s, topic=topic)
            t_rules, t_auto, diff, t_direct, t_gate = [], [], [], [], []
            perf = time.perf_counter_ns
            for i, (h, q, topic) in enumerate(turns):
                order = (rules, auto) if i % 2 == 0 else (auto, rules)
                took = {}
                for rw in order:
                    t0 = perf()
                    plan_queries(q, h, rewriter=rw, settings=s, topic=topic)
                    took[rw is auto] = perf() - t0
                t_auto.append(took[True])
                t_rules.append(took[False])
                diff.append(took[True] - took[False])
                t0 = perf()
                needs_rewrite(h, q, topic=topic)
                t1 = perf()
                auto.rewrite(h, q, topic=topic)  # the rewriter on its own (batch use): it runs the gate itself
                t_gate.append(t1 - t0)
                t_direct.append(perf() - t1)
            calls = auto.llm.stats.requests
        finally:
            auto.close()
    d = pct(diff)
    return {"turns": len(turns), "rules": pct(t_rules), "auto": pct(t_auto), "diff": d, "gate": pct(t_gate),
            "direct": pct(t_direct), "requests": calls,
            "added_p99_ms": pct(t_auto)["p99"] - pct(t_rules)["p99"], "target_ms": TARGET_ADDED_MS,
            "met": calls == 0 and pct(t_auto)["p99"] - pct(t_rules)["p99"] < TARGET_ADDED_MS
            and pct(t_direct)["p99"] - pct(t_gate)["p99"] < TARGET_ADDED_MS}


# --- 2. timeouts, errors, success ---------------------------------------------------------------------
def _follow_ups(n: int):
    from turns import demo_turns

    from convsearch.resolve.gate import needs_rewrite

    ts = [t for t in demo_turns() if needs_rewrite(t.history, t.query, topic=t.topic).needed]
    return [ts[i % len(ts)] for i in range(n)]


def _time_turns(rw, turns) -> list[int]:
    out = []
    for t in turns:
        t0 = time.perf_counter_ns()
        r = rw.rewrite(t.history, t.query, topic=t.topic)
        out.append(time.perf_counter_ns() - t0)
        assert r.rewritten.strip()
    return out


def deadlines(quick: bool) -> dict:
    from convsearch.llm import OpenAILLM, llm_config
    from convsearch.rewrite import get_rewriter
    from convsearch.rewrite.llm import LLMRewriter

    n = 10 if quick else 30
    turns = _follow_ups(n)
    out: dict = {"n": n, "timeouts": {}, "target_ms": TARGET_OVERSHOOT_MS}
    with server(3.0) as slow:
        for timeout in TIMEOUTS_S[:1] if quick else TIMEOUTS_S:
            rw = get_rewriter("auto", _settings(slow, llm_timeout_s=timeout, llm_cache_size=0))
            try:
                _time_turns(rw, turns[:2])  # connection set up, imports done
                ns = _time_turns(rw, turns)
            finally:
                rw.close()
            over = [x - int(timeout * 1e9) for x in ns]
            out["timeouts"][f"sync {timeout:g} s"] = {"timeout_s": timeout, "elapsed": pct(ns), "over": pct(over)}
        # the async twin: asyncio.wait_for is its hard deadline
        s = _settings(slow, llm_timeout_s=TIMEOUTS_S[0], llm_cache_size=0)
        llm = OpenAILLM(llm_config(s))
        rw = LLMRewriter(llm, cache=None, budget_s=TIMEOUTS_S[0])

        async def run_async() -> list[int]:
            res = []
            try:
                for t in turns:
                    t0 = time.perf_counter_ns()
                    await rw.arewrite(t.history, t.query, topic=t.topic)
                    res.append(time.perf_counter_ns() - t0)
            finally:
                await llm.aclose()
            return res

        try:
            ns = asyncio.run(run_async())
        finally:
            llm.close()
        over = [x - int(TIMEOUTS_S[0] * 1e9) for x in ns]
        out["timeouts"][f"async {TIMEOUTS_S[0]:g} s"] = {"timeout_s": TIMEOUTS_S[0], "elapsed": pct(ns), "over": pct(over)}
    with server(LATENCY_S) as ok:
        rw = get_rewriter("auto", _settings(ok, llm_cache_size=0))
        try:
            _time_turns(rw, turns[:2])
            ns = _time_turns(rw, turns)
        finally:
            rw.close()
        out["success"] = {"elapsed": pct(ns), "over": pct([x - int(LATENCY_S * 1e9) for x in ns])}
    with server(0.0, fail_status=500) as bad:
        rw = get_rewriter("auto", _settings(bad, llm_cache_size=0, llm_max_retries=1))
        try:
            ns = _time_turns(rw, turns)
            out["http500"] = {"elapsed": pct(ns), "requests_per_turn": rw.llm.stats.requests / len(turns)}
        finally:
            rw.close()
    worst = max(v["over"]["max"] for v in out["timeouts"].values())
    out["worst_over_ms"] = worst
    out["met"] = worst <= TARGET_OVERSHOOT_MS
    return out


# --- 3. LLM calls per 100 turns ---------------------------------------------------------------------
def calls_per_100(quick: bool) -> dict:
    from convsearch.rewrite import get_rewriter

    limit = 400 if quick else None
    rows = {}
    with server(0.0) as url:
        for name, rel in DEV_SETS.items():
            gold: list[bool] = []
            turns = _turns(rel, limit, gold=gold)
            rw = get_rewriter("auto", _settings(url, llm_max_concurrency=16, llm_cache_size=len(turns) + 1))
            try:
                with ThreadPoolExecutor(16) as pool:
                    first = list(pool.map(lambda t: rw.rewrite(t[0], t[1], topic=t[2]), turns))
                    calls = rw.llm.stats.requests
                    list(pool.map(lambda t: rw.rewrite(t[0], t[1], topic=t[2]), turns))
                    repeat = rw.llm.stats.requests - calls
            finally:
                rw.close()
            n = len(turns)
            by_method: dict[str, int] = {}
            for r in first:
                by_method[r.method] = by_method.get(r.method, 0) + 1
            rows[name] = {"turns": n, "calls": calls, "per_100": 100 * calls / n, "saved_per_100": 100 - 100 * calls / n,
                          "repeat_calls": repeat, "methods": by_method, "file": rel,
                          "gold_per_100": 100 * sum(gold) / n}
    return rows


# --- entry points -----------------------------------------------------------------------------------
def work(quick: bool = False) -> dict:
    return {"gate": gate_overhead(quick), "deadline": deadlines(quick), "calls": calls_per_100(quick),
            "latency_s": LATENCY_S, "quick": quick}


def run(quick: bool = False) -> dict:
    from common import run_worker

    r = run_worker("llm_path", "work", {"quick": quick})
    r["met"] = r["gate"]["met"] and r["deadline"]["met"]
    return r


def render(r: dict) -> str:
    g, d, c = r["gate"], r["deadline"], r["calls"]
    gate_rows = [
        ("`plan_queries`, rule rewriter", g["rules"]["p50"], g["rules"]["p99"], g["rules"]["max"]),
        ("`plan_queries`, `auto` with an LLM (200 ms server)", g["auto"]["p50"], g["auto"]["p99"], g["auto"]["max"]),
        ("paired difference per turn (auto − rules)", g["diff"]["p50"], g["diff"]["p99"], g["diff"]["max"]),
        ("`needs_rewrite` alone", g["gate"]["p50"], g["gate"]["p99"], g["gate"]["max"]),
        ("`auto.rewrite()` alone (runs the gate itself)", g["direct"]["p50"], g["direct"]["p99"], g["direct"]["max"]),
    ]
    dl_rows = [(k, v["timeout_s"], v["elapsed"]["p50"], v["elapsed"]["max"], v["over"]["p50"], v["over"]["p99"],
                v["over"]["max"]) for k, v in d["timeouts"].items()]
    call_rows = [(name, x["turns"], x["calls"], x["per_100"], x["saved_per_100"], x["gold_per_100"],
                  x["repeat_calls"]) for name, x in c.items()]
    ok_gate = verdict(g["met"])
    ok_dl = verdict(d["met"])
    return f"""## LLM path (loopback OpenAI-compatible server, official `openai` SDK)

The server runs in its own process (`python -m convsearch.testing.openai_server`); all times in ms.

**Gate-resolved turns** ({g['turns']} turns the gate judges standalone, from the four dev sets; LLM configured,
server latency {r['latency_s'] * 1000:.0f} ms): requests that reached the server: **{g['requests']}**. Added p99 per turn
{g['added_p99_ms']:.3f} ms (target < {g['target_ms']:g} ms) → {ok_gate}

{table(("path", "p50", "p99", "max"), gate_rows)}

**Timeouts** ({d['n']} follow-up turns each; the server answers after 3 s; `auto` falls back to rules). Over = elapsed −
timeout, the cost of waiting for an LLM that does not come (target ≤ {d['target_ms']:g} ms) → {ok_dl}

{table(("client", "timeout s", "elapsed p50", "elapsed max", "over p50", "over p99", "over max"), dl_rows)}

Success path, server latency {r['latency_s'] * 1000:.0f} ms: elapsed p50 {d['success']['elapsed']['p50']:.1f} / p99
{d['success']['elapsed']['p99']:.1f} (our overhead above the server's latency: p50 {d['success']['over']['p50']:.1f}, p99
{d['success']['over']['p99']:.1f}). HTTP 500 on every request (1 retry, then rules): elapsed p50
{d['http500']['elapsed']['p50']:.1f} / max {d['http500']['elapsed']['max']:.1f}, {d['http500']['requests_per_turn']:.1f} requests per turn.

**LLM calls per 100 turns** (`auto`, topic on, window {WINDOW}; every turn of each file): only turns the gate sends on
cost a call; "saved" is the gate's saving against an LLM-on-every-turn rewriter; "gold" is the share of turns whose
human rewrite differs from the question (what a perfect gate would send on). A second pass over the same turns is
answered by the rewrite cache.

{table(("dev set", "turns", "LLM calls", "calls / 100 turns", "saved / 100 turns", "gold needs-rewrite / 100",
        "calls, second pass"), call_rows)}
"""


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    r = work(args.quick)
    r["met"] = r["gate"]["met"] and r["deadline"]["met"]
    print(render(r))
    return 0 if r["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
