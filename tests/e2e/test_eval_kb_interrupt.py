"""Ctrl-C (or SIGTERM) while `convsearch eval kb` indexes a document set: one line saying what the set's cache kept,
exit 130 (typer turns a KeyboardInterrupt into a silent exit 130 unless the command says more), and the rerun
carries on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

CONVERSATIONS = """\
sets:
  notes:
    package: none
    root: {root}
    include: ["*.md"]
    lang: en
conversations:
- id: plans
  docs: notes
  turns:
  - q: Which plan includes priority support?
    gold: ["plan 7 includes priority support"]
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    env.update({"PYTHONUTF8": "1", "CONVSEARCH_DENSE": "off"})
    return env


def _committed(cache: Path) -> bool:
    return any(p.name.endswith(".json") and p.parent.name == "manifests" for p in cache.rglob("*.json"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_while_a_set_is_indexed_says_what_the_cache_kept(interrupt, tmp_path: Path, sig) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3000):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\nplan {i % 97} includes priority support for team {i}.\n",
                                       encoding="utf-8")
    conv = tmp_path / "kb.yaml"
    conv.write_text(CONVERSATIONS.format(root=docs), encoding="utf-8")
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "convsearch.cli", "eval", "kb", "--data", str(conv), "--data", str(docs),
           "--cache", str(cache)]
    p, out, err, running = interrupt(cmd, lambda: _committed(cache), env=_env(), sig=sig,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert running, "the set was indexed before it could be interrupted: make it larger"
    assert p.returncode == 130
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted: scanned 3000 files") and "rerun to carry on" in last, err
    assert "Traceback" not in err and out == ""
    again = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "notes" in again.stdout and "(all)" in again.stdout
