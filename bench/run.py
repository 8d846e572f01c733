"""Speed benchmarks → docs/BENCHMARKS.md (`make bench`).

    .venv/bin/python bench/run.py                  # everything: ~5 min on 2 cores once bench/.cache/ holds the indexes
    .venv/bin/python bench/run.py --quick          # smaller inputs → bench/.cache/BENCHMARKS-quick.md
    .venv/bin/python bench/run.py --only bm25      # one benchmark; the other sections keep their last results

Each benchmark runs in its own interpreter (LRU caches, imports and peak RSS never leak between them).
Its numbers are kept in bench/results/NAME.json (committed with the markdown, so a fresh checkout has them;
--quick keeps its own in bench/.cache/results-quick/), and the markdown is regenerated from the newest result
of every benchmark, so ``--only`` refreshes one section without discarding the others, on any machine (a
section from an earlier run says so). --quick never touches docs/BENCHMARKS.md
and skips the quality regression unless asked for with --only regress. Data is read in place from ../shared/data/conv-rewrite (or
$CONVSEARCH_BENCH_DATA); nothing from it is copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent  # noqa: E402
import batch_rewrite  # noqa: E402
import bm25_100k  # noqa: E402
import chat  # noqa: E402
import embed  # noqa: E402
import fanout  # noqa: E402
import halves  # noqa: E402
import history  # noqa: E402
import hybrid  # noqa: E402
import ingest  # noqa: E402
import learned_path  # noqa: E402
import llm_path  # noqa: E402
import million  # noqa: E402
import mixed_variants  # noqa: E402
import oracle  # noqa: E402
import regress  # noqa: E402
import rule_path  # noqa: E402
from common import CACHE, DATA, REPO, machine, table, verdict  # noqa: E402

BENCHMARKS = {
    "rule_path": rule_path,
    "batch": batch_rewrite,
    "bm25": bm25_100k,
    "hybrid": hybrid,
    "llm_path": llm_path,
    "history": history,
    "fanout": fanout,
    "regress": regress,
    "agent": agent,
    "chat": chat,
    "halves": halves,
    "mixed": mixed_variants,
    "learned": learned_path,
    "oracle": oracle,
    "ingest": ingest,
    "embed": embed,
    "million": million,
}



def _summary_rows(res: dict[str, dict]) -> list[tuple]:
    try:
        return _summary(res)
    except (KeyError, TypeError):
        return [("(a saved result is in an older format: rerun the full suite)", "", "", "")]


def _summary(res: dict[str, dict]) -> list[tuple]:
    rows = []
    if "rule_path" in res:
        r = res["rule_path"]["result"]
        f, p = r["fresh"]["all"], r["repeat"]["all"]
        rows.append(("1. Rule path per turn, p99 (fresh hits / repeat)", f"{f['p99']:.2f} ms / {p['p99']:.2f} ms",
                     f"≤ {r['target_ms']:g} ms", verdict(r["met"])))
    if "batch" in res:
        r = res["batch"]["result"]
        worst = min(r["datasets"], key=lambda d: d["tps_full"])
        rows.append(("2. `rewrite --batch` throughput (slowest dataset)",
                     f"{worst['tps_full']:,.0f} turns/s ({worst['name']})", f"≥ {r['target']:,.0f} turns/s", verdict(r["met"])))
    if "bm25" in res:
        r = res["bm25"]["result"]
        o, np_, nb = r["ours"]["full"]["p50"], r["bm25s"]["full"]["p50"], r["bm25s_numba"]["full"]["p50"]
        rows.append((f"3a. BM25 query p50 at {r['n']:,} docs, ours / bm25s default `BM25()` (numpy backend)",
                     f"{o / np_:.3f} ({o:.3f} ms vs {np_:.2f} ms)", "≤ 1", verdict(o / np_ <= 1)))
        rows.append((f"3b. BM25 query p50 at {r['n']:,} docs, ours / bm25s numba backend (its fastest)",
                     f"{o / nb:.2f} ({o:.3f} ms vs {nb:.3f} ms)", "≤ 1", verdict(o / nb <= 1)))
    if "hybrid" in res:
        r = res["hybrid"]["result"]
        q = r["query"]["search"]
        rows.append((f"4. Hybrid `search` at {r['n']:,} docs, p50 / p99", f"{q['p50']:.1f} ms / {q['p99']:.1f} ms",
                     "reported", "-"))
    if "llm_path" in res:
        r = res["llm_path"]["result"]
        rows.append(("LLM path: time a gate-resolved turn adds (p99) / worst overshoot past the LLM timeout",
                     f"{r['gate']['added_p99_ms']:.2f} ms / {r['deadline']['worst_over_ms']:.1f} ms",
                     "< 1 ms / ≤ 50 ms", verdict(r["met"])))
    if "history" in res:
        r = res["history"]["result"]
        for name, st in r.get("stores", {}).items():
            p99 = st["append+window"]["p99"]
            target = 5.0 if "sqlite" in name.lower() else 10.0
            rows.append((f"History append + windowed read p99 ({name})", f"{p99:.2f} ms", f"≤ {target:g} ms",
                         verdict(p99 <= target)))
    if "fanout" in res:
        r = res["fanout"]["result"]
        rows.append(("Fan-out over 3 backends (50/100/150 ms), turn p99 sync / async",
                     f"{r['sync']['p99']:.1f} ms / {r['async']['p99']:.1f} ms", f"≤ {r['target_ms']:g} ms "
                     f"(sum {r['sum_ms']:g})", verdict(r["met"])))
    if "agent" in res:
        r = res["agent"]["result"]
        rows.append(("Agent: prompt tokens all / none; 3 parallel searches / 1; loop overhead per step",
                     f"{r['token_ratio']:.2f}; {r['parallel']['ratio']:.2f}×; {r['overhead_ms']:.2f} ms",
                     "≤ 0.50; ≤ 1.3×; ≤ 2 ms", verdict(all(r["met"].values()))))
    if "chat" in res:
        r = res["chat"]["result"]
        rows.append(("Chat endpoint over the agent: added p99; first token − the agent's (p50)",
                     f"{r['added_p99_ms']:.2f} ms; {r['ttft_delta_ms']['p50']:+.2f} ms", "≤ 5 ms; ≤ +5 ms",
                     verdict(all(r["met"].values()))))
    if "learned" in res:
        r = res["learned"]["result"]
        worst = min(d["tps_learned"] for d in r["batch"]["datasets"])
        rows.append(("Learned rewriter per turn p99 / `rewrite --batch --rewriter learned` (slowest set)",
                     f"{r['per_turn']['learned']['all']['p99']:.2f} ms / {worst:,.0f} turns/s",
                     f"≤ {r['target_p99_ms']:g} ms / ≥ {r['target_tps']:,.0f} turns/s", verdict(r["met"])))
    if "ingest" in res:
        r = res["ingest"]["result"]
        key = "both_mb_s" if r["splitter"] else "convert_mb_s"
        rates = {k: r[k][key] for k in ("html_pg", "html_debref", "markdown") if k in r}
        if rates:
            rows.append((f"Ingest: {'convert + split' if r['splitter'] else 'convert'} MB of text/s, slowest of "
                         "HTML (2 doc sets) and Markdown", f"{min(rates.values()):.1f} ({min(rates, key=rates.get)})",
                         f"≥ {ingest.TARGET_MB_S:g}", verdict(r["met"])))
    if "million" in res:
        r = res["million"]["result"]
        q, s = r["query"], r["serve"]
        rows.append((f"Local index at {r['n']:,}: dense p99 approximate / hybrid HTTP p99 (4 clients) / open / "
                     "append ratio", f"{q['ann']['p99']:.1f} ms / {s['latency']['p99']:.0f} ms / "
                     f"{q['open_first_query_s']:.2f} s / {r['append_ratio']:.2f}×",
                     "≤ 20 ms / ≤ 100 ms / ≤ 2 s / ≤ 1.5×", verdict(all(r["met"].values()))))
    if "regress" in res:
        r = res["regress"]["result"]
        if r["status"] in ("ok", "fail"):
            rows.append(("5. Quality regression (`convsearch eval regress`)", r.get("summary") or r["status"],
                         "0 FAIL", verdict(r["status"] == "ok")))
    return rows


def render(res: dict[str, dict], *, command: str, started: str, quick: bool, wall_s: float) -> str:
    m = machine()
    pk = m["packages"]
    load = res.get("_load", {})
    lines = [
        "# Benchmarks",
        "",
        "Speed numbers for issue 2 (\"Numbers\"), regenerated by one command; measured, never asserted in tests.",
        "",
        f"- **Date**: {started}{' — **quick run** (smaller inputs; not the reference numbers)' if quick else ''}",
        f"- **Command**: `{command}` (`make bench` runs `.venv/bin/python bench/run.py`); total {wall_s / 60:.1f} min",
        f"- **Machine**: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), {m['ram']} RAM, {m['os']}",
        f"- **Python**: {m['python']}",
        "- **Packages**: " + ", ".join(f"{k} {v}" for k, v in pk.items()),
        f"- **Load average** (1 min) before / after: {load.get('before', '?')} / {load.get('after', '?')}"
        " (a shared machine: other work running at the same time shows up in the tails)",
        f"- **Data**: `{_rel(DATA)}` read in place; per-benchmark inputs are described in each section.",
        "- **Percentiles**: numpy's linearly interpolated p50/p95/p99 over all samples; times are wall clock "
        "(`time.perf_counter_ns`), one thread, garbage collector on.",
        "",
        "Service load numbers (HTTP `/v1/search` at concurrency 32) are in `docs/BENCHMARKS_SERVE.md`, "
        "regenerated by `make bench-serve`; web search under load (limiter, cache tiers, fan-out, the seed table) "
        "in `docs/BENCHMARKS_WEB.md`, regenerated by `make bench-web`; Milvus Lite vs the local index in "
        "`docs/BENCHMARKS_MILVUS.md`, regenerated by `make bench-milvus`.",
        "",
        "## Summary",
        "",
        table(("benchmark", "measured", "target", "verdict"), _summary_rows(res)),
        "",
    ]
    for name, mod in BENCHMARKS.items():
        if name not in res or name == "_load":
            if name == "regress":
                why = "skipped by --quick (`--only regress` runs it)" if quick else "not run yet"
                lines += ["## 5. Quality regression (`convsearch eval regress`)", "", f"_Placeholder: {why}._", ""]
            else:  # never drop a section silently: say it has no saved result (bench/results/NAME.json)
                lines += [f"## {name}", "", f"_No saved result in `{_rel(results_dir(quick))}/{name}.json`: run "
                          f"`.venv/bin/python bench/run.py --only {name}`._", ""]
            continue
        entry = res[name]
        if name != "regress":
            section_note = (f"\n\n_This benchmark took {entry.get('seconds', 0):.0f} s; load average (1 min) at its end: "
                            f"{entry.get('load', float('nan')):.2f}._")
        else:
            section_note = ""
        try:
            section = mod.render(entry["result"]).rstrip()
        except (KeyError, TypeError) as exc:  # a result saved by an older version of the benchmark
            lines += [f"## {name}", "", f"_Saved result from {entry['date']} is in an older format ({exc!r}): "
                      f"rerun `.venv/bin/python bench/run.py --only {name}`._", ""]
            continue
        if entry.get("stale"):
            first, _, rest = section.partition("\n")
            section = (f"{first}\n\n> From an earlier run: {entry['date']}, `{entry['command']}`"
                       f"{' (quick)' if entry.get('quick') else ''}.\n{rest}")
        lines += [section + section_note, ""]
    lines += ["## How to rerun", "",
              "```",
              "make bench                                   # everything → docs/BENCHMARKS.md",
              ".venv/bin/python bench/run.py --quick        # smaller inputs → bench/.cache/BENCHMARKS-quick.md",
              ".venv/bin/python bench/run.py --only bm25    # one section: " + ", ".join(BENCHMARKS),
              "rm -rf bench/.cache                          # rebuild the cached indexes",
              ".venv/bin/python bench/ab.py --base REV      # the rule path beside another revision, alternating runs",
              "```", ""]
    return "\n".join(lines)


def results_dir(quick: bool) -> Path:
    """Where each benchmark's newest result is kept: committed for full runs, a cache for quick ones."""
    return CACHE / "results-quick" if quick else REPO / "bench" / "results"


