"""`convsearch index --backend milvus`, `--delete` and `copy-index` as subprocesses, Milvus Lite under tmp_path."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pymilvus")

pytestmark = pytest.mark.e2e

DOCS = [
    {"id": "zh-1", "title": "AnySearch 价格", "text": "AnySearch 专业版每月收费 99 元。", "url": "https://a.example/p",
     "date": "2024-06-01", "lang": "zh", "metadata": {"source_type": "faq", "source": "a.example"}},
    {"id": "zh-2", "title": "番禺露营", "text": "番禺最近三天有雷阵雨，不适合露营。", "url": "https://w.example/py",
     "date": "2024-11-28", "lang": "zh"},
    {"id": "en-1", "title": "Falcon 1", "text": "SpaceX first launched its Falcon 1 rocket in 2006.",
     "url": "https://h.example/f1", "date": "2020-01-02", "lang": "en"},
]


def _open(tmp_path, **kw):
    from convsearch.backends.milvus import MilvusBackend

    return MilvusBackend(tmp_path / "data" / "milvus.db", create=False, **kw)


def test_index_delete_and_copy(tmp_path, run_cli):
    src = tmp_path / "docs.jsonl"
    src.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS) + "\n", encoding="utf-8")
    r = run_cli("index", str(src), "--backend", "milvus", "--data-dir", "data")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("scanned 1 files: 1 new") and "milvus.db holds 3 passages" in r.stdout
    with _open(tmp_path) as b:
        assert b.search("露营", top_k=1)[0].id == "zh-2"
        assert b.search("launches", top_k=1)[0].id == "en-1"
        assert b.search("价格", filters={"source_type": "faq"})[0].id == "zh-1"
    r = run_cli("index", "--backend", "milvus", "--data-dir", "data", "--delete", "zh-2", "--delete", "nope")
    assert r.returncode == 0, r.stderr
    assert "deleted 1 of 2 ids" in r.stdout
    with _open(tmp_path) as b:
        assert len(b) == 2

    # a local index copied into another Milvus file (upsert: running it twice changes nothing)
    r = run_cli("index", str(src), "--data-dir", "local")
    assert r.returncode == 0, r.stderr
    env = {"CONVSEARCH_MILVUS_URI": str(tmp_path / "copy.db")}
    for _ in range(2):
        r = run_cli("copy-index", "--data-dir", "local", "--to", "milvus", env=env)
        assert r.returncode == 0, r.stderr
        assert "copied 3 documents" in r.stdout and "(3 in total)" in r.stdout
    from convsearch.backends.milvus import MilvusBackend

    with MilvusBackend(tmp_path / "copy.db", create=False) as b:
        got = b.get("zh-1")
        assert got.title == "AnySearch 价格" and got.metadata["source_type"] == "faq" and got.date == "2024-06-01"
        assert b.search("番禺 露营", top_k=1)[0].id == "zh-2"


@pytest.mark.parametrize("args,env,needle,code", [
    (["index", "x.jsonl", "--backend", "nosuch"], {}, "unknown backend", 3),
    (["index", "--backend", "milvus"], {}, "missing argument PATHS", 2),
    (["index", "x.jsonl", "--backend", "milvus"], {"CONVSEARCH_MILVUS_URI": "kb.sqlite"}, "must end in .db", 3),
    (["copy-index", "--data-dir", "empty"], {}, "no index at", 4),
    (["index", "x.jsonl", "--backend", "milvus"], {"CONVSEARCH_MILVUS_URI": "http://127.0.0.1:9"},
     "cannot open Milvus", 5),
])
def test_bad_input_is_one_line(tmp_path, run_cli, args, env, needle, code):
    (tmp_path / "x.jsonl").write_text(json.dumps(DOCS[0], ensure_ascii=False) + "\n", encoding="utf-8")
    r = run_cli(*args, env=env)
    assert r.returncode == code, (r.stdout, r.stderr)
    assert needle in r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
