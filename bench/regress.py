"""Section 5: the quality regression table (`convsearch eval regress --markdown FILE`), embedded as is."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO

EXPECTED = REPO / "eval" / "expected.yaml"
TIMEOUT_S = 900


def _cli() -> str:
    return str(Path(sys.executable).parent / "convsearch")


def run(quick: bool = False) -> dict:
    """The same full regression with or without --quick (run.py skips it in --quick unless --only regress)."""
    probe = subprocess.run([_cli(), "eval", "regress", "--help"], capture_output=True, text=True, cwd=REPO)
    if probe.returncode != 0:
        return {"status": "missing", "why": "`convsearch eval regress` is not available in this build"}
    if not EXPECTED.is_file():
        return {"status": "missing", "why": f"`{EXPECTED.relative_to(REPO)}` does not exist yet"}
    with tempfile.TemporaryDirectory(prefix="convsearch-bench-") as tmp:
        md = Path(tmp) / "regress.md"
        cmd = [_cli(), "eval", "regress", "--expected", str(EXPECTED.relative_to(REPO)), "--markdown", str(md),
               "--allow-missing-data"]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "why": f"`convsearch eval regress` took longer than {TIMEOUT_S} s"}
        secs = time.perf_counter() - t0
        text = md.read_text(encoding="utf-8") if md.is_file() else ""
    counts = re.search(r"(\d+) OK, (\d+) FAIL, (\d+) ERROR, (\d+) SKIP", proc.stdout + proc.stderr)
    n_fail = int(counts.group(2)) + int(counts.group(3)) if counts else text.count(" ✗")
    shown = ["convsearch", *cmd[1:]]
    shown[shown.index("--markdown") + 1] = "FILE"
    # judged on the counts as well as the exit code (the CLI has lost exit codes before)
    return {"status": "ok" if proc.returncode == 0 and not n_fail else "fail", "exit_code": proc.returncode,
            "summary": counts.group(0) if counts else "", "seconds": secs,
            "markdown": text, "command": " ".join(shown), "stderr_tail": proc.stderr[-1500:] if proc.returncode else ""}


def render(r: dict) -> str:
    head = "## 5. Quality regression (`convsearch eval regress`)\n\n"
    if r["status"] in ("missing", "timeout"):
        return head + f"_Placeholder: {r['why']}._\n"
    body = r["markdown"].strip() or "_(the command wrote no markdown)_"
    # demote the embedded file's headings below this section's
    body = "\n".join(("##" + line) if line.startswith("#") else line for line in body.splitlines())
    summary = f"{r['summary']}; " if r.get("summary") else ""
    status = f"{summary}exit code {r['exit_code']}" + ("" if r["status"] == "ok" else "; ✗ marks a FAIL")
    err = f"\n\nstderr (tail):\n\n```\n{r['stderr_tail'].strip()}\n```" if r.get("stderr_tail") else ""
    return head + f"`{r['command']}` ({r['seconds']:.0f} s; {status}):\n\n{body}{err}\n"


if __name__ == "__main__":
    # `PYTHONPATH=$PWD/src .venv/bin/python bench/regress.py`: rerun and replace just section 5 of docs/BENCHMARKS.md
    from convsearch.eval.halves import splice_section

    doc = REPO / "docs" / "BENCHMARKS.md"
    result = run()
    doc.write_text(splice_section(doc.read_text(encoding="utf-8"), render(result),
                                  heading="## 5. Quality regression (`convsearch eval regress`)"), encoding="utf-8")
    print(f"rewrote section 5 of {doc.relative_to(REPO)}: {result.get('summary', result['status'])}", file=sys.stderr)
