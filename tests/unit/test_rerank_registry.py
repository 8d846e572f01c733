"""Rerankers as registry rows (issue 35 item 4): the rows, the ``rerank`` settings section, the error, the pure
pieces of the remote shapes, and the pipeline failing open on the test double. The wire itself is tested against
the loopback server in tests/integration/test_rerank_remote.py."""

from __future__ import annotations

import asyncio
import logging

import pytest

import convsearch.rerank.remote as remote
from convsearch import InMemoryBackend, Pipeline, Settings
from convsearch.errors import ConfigError, RerankError, UpstreamError
from convsearch.rerank import BUILTINS, HEURISTIC, RerankSettings, ScriptedReranker, apply_order, open_reranker, rerank
from convsearch.rerank.base import overlap_order, overlap_score
from convsearch.rerank.remote import RemoteReranker, parse_reply, request_body, rerank_url
from convsearch.types import Document, Hit

ZH_TURN = [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
           {"role": "assistant", "content": "关键词检索、向量检索和混合检索。"}]
DOCS = [
    Document("p1", "AnySearch 的价格：免费版每月 1000 次查询，专业版每月 99 元。", title="AnySearch 价格"),
    Document("p2", "AnySearch 支持 BM25 关键词检索、向量检索和混合检索。", title="AnySearch 检索方式"),
    Document("p3", "NovaDB 的价格：按节点收费。", title="NovaDB 价格"),
    Document("p4", "AnySearch 企业版按需报价，价格面议。", title="企业版"),
]


def _env(**kw: str) -> dict[str, str]:
    return {f"CONVSEARCH_{k.upper()}": v for k, v in kw.items()}


# --- rows and settings ------------------------------------------------------------------------------------------

def test_three_rows_heuristic_first_and_the_default():
    assert list(BUILTINS) == ["heuristic", "cohere", "tei"]
    assert [n for n, row in BUILTINS.items() if row.remote] == ["cohere", "tei"]
    assert open_reranker(Settings()) is HEURISTIC and open_reranker(Settings.from_env({})) is HEURISTIC
    assert HEURISTIC.remote is False and HEURISTIC.name == "heuristic"


def test_every_variable_is_read():
    s = RerankSettings.of(Settings.from_env(_env(reranker="Cohere ", rerank_base_url="http://h:8000/v1",
                                                 rerank_model="bge-reranker-v2-m3", rerank_api_key="sk-r",
                                                 rerank_candidates="12", rerank_timeout_s="0.5")))
    assert (s.reranker, s.base_url, s.model, s.candidates, s.timeout_s) == \
        ("cohere", "http://h:8000/v1", "bge-reranker-v2-m3", 12, 0.5)
    assert s.api_key is not None and s.api_key.reveal() == "sk-r" and "sk-r" not in repr(s)
    assert RerankSettings() == RerankSettings.from_env({}) and (RerankSettings().candidates,
                                                                 RerankSettings().timeout_s) == (30, 2.0)
    assert Settings.from_env(Settings.from_env(_env(reranker="tei", rerank_base_url="http://t:8080")).to_env()) \
        .section("rerank").reranker == "tei"


@pytest.mark.parametrize("env, line", [
    (_env(reranker="bge"), "CONVSEARCH_RERANKER must be one of heuristic, cohere, tei, not 'bge'"),
    (_env(reranker="cohere"), "CONVSEARCH_RERANKER=cohere needs CONVSEARCH_RERANK_BASE_URL, the server's URL up to "
                              "/rerank (e.g. http://localhost:8000/v1 for vLLM)"),
    (_env(reranker="tei", rerank_base_url=" "), "CONVSEARCH_RERANKER=tei needs CONVSEARCH_RERANK_BASE_URL, the "
                                                 "server's URL up to /rerank (e.g. http://localhost:8080)"),
    (_env(rerank_base_url="localhost:8080"), "CONVSEARCH_RERANK_BASE_URL must start with http:// or https://, "
                                             "not 'localhost:8080'"),
    (_env(rerank_candidates="many"), "CONVSEARCH_RERANK_CANDIDATES='many' is not a valid int"),
    (_env(rerank_candidates="0"), "CONVSEARCH_RERANK_CANDIDATES must be positive, not 0"),
    (_env(rerank_timeout_s="-1"), "CONVSEARCH_RERANK_TIMEOUT_S must be positive, not -1.0"),
])
def test_a_bad_value_is_one_config_error_line(env, line):
    with pytest.raises(ConfigError) as e:
        Settings.from_env(env)
    assert str(e.value) == line and "\n" not in str(e.value)


