"""The Milvus backend against a real Milvus: Lite in a file under tmp_path, and through pymilvus's remote client
on the ``milvus_server`` fixture (a server when CONVSEARCH_TEST_MILVUS_URI is set, else Lite's engine behind a
gRPC server on loopback; the run's summary says which ran; see tests/integration/conftest.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from dataclasses import replace
from datetime import date

import pytest

pytest.importorskip("pymilvus")

from convsearch import SearchBackend  # noqa: E402
from convsearch.backends.base import Filters, Recency  # noqa: E402
from convsearch.backends.milvus import MilvusBackend, MilvusSettings, from_settings  # noqa: E402
from convsearch.config import Settings  # noqa: E402
from convsearch.embed import HashEmbedder  # noqa: E402
from convsearch.errors import BackendError, ConfigError, IndexMissingError, InputError  # noqa: E402
from convsearch.types import Document, Hit  # noqa: E402

pytestmark = pytest.mark.integration


def kb_docs(corpus) -> list[Document]:
    """CORPUS with lang, a source, a source_type (prices are FAQ entries) and a kb_version."""
    out = []
    for d in corpus:
        faq = "price" in d.id or "pricing" in d.id
        out.append(replace(d, lang=d.id.split("-")[0], metadata={
            "source": d.url.split("/")[2], "source_type": "faq" if faq else "doc",
            "kb_version": "v2" if d.date and d.date >= "2024" else "v1"}))
    return out


def _lite_released(path) -> bool:
    from milvus_lite.server_manager import server_manager_instance

    return str(path) not in server_manager_instance._servers


@pytest.fixture(params=["lite", "server"])
def target(request, tmp_path):
    """(uri, prefix, token) of an empty Milvus: a Lite file in tmp_path, or the ``milvus_server`` fixture (a real
    server when CONVSEARCH_TEST_MILVUS_URI is set, else Lite behind a gRPC server) with a fresh prefix."""
    if request.param == "lite":
        yield str(tmp_path / "kb.db"), "convsearch", None
        assert _lite_released(tmp_path / "kb.db"), "a Lite server was left running"
        return
    uri, token = request.getfixturevalue("milvus_server")
    prefix = f"t_{uuid.uuid4().hex[:10]}"
    yield uri, prefix, token
    from pymilvus import MilvusClient

    c = MilvusClient(uri, **({"token": token} if token else {}))
    for kind in ("faq", "documents"):
        c.drop_collection(f"{prefix}_{kind}")
    c.close()


@pytest.fixture
def mb(target, corpus):
    uri, prefix, token = target
    b = MilvusBackend(uri, token=token, embedder=HashEmbedder(dim=64), prefix=prefix, today=date(2024, 12, 1))
    b.add(kb_docs(corpus))
    yield b
    b.close()


def test_protocol_and_capabilities(mb):
    assert isinstance(mb, SearchBackend)
    caps = mb.capabilities
    assert caps.writable and caps.dense
    assert caps.filters == {"lang", "source", "source_type", "kb_version", "date_from", "date_to"}
    assert Recency.WEEK in caps.recency
    assert len(mb) == 13


@pytest.mark.parametrize("query,expected", [("番禺 露营", "zh-camp-py"), ("Falcon rocket launch", "en-spacex-launch"),
                                            ("入职审批", "zh-onboard-approval"), ("cats sleeping", "en-cat")])
def test_ranked_hybrid_hits_zh_en(mb, query, expected):
    hits = mb.search(query, top_k=5)
    assert hits and all(isinstance(h, Hit) for h in hits)
    assert hits[0].id == expected
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    assert len({h.id for h in hits}) == len(hits)
    assert all(h.source == "hybrid" and h.score > 0 for h in hits)
    assert hits[0].metadata["lang"] == expected.split("-")[0]


def test_english_stemming_matches_on_both_sides(target, corpus):
    uri, prefix, token = target
    # BM25 only: stemming must come from the shared tokenisation
    with MilvusBackend(uri, token=token, prefix=prefix) as b:
        b.add(kb_docs(corpus))
        hits = b.search("launches", top_k=3)
        assert hits[0].id == "en-spacex-launch"
        assert hits[0].source == "bm25" and hits[0].score > 0  # Lite's negative distances are normalised
        assert b.search("露营", top_k=5)[0].id.startswith("zh-camp")
        assert not b.capabilities.dense


def test_top_k_and_empty(mb):
    assert len(mb.search("AnySearch NovaDB SpaceX 价格 露营", top_k=3)) == 3
    assert len(mb.search("AnySearch NovaDB SpaceX 价格 露营", top_k=1)) == 1
    assert mb.search("   ", top_k=3) == []


@pytest.mark.parametrize("field,value", [("lang", "en"), ("lang", "zh"), ("source", "hr.example"),
                                         ("source_type", "faq"), ("source_type", "doc"), ("kb_version", "v1")])
def test_filters_apply_natively(mb, field, value):
    hits = mb.search("AnySearch NovaDB 价格 pricing 露营 入职 SpaceX", top_k=13, filters={field: value})
    assert hits
    assert all(str(h.metadata.get(field)) == value for h in hits)
    unfiltered = mb.search("AnySearch NovaDB 价格 pricing 露营 入职 SpaceX", top_k=13)
    assert {h.id for h in hits} == {h.id for h in unfiltered if str(h.metadata.get(field)) == value}


def test_date_range_and_recency(mb):
    hits = mb.search("价格 pricing 露营", top_k=13, filters=Filters(date_from="2024-05-15", date_to="2024-12"))
    assert hits and all("2024-05-15" <= h.date <= "2024-12-01" for h in hits)
    week = mb.search("露营 价格 pricing", top_k=13, recency=Recency.WEEK)  # today = 2024-12-01
    assert {h.id for h in week} == {"zh-camp-sz", "zh-camp-py"}
    assert mb.search("露营", top_k=5, recency="no_limit")


@pytest.mark.parametrize("evil", ['zh" or lang != "', 'zh\\" or lang != \\"', '" or 1 == 1 or id == "',
                                  "zh' or '1'=='1", 'en" || lang like "%'])
def test_filter_injection_matches_nothing(mb, evil):
    assert mb.search("价格 pricing 露营 SpaceX", top_k=13, filters={"lang": evil}) == []
    assert mb.search("价格 pricing", top_k=13, filters={"source": evil}) == []


def test_filter_control_characters_and_bad_dates_are_input_errors(mb):
    with pytest.raises(InputError):
        mb.search("价格", filters={"lang": "zh\n or 1"})
    with pytest.raises(InputError, match="ISO date"):
        mb.search("价格", filters={"date_from": '2024" or "1"=="1'})


def test_upsert_replaces_and_moves_between_collections(mb):
    mb.add([Document("zh-leave", "员工每年享有十五天带薪年假。", title="年假制度（新）", lang="zh",
                     metadata={"source": "hr.example", "source_type": "faq", "kb_version": "v3"})])
    assert len(mb) == 13
    got = mb.get("zh-leave")
    assert got.title == "年假制度（新）" and got.metadata["source_type"] == "faq"
    hits = mb.search("年假", top_k=3, filters={"source_type": "faq"})
    assert hits[0].id == "zh-leave" and hits[0].metadata["kb_version"] == "v3"
    assert all(h.id != "zh-leave" for h in mb.search("年假", top_k=13, filters={"source_type": "doc"}))


def test_delete_by_id_counts_what_existed(mb):
    assert mb.delete(["zh-camp-py", "no-such-id", 'x" or id != "']) == 1
    assert len(mb) == 12
    assert all(h.id != "zh-camp-py" for h in mb.search("番禺 露营", top_k=13))
    assert mb.get("zh-camp-py") is None


def test_search_many_merges_variants_by_best_score(mb):
    one = mb.search("番禺 露营", top_k=5)
    many = mb.search_many(["番禺 露营", "深圳 露营"], top_k=5)
    assert many[0].id in {"zh-camp-py", "zh-camp-sz"}
    assert {"zh-camp-py", "zh-camp-sz"} <= {h.id for h in many}
    best_py = next(h.score for h in many if h.id == "zh-camp-py")
    assert best_py >= next(h.score for h in one if h.id == "zh-camp-py")


def test_dense_query_reaches_the_dense_side(mb):
    plain = mb.search("费用", top_k=5)  # no BM25 term in the corpus: dense only on hashed words
    assert all(h.id != "zh-nova-price" or h.rank > 1 for h in plain)
    hyde = mb.search("费用", top_k=5, dense_query="NovaDB 按节点收费 每个节点每月 500 元")
    assert hyde[0].id == "zh-nova-price"


def test_async_twin_matches_sync(mb):
    sync = [h.id for h in mb.search("AnySearch 价格", top_k=5)]
    assert [h.id for h in asyncio.run(mb.asearch("AnySearch 价格", top_k=5))] == sync


def test_reopen_keeps_documents_and_checks_the_embedder(target, corpus):
    uri, prefix, token = target
    with MilvusBackend(uri, token=token, embedder=HashEmbedder(dim=64), prefix=prefix) as b:
        b.add(kb_docs(corpus)[:4])
    with MilvusBackend(uri, token=token, embedder=HashEmbedder(dim=64), prefix=prefix, create=False) as b:
        assert len(b) == 4
        assert len(list(b.iter_documents())) == 4
    with pytest.raises(BackendError, match=r"\(64 dims\), not hash/words \(32 dims\)"):
        MilvusBackend(uri, token=token, embedder=HashEmbedder(dim=32), prefix=prefix)


def test_missing_collections_without_create(target):
    uri, prefix, token = target
    with pytest.raises(IndexMissingError, match="convsearch index PATH --backend milvus"):
        MilvusBackend(uri, token=token, prefix=prefix, create=False)


def test_closed_backend_says_so(target):
    uri, prefix, token = target
    b = MilvusBackend(uri, token=token, prefix=prefix)
    b.close()
    b.close()  # idempotent
    with pytest.raises(BackendError, match="closed"):
        b.search("x")


def test_a_second_process_gets_one_clear_line(tmp_path, corpus):
    path = tmp_path / "kb.db"
    with MilvusBackend(path, prefix="convsearch") as b:
        b.add(kb_docs(corpus)[:2])
        code = ("from convsearch.backends.milvus import MilvusBackend\n"
                "from convsearch.errors import BackendError\n"
                f"try:\n    MilvusBackend({str(path)!r})\n"
                "except BackendError as e:\n    print('BackendError:', e)\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("BackendError: cannot open Milvus at"), out.stdout + out.stderr
        assert "Traceback" not in out.stderr


def test_from_settings(tmp_path, monkeypatch):
    s = Settings.from_env({"CONVSEARCH_DATA_DIR": str(tmp_path), "CONVSEARCH_DENSE": "off",
                           "CONVSEARCH_MILVUS_TOKEN": "root:Milvus", "CONVSEARCH_MILVUS_PREFIX": "kb1"})
    conf = MilvusSettings.of(s)
    assert "root:Milvus" not in repr(s) + repr(conf) and "CONVSEARCH_MILVUS_TOKEN" in repr(conf.token)
    assert conf.collection_prefix == "kb1"
    b = from_settings(s.with_sections(replace(conf, token=None)), create=True)
    with pytest.raises(IndexMissingError):
        from_settings(Settings.from_env(s.to_env(), milvus_prefix="other"))
    try:
        assert b.uri == str((tmp_path / "milvus.db").absolute()) and b.prefix == "kb1" and b.embedder is None
    finally:
        b.close()
    with pytest.raises(ConfigError, match=r"must end in \.db"):
        from_settings(Settings.from_env(s.to_env(), milvus_uri=str(tmp_path / "kb.sqlite")))
    with pytest.raises(ConfigError, match="CONVSEARCH_MILVUS_PREFIX"):
        from_settings(Settings.from_env(s.to_env(), milvus_prefix="bad-prefix"))


def test_server_token_is_sent_and_checked(milvus_server):
    """The token reaches the server (Lite's own server has no auth; the test launcher refuses calls without it,
    as a Milvus server with authentication does), and a wrong or missing one is one clear BackendError."""
    uri, token = milvus_server
    if token is None:
        pytest.skip("the server at CONVSEARCH_TEST_MILVUS_URI takes no token (CONVSEARCH_TEST_MILVUS_TOKEN unset)")
    prefix = f"t_{uuid.uuid4().hex[:10]}"
    for bad in (None, token + "x"):
        with pytest.raises(BackendError, match="refused the token.*CONVSEARCH_MILVUS_TOKEN") as e:
            MilvusBackend(uri, token=bad, prefix=prefix, timeout_s=10)
        assert token not in str(e.value)
    s = Settings.from_env({"CONVSEARCH_DENSE": "off", "CONVSEARCH_MILVUS_URI": uri, "CONVSEARCH_MILVUS_TOKEN": token,
                           "CONVSEARCH_MILVUS_PREFIX": prefix})
    b = from_settings(s, create=True)  # the Secret from the environment is what authenticates
    try:
        assert not b.lite and b.capabilities.remote
        b.add([Document("zh-1", "AnySearch 支持混合检索", lang="zh"), Document("en-1", "hybrid retrieval", lang="en")])
        assert [h.id for h in b.search("混合检索", top_k=1)] == ["zh-1"]
        assert [h.id for h in b.search("retrieval", top_k=1)] == ["en-1"]
    finally:
        b.close()
        from pymilvus import MilvusClient

        c = MilvusClient(uri, token=token)
        for kind in ("faq", "documents"):
            c.drop_collection(f"{prefix}_{kind}")
        c.close()


def test_lite_flushes_writes_before_the_next_search(tmp_path, corpus):
    """Lite answers a query over unflushed rows by decoding every one (~0.3 s per query at 5,000 documents), so
    writes are flushed before the next search, and what was written stays findable across flushes."""
    with MilvusBackend(tmp_path / "kb.db", prefix="convsearch") as b:
        flushed: list[str] = []
        real_flush = b._client.flush
        b._client.flush = lambda name, **kw: flushed.append(name) or real_flush(name, **kw)
        b.add(kb_docs(corpus)[:6])
        assert not flushed  # writes alone do not flush
        assert b.search("露营", top_k=3)
        assert sorted(flushed) == ["convsearch_documents", "convsearch_faq"]
        assert b.search("露营", top_k=3) and len(flushed) == 2  # nothing written since: no flush
        b.add([Document("zh-new", "松山湖 露营 基地 开放", lang="zh")])
        b.delete(["zh-camp-py"])
        ids = [h.id for h in b.search("松山湖 露营", top_k=13)]
        assert ids[0] == "zh-new" and "zh-camp-py" not in ids and len(flushed) > 2


def test_pipeline_sends_the_variants_in_one_milvus_call(mb, monkeypatch):
    """A turn's query variants reach Milvus as one search_many call (one hybrid request with nq = variants per
    collection), merged by best score, then reranked with the original query."""
    from convsearch import Pipeline

    seen: list[tuple[str, ...]] = []
    real = mb.search_many
    monkeypatch.setattr(mb, "search_many", lambda qs, **kw: seen.append(tuple(qs)) or real(qs, **kw))
    monkeypatch.setattr(mb, "search", lambda *a, **kw: pytest.fail("one search per variant"))
    turn = [{"role": "user", "content": "番禺适合露营吗？"}, {"role": "assistant", "content": "适合。"}]
    with Pipeline(mb, variant_maker=lambda q, *, max_variants, calls=None: ["深圳 露营"]) as p:
        r = asyncio.run(p.asearch("那深圳呢？", turn)) if not mb.lite else p.search("那深圳呢？", turn)
    # the rewrite, the variant and the follow-up's history variant (pipeline.history_variant), in one call
    assert seen == [r.trace.queries] and len(seen[0]) == 3 and seen[0][-1] == "番禺适合露营吗？ 那深圳呢？"
    assert {"zh-camp-sz", "zh-camp-py"} <= {h.id for h in r.hits}
    assert r.hits[0].id == "zh-camp-sz"


def test_the_test_server_stops_when_the_process_that_started_it_is_killed(tmp_path):
    """The server tier's child gRPC server watches a pipe from its parent: a SIGKILLed pytest must not leave a
    Milvus server running (no SIGTERM ever reaches it then)."""
    import os
    import signal
    import time

    script = ("import sys, time\n"
              "from convsearch.testing.milvus_server import MilvusLiteServer\n"
              f"srv = MilvusLiteServer({str(tmp_path / 'data')!r}).start()\n"
              "print(srv.pid, flush=True)\n"
              "time.sleep(600)\n")

    def alive(pid: int) -> bool:  # a zombie (exited, not reaped by its new parent) counts as gone
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as parent:
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and alive(child):
            time.sleep(0.1)
        if alive(child):
            os.kill(child, signal.SIGKILL)
            pytest.fail("the Milvus Lite test server outlived its killed parent")
