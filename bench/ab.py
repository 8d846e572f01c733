"""A/B of the rule path (benchmark 1) against another revision, on the same machine at the same time.

    .venv/bin/python bench/ab.py --base 7a64e4f --runs 6

Runs this tree's ``bench/rule_path.py`` (one harness, so both sides get the same turns and the same fresh hits)
``--runs`` times over each side, alternating base and head, and prints each run and the medians. The base
revision's ``src/`` is checked out into a temporary git worktree (removed at the end) and put first on the path.
A base from before the resolver moved to ``convsearch.resolve`` (session 14) gets that name as an alias of its
``convsearch.rewrite``.

Why: this machine's speed moves by tens of percent from day to day (the same code measured p99 1.25 ms on
2026-12-04 and 1.77 ms on 2026-12-06), so a latency number is only comparable with one taken beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import BENCH_DIR, REPO

_ALIAS = """\
import sys
try:
    import convsearch.resolve.rules  # noqa: F401
except ImportError:  # a tree from before the move: its resolver is convsearch.rewrite
    import convsearch.rewrite as pkg
    import convsearch.rewrite.rules  # noqa: F401
    import convsearch.rewrite.similar  # noqa: F401
    sys.modules.update({"convsearch.resolve": pkg, "convsearch.resolve.rules": pkg.rules,
                        "convsearch.resolve.similar": pkg.similar})
"""
KEYS = (("p50", "all", "p50"), ("p99", "all", "p99"), ("CPU p50", "cpu_all", "p50"), ("CPU p99", "cpu_all", "p99"))


def _run(src: Path, shim: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{shim}:{src}"}
    out = subprocess.run([sys.executable, str(BENCH_DIR / "rule_path.py")], cwd=BENCH_DIR, env=env, check=True,
                         capture_output=True, text=True).stdout
    fresh = json.loads(out)["fresh"]
    return {name: fresh[part][q] for name, part, q in KEYS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the revision to compare with (a commit, tag or branch)")
    ap.add_argument("--runs", type=int, default=6, help="runs of each side, alternating (default 6)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="convsearch-ab-") as tmp:
        wt, shim = Path(tmp) / "base", Path(tmp) / "shim"
        shim.mkdir()
        (shim / "sitecustomize.py").write_text(_ALIAS)
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(wt), args.base], check=True)
        try:
            sides: dict[str, list[dict[str, float]]] = {"base": [], "head": []}
            for i in range(args.runs):
                for side, src in (("base", wt / "src"), ("head", REPO / "src")):
                    r = _run(src, shim)
                    sides[side].append(r)
                    print(f"run {i + 1} {side}: " + ", ".join(f"{k} {v:.3f}" for k, v in r.items()), flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(wt)], check=False)
    print(f"\nmedians of {args.runs} runs, fresh hits, ms per turn (base {args.base} → head):")
    for name, _, _ in KEYS:
        b, h = (statistics.median(r[name] for r in sides[s]) for s in ("base", "head"))
        print(f"  {name}: {b:.3f} → {h:.3f} ({(h - b) / b:+.0%})")


if __name__ == "__main__":
    main()