def test_remote_rows_open_one_client_set_per_endpoint_and_release_it():
    s = Settings.from_env(_env(reranker="cohere", rerank_base_url="http://127.0.0.1:9/v1/", rerank_model="m",
                               rerank_api_key="sk-x"))
    a, b = open_reranker(s), open_reranker(s)
    try:
        assert isinstance(a, RemoteReranker) and (a.name, a.remote, a.candidates) == ("cohere", True, 30)
        assert a.config.url == "http://127.0.0.1:9/v1/rerank" and a.config.model == "m"
        assert a._clients is b._clients and remote._SHARED["http://127.0.0.1:9/v1/rerank"][1] == 2
    finally:
        a.close()
        a.close()  # idempotent: gives one handle back, once
        assert remote._SHARED["http://127.0.0.1:9/v1/rerank"][1] == 1
        b.close()
    assert "http://127.0.0.1:9/v1/rerank" not in remote._SHARED
    t = open_reranker(Settings.from_env(_env(reranker="tei", rerank_base_url="http://127.0.0.1:9",
                                             rerank_model="ignored")))
    t.close()
    assert (t.name, t.config.url, t.config.model) == ("tei", "http://127.0.0.1:9/rerank", "")


def test_base_url_to_endpoint():
    assert rerank_url("http://h:8000/v1") == "http://h:8000/v1/rerank"
    assert rerank_url("https://api.jina.ai/v1/") == "https://api.jina.ai/v1/rerank"
    assert rerank_url("http://tei:8080") == "http://tei:8080/rerank"
    assert rerank_url("http://h/v2/rerank/") == "http://h/v2/rerank"


# --- the error ------------------------------------------------------------------------------------------------------

def test_rerank_error_is_an_upstream_error_of_service_rerank():
    e = RerankError("cohere", "HTTP 500", status=500)
    assert isinstance(e, UpstreamError) and (e.service, e.reranker, e.reason, e.status) == \
        ("rerank", "cohere", "HTTP 500", 500)
    assert str(e) == "rerank (cohere): HTTP 500" and e.what == "the rerank server" and not e.retryable


# --- the pure pieces --------------------------------------------------------------------------------------------

def _hits(*ids: str) -> list[Hit]:
    return [Hit(i, "", f"text {i}", 1.0 - n / 10, rank=n + 1) for n, i in enumerate(ids)]


def test_apply_order_server_order_first_then_the_rest_in_the_old_order():
    hits = _hits("a", "b", "c", "d", "e")
    out = apply_order(hits, [(2, 0.9), (0, 0.4)], sent=3)
    assert [(h.id, h.score, h.rank) for h in out] == \
        [("c", 0.9, 1), ("a", 0.4, 2), ("b", 0.9, 3), ("d", 0.7, 4), ("e", 0.6, 5)]
    assert [h.id for h in apply_order(hits, [(1, 1.0), (1, 0.5), (4, 2.0)], sent=2, limit=2)] == ["b", "a"]
    assert apply_order(hits, [], sent=0) == [h for h in hits]


def test_request_bodies_of_both_shapes():
    assert request_body("cohere", "q", ["d1", "d2"], "m") == {"model": "m", "query": "q", "documents": ["d1", "d2"],
                                                              "top_n": 2}
    assert "model" not in request_body("cohere", "q", ["d1"], "")
    assert request_body("tei", "q", ["d1"], "m") == {"query": "q", "texts": ["d1"], "raw_scores": False,
                                                     "truncate": True}


@pytest.mark.parametrize("shape, payload, why", [
    ("cohere", [], "no 'results' list"),
    ("cohere", {"results": [{"index": 0}]}, "numeric relevance_score"),
    ("cohere", {"results": [{"index": "0", "relevance_score": 1}]}, "integer index"),
    ("cohere", {"results": [{"index": 3, "relevance_score": 1}]}, "index 3 out of range for 2"),
    ("tei", {"results": []}, "a JSON list"),
    ("tei", [{"index": True, "score": 0.1}], "integer index"),
    ("tei", [{"index": 0, "score": "high"}], "numeric score"),
])
def test_a_malformed_reply_says_what_is_wrong(shape, payload, why):
    with pytest.raises(ValueError, match=why):
        parse_reply(shape, payload, 2)


