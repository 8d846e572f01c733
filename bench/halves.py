"""Section 5b: every dev set on its tuning and its frozen half (`convsearch eval halves`), rendered from data.

    PYTHONPATH=$PWD/src .venv/bin/python bench/halves.py        # replaces section 5b of docs/BENCHMARKS.md in place
    .venv/bin/python bench/run.py --only halves                 # the same, through the benchmark runner

The start column is eval/halves_start.json (the branch point's numbers, saved once with `--json`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from common import REPO

EXPECTED = REPO / "eval" / "expected.yaml"
START = REPO / "eval" / "halves_start.json"
COMMAND = "convsearch eval halves --markdown docs/BENCHMARKS.md"
TIMEOUT_S = 600


def run(quick: bool = False) -> dict:
    """The full report (``--quick`` does not shorten it: the halves are the point)."""
    cli = str(Path(sys.executable).parent / "convsearch")
    proc = subprocess.run([cli, "eval", "halves", "--expected", str(EXPECTED), "--start", str(START), "--json"],
                          capture_output=True, text=True, cwd=REPO, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(f"`convsearch eval halves` failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def render(r: dict) -> str:
    from convsearch.eval.halves import load_report, render_markdown

    start = load_report(START) if START.is_file() else None
    return render_markdown(r, start, command=COMMAND)


if __name__ == "__main__":
    from convsearch.eval.halves import splice_section

    doc = REPO / "docs" / "BENCHMARKS.md"
    doc.write_text(splice_section(doc.read_text(encoding="utf-8"), render(run())), encoding="utf-8")
    print(f"rewrote section 5b of {doc.relative_to(REPO)}", file=sys.stderr)
