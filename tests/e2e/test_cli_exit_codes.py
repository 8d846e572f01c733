"""Exit codes and messages of issue 27 (the README's table: 0 ok, 1 unexpected, 2 usage or bad input,
3 configuration, 4 no index, 5 backend, 6 deadline, 7 history store, 130 interrupted), as a new user meets
them. `ask` without an LLM (exit 3) is in test_agent_cli.py; the HTTP side in tests/unit/test_server_messages.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def test_a_mistyped_command_suggests_the_right_one_in_one_clause(run_cli) -> None:
    r = run_cli("serach", "价格")
    assert r.returncode == 2
    assert r.stderr.strip() == "error: no such command 'serach' (did you mean search?); see convsearch --help"


def test_an_unwritable_data_dir_is_bad_input_not_an_unexpected_error(run_cli, tmp_path: Path) -> None:
    (tmp_path / "docs.jsonl").write_text(json.dumps({"id": "a", "text": "AnySearch 价格"}) + "\n", encoding="utf-8")
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    r = run_cli("index", "docs.jsonl", "--data-dir", str(tmp_path / "a-file" / "data"))
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith(f"error: cannot write the data dir {tmp_path / 'a-file' / 'data'}")
    assert "--data-dir" in line and "unexpected" not in line


def _committed(tantivy_dir: Path) -> bool:
    """True once a first batch is committed (tantivy's meta.json lists a segment)."""
    try:
        return bool(json.loads((tantivy_dir / "meta.json").read_text(encoding="utf-8"))["segments"])
    except (OSError, ValueError, KeyError):
        return False


def _index_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    env.update({"PYTHONUTF8": "1", "CONVSEARCH_DENSE": "off"})
    return env


def _interrupted_index(interrupt, tmp_path: Path, n: int,
                       **popen: object) -> tuple[subprocess.Popen[str], str, list[str], Path]:
    """``convsearch index`` over a JSONL of ``n`` records, Ctrl-C once its first batch is committed: (the process,
    its stderr, the command, the data dir)."""
    with open(tmp_path / "big.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"d{i}", "text": f"document {i} about plans {i % 97}"}) + "\n")
    data = tmp_path / "data"
    cmd = [sys.executable, "-m", "convsearch.cli", "index", str(tmp_path / "big.jsonl"), "--data-dir", str(data)]
    p, _out, err, _running = interrupt(cmd, lambda: _committed(data / "index" / "tantivy"), env=_index_env(), **popen)
    return p, err, cmd, data


def test_ctrl_c_during_index_says_how_far_it_got_and_a_rerun_finishes(interrupt, tmp_path: Path) -> None:
    from convsearch.backends.local import LocalIndex

    n = 60_000
    p, err, cmd, data = _interrupted_index(interrupt, tmp_path, n)
    assert p.returncode == 130, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("interrupted: scanned 1 files: 0 new") and lines[0].endswith("rerun to carry on")
    done = len(LocalIndex(data / "index", create=False))
    assert 0 < done < n  # whole batches of the file are in; the file is not finished, so the rerun reads it again
    r = subprocess.run(cmd, env=_index_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("scanned 1 files: 1 new")
    assert len(LocalIndex(data / "index", create=False)) == n


def test_ctrl_c_is_heard_even_when_the_process_was_started_with_sigint_ignored(interrupt, tmp_path: Path) -> None:
    """A background job of a script, or a test runner's worker, may start the CLI with SIGINT ignored (the ignore is
    inherited through exec): an index run still stops on it, keeping its whole batches."""
    p, err, _cmd, _data = _interrupted_index(interrupt, tmp_path, 60_000,
                                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("interrupted: scanned 1 files: 0 new")