def _rel(p: Path) -> str:
    try:
        return os.path.relpath(p, REPO)
    except ValueError:
        return str(p)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller inputs (a faster, rougher run)")
    ap.add_argument("--only", action="append", choices=list(BENCHMARKS), metavar="NAME",
                    help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}")
    ap.add_argument("--out", type=Path, default=None,
                    help="markdown file to write (default docs/BENCHMARKS.md; with --quick bench/.cache/BENCHMARKS-quick.md)")
    args = ap.parse_args(argv)
    # quick numbers never overwrite the reference file or mix with full results
    results = results_dir(args.quick)
    if args.out is None:
        args.out = CACHE / "BENCHMARKS-quick.md" if args.quick else REPO / "docs" / "BENCHMARKS.md"
    names = args.only or [n for n in BENCHMARKS if not (args.quick and n == "regress")]
    command = "bench/run.py" + (" --quick" if args.quick else "") + "".join(f" --only {n}" for n in args.only or ())
    command = f"{_rel(Path(sys.executable))} {command}" if not sys.executable.endswith("/python") else f".venv/bin/python {command}"
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    t0 = time.perf_counter()
    results.mkdir(parents=True, exist_ok=True)
    load_before = f"{os.getloadavg()[0]:.2f}"
    failures = []
    for name in names:
        mod = BENCHMARKS[name]
        print(f"[bench] {name} …", file=sys.stderr, flush=True)
        t = time.perf_counter()
        try:
            result = mod.run(quick=args.quick)
        except Exception as exc:  # one broken benchmark must not hide the others' numbers
            print(f"[bench] {name} FAILED: {exc}", file=sys.stderr)
            failures.append(name)
            continue
        entry = {"result": result, "date": started, "command": command, "quick": args.quick,
                 "seconds": time.perf_counter() - t, "load": os.getloadavg()[0]}
        (results / f"{name}.json").write_text(json.dumps(entry, indent=1), encoding="utf-8")
        print(f"[bench] {name} done in {entry['seconds']:.0f} s", file=sys.stderr, flush=True)
    res: dict[str, dict] = {}
    for name in BENCHMARKS:
        p = results / f"{name}.json"
        if p.exists():
            entry = json.loads(p.read_text(encoding="utf-8"))
            entry["stale"] = entry["date"] != started
            res[name] = entry
    res["_load"] = {"before": load_before, "after": f"{os.getloadavg()[0]:.2f}"}
    wall = time.perf_counter() - t0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(res, command=command, started=started, quick=args.quick, wall_s=wall), encoding="utf-8")
    print(f"[bench] wrote {_rel(args.out)} in {wall / 60:.1f} min", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
