"""Benchmark 2: ``rewrite --batch`` throughput (RuleRewriter) on whole dev/valid files.

Each input file is built in a temp dir from the shared data (the IN schema: id, history, history_roles,
question, topic) and deleted afterwards. Measured three ways:

- **in-process, full call**: ``rewrite_batch(src, dst)`` wall time: read + parse + rewrite + write (the target);
- **in-process, rewrite loop**: the seconds ``rewrite_batch`` itself reports (rewrite + write, no parsing);
- **CLI**: ``convsearch rewrite --batch IN --out OUT`` in a new process (interpreter start, imports and
  the first-use cost of the jieba dictionary included).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from common import REPO, run_worker, table, verdict, write_batch_input

TARGET = 3000.0  # issue 25: turns/s on the slowest dev set
DATASETS = (("canard dev", "canard/dev.jsonl"), ("su2019 dev", "rewrite-su2019-zh/dev.jsonl"),
            ("restoration-200k valid", "restoration-200k-zh/valid.jsonl"))


def work(quick: bool = False) -> dict:
    from turns import demo_turns

    from convsearch.batch import rewrite_batch

    limit = 1000 if quick else None
    out: dict = {"datasets": [], "limit": limit}
    with tempfile.TemporaryDirectory(prefix="convsearch-bench-") as tmp:
        tmpd = Path(tmp)
        # warm-up: the jieba dictionary, the word lists and the code paths (hand-written turns only)
        warm = tmpd / "warm.jsonl"
        with warm.open("w", encoding="utf-8") as fh:
            for i, t in enumerate(demo_turns()):
                fh.write(json.dumps({"id": f"w{i}", "history": [m.content for m in t.history],
                                     "history_roles": [m.role for m in t.history], "question": t.query,
                                     "topic": t.topic}, ensure_ascii=False) + "\n")
        rewrite_batch(warm, tmpd / "warm.out.jsonl", warm=True)  # the CLI's start: warm-up, then gc.freeze (once)
        for name, rel in DATASETS:
            src, dst = tmpd / f"{Path(rel).parent.name}.in.jsonl", tmpd / f"{Path(rel).parent.name}.out.jsonl"
            n_in = write_batch_input(rel, src, limit)
            c0 = time.process_time()
            t0 = time.perf_counter()
            n, secs = rewrite_batch(src, dst)
            wall = time.perf_counter() - t0
            cpu = time.process_time() - c0
            recs = [json.loads(x) for x in dst.read_text(encoding="utf-8").splitlines()]
            lat = np.array([r["latency_ms"] for r in recs])
            # the CLI, end to end, in a fresh process
            t1 = time.perf_counter()
            proc = subprocess.run([str(Path(sys.executable).parent / "convsearch"), "rewrite", "--batch", str(src),
                                   "--out", str(tmpd / "cli.out.jsonl")], capture_output=True, text=True, cwd=REPO)
            cli = time.perf_counter() - t1
            if proc.returncode:
                raise RuntimeError(proc.stderr[-2000:])
            out["datasets"].append({
                "name": name, "file": rel, "records": n, "written": n_in, "rewritten": sum(r["rewritten"] for r in recs),
                "wall_s": wall, "loop_s": secs, "cli_s": cli,
                "tps_full": n / wall, "tps_loop": n / secs, "tps_cli": n / cli, "cpu_s": cpu, "tps_cpu": n / cpu,
                "latency_ms": {"p50": float(np.percentile(lat, 50)), "p99": float(np.percentile(lat, 99)),
                               "max": float(lat.max())},
            })
    return out


def run(quick: bool = False) -> dict:
    r = run_worker("batch_rewrite", "work", {"quick": quick})
    n = sum(d["records"] for d in r["datasets"])
    r["total"] = {"records": n, "tps_full": n / sum(d["wall_s"] for d in r["datasets"]),
                  "tps_cli": n / sum(d["cli_s"] for d in r["datasets"])}
    r["target"] = TARGET
    r["met"] = all(d["tps_full"] >= TARGET for d in r["datasets"])
    return r


def render(r: dict) -> str:
    rows = [(d["name"], d["records"], d["rewritten"], d["tps_full"], d.get("tps_cpu", float("nan")), d["tps_loop"], d["tps_cli"],
             d["latency_ms"]["p50"], d["latency_ms"]["p99"], d["latency_ms"]["max"],
             verdict(d["tps_full"] >= r["target"])) for d in r["datasets"]]
    rows.append(("**all three**", r["total"]["records"], "", r["total"]["tps_full"], "", "", r["total"]["tps_cli"], "", "", "",
                 verdict(r["total"]["tps_full"] >= r["target"])))
    lim = f" (first {r['limit']:,} records of each file: --quick)" if r.get("limit") else " (every record of each file)"
    return f"""## 2. `rewrite --batch` throughput

`convsearch.batch.rewrite_batch(IN, OUT)` with the rule rewriter on JSONL files built in a temp dir from the
shared data{lim}, after a warm-up on the hand-written turns (with the CLI's start-up: `warm=True`, the rule path warmed and the heap frozen once). Columns: **full** = wall time of the whole call
(read + parse + rewrite + write; the target applies to this one), **loop** = the seconds `rewrite_batch`
reports (rewrite + write), **per CPU-second** = turns / process CPU time of the full call (what the
code costs without waits for a core on a busy machine), **CLI** = `convsearch rewrite --batch IN --out OUT` as a new process (interpreter
start, imports and first use of the jieba dictionary included). Latency = the per-record `latency_ms` field.

Target: ≥ {r['target']:,.0f} turns/s per dataset → {verdict(r['met'])}.

{table(("dataset", "turns", "rewritten", "full turns/s", "full, per CPU-second", "loop turns/s", "CLI turns/s", "p50 ms", "p99 ms", "max ms", "target"), rows)}
"""


if __name__ == "__main__":
    print(json.dumps(work(quick="--quick" in sys.argv), indent=1))