def test_replies_parse_in_the_servers_order():
    assert parse_reply("cohere", {"results": [{"index": 1, "relevance_score": 0.8}, {"index": 0,
                                                                                     "relevance_score": 0.1}]}, 2) \
        == [(1, 0.8), (0, 0.1)]
    assert parse_reply("tei", [{"index": 0, "score": 1}], 2) == [(0, 1.0)]


def test_overlap_scorer_is_predictable():
    assert overlap_score("AnySearch 价格", "AnySearch 的价格") == 1.0
    assert overlap_score("cat food", "dog food") == 0.5 and overlap_score("", "x") == 0.0
    assert overlap_order("cat food", ["dog", "cat food", "food"]) == [(1, 1.0), (2, 0.5), (0, 0.0)]


# --- the pipeline with the test double -------------------------------------------------------------------------

def test_the_default_pipeline_reranks_with_the_heuristic_only():
    with Pipeline(InMemoryBackend(DOCS)) as p:
        r = p.search("价格呢？", ZH_TURN)
        assert p.reranker is HEURISTIC
    heuristic = rerank([h for h in r.hits], "价格呢？", r.standalone_query)
    assert {h.id for h in heuristic} == {h.id for h in r.hits}
    assert r.errors == () and r.trace.errors == () and not any("rerank" in n for n in r.trace.notes)


@pytest.mark.parametrize("path", ["search", "asearch"])
def test_a_remote_reranker_gets_the_standalone_question_and_orders_the_hits(path):
    double = ScriptedReranker(score=lambda q, d: 1.0 if "企业版" in d else 0.0)
    with Pipeline(InMemoryBackend(DOCS), reranker=double) as p:
        r = p.search("价格呢？", ZH_TURN) if path == "search" else asyncio.run(p.asearch("价格呢？", ZH_TURN))
    assert [c.question for c in double.calls] == ["AnySearch 的价格"] == [r.standalone_query]
    assert r.hits[0].id == "p4" and r.hits[0].score == 1.0 and [h.rank for h in r.hits] == list(
        range(1, len(r.hits) + 1))
    assert r.errors == () and "rerank (scripted): 4 candidates reordered" in r.trace.notes
    assert not double.closed  # handed in: the caller closes it


@pytest.mark.parametrize("path", ["search", "asearch"])
def test_a_failing_reranker_leaves_the_heuristic_order_and_says_so(path, caplog):
    caplog.set_level(logging.INFO, logger="convsearch.events")
    with Pipeline(InMemoryBackend(DOCS)) as p:
        expected = [h.id for h in p.search("价格呢？", ZH_TURN).hits]
    double = ScriptedReranker(fail=RerankError("scripted", "HTTP 503", status=503))
    with Pipeline(InMemoryBackend(DOCS), reranker=double) as p:
        r = p.search("价格呢？", ZH_TURN) if path == "search" else asyncio.run(p.asearch("价格呢？", ZH_TURN))
    assert [h.id for h in r.hits] == expected and len(double.calls) == 1
    assert r.errors == ("rerank (scripted): HTTP 503; heuristic order used",) == r.trace.errors
    assert r.partial is False and "rerank" in r.trace.timings_ms
    assert '"event": "rerank_failed", "ts"' in caplog.text and '"reranker": "scripted"' in caplog.text


def test_the_pipeline_closes_the_reranker_it_opened(monkeypatch):
    closed: list[str] = []
    original = RemoteReranker.close
    monkeypatch.setattr(RemoteReranker, "close", lambda self: (closed.append(self.name), original(self)))
    s = Settings.from_env(_env(reranker="tei", rerank_base_url="http://127.0.0.1:9"))
    with Pipeline(InMemoryBackend(DOCS), settings=s) as p:
        assert p.reranker.name == "tei" and p.reranker.remote
        assert "http://127.0.0.1:9/rerank" in remote._SHARED
    assert closed == ["tei"] and "http://127.0.0.1:9/rerank" not in remote._SHARED
