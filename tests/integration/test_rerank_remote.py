"""Remote rerankers against the loopback rerank server (``convsearch.testing.rerank_server``), both wire shapes,
both pipeline paths: the server's order is applied, it is asked the standalone question (never a variant or the
user's raw follow-up), with the configured number of candidates and the key; on 500, a malformed body or a
timeout the turn keeps the heuristic order, names the reranker in its errors, and is not slower than the timeout
by much; the trace carries the rerank time."""

from __future__ import annotations

import asyncio
import re
import time

import httpx
import pytest

from convsearch import InMemoryBackend, Pipeline, Settings
from convsearch.errors import RerankError
from convsearch.infra.deadline import Deadline
from convsearch.rerank.base import document, overlap_score
from convsearch.rerank.remote import RemoteConfig, RemoteReranker, rerank_url
from convsearch.secret import Secret
from convsearch.testing.rerank_server import Fault, RerankServer
from convsearch.types import Document, Hit, SearchResponse

pytestmark = pytest.mark.integration

KEY = "sk-rerank-secret"
MODEL = "bge-reranker-v2-m3"
HISTORY = [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
           {"role": "assistant", "content": "关键词检索、向量检索和混合检索。"}]
FOLLOW_UP = "价格呢？"
STANDALONE = "AnySearch 的价格"
# the heuristic (fused score + word cover) and the server's overlap of single characters disagree on these
DOCS = [
    Document("price", "AnySearch 价格：免费版每月 1000 次查询，专业版每月 99 元。", title="AnySearch 价格"),
    Document("modes", "AnySearch 支持 BM25 关键词检索、向量检索和混合检索。", title="AnySearch 检索方式"),
    Document("nova", "NovaDB 的价格：按节点收费，每个节点每月 500 元。", title="NovaDB 的价格"),
    Document("ent", "AnySearch 的企业版价格格外灵活，按需报价。", title="AnySearch 的企业版"),
    Document("faq", "AnySearch 常见问题：账号、发票和价格。", title="常见问题"),
    Document("blog", "我们的博客：AnySearch 的新功能。", title="AnySearch 的博客"),
    Document("cat", "猫的价格因品种而异。", title="猫"),
]


@pytest.fixture(scope="module")
def servers():
    with RerankServer("cohere", api_key=KEY, model=MODEL) as c, RerankServer("tei", api_key=KEY) as t:
        yield {"cohere": c, "tei": t}


@pytest.fixture
def server(servers, request) -> RerankServer:
    srv: RerankServer = servers[request.param]
    srv.reset()
    return srv


def settings_for(srv: RerankServer, **extra: str) -> Settings:
    env = {"CONVSEARCH_RERANKER": srv.shape, "CONVSEARCH_RERANK_BASE_URL": srv.base_url,
           "CONVSEARCH_RERANK_API_KEY": KEY, "CONVSEARCH_RERANK_MODEL": MODEL}
    env.update({f"CONVSEARCH_RERANK_{k.upper()}": v for k, v in extra.items()})
    return Settings.from_env(env)


def run(p: Pipeline, path: str, **kw) -> SearchResponse:
    if path == "search":
        return p.search(FOLLOW_UP, HISTORY, **kw)
    return asyncio.run(p.asearch(FOLLOW_UP, HISTORY, **kw))


def heuristic_order() -> list[Hit]:
    """Every candidate of the turn in the heuristic order (what a remote reranker starts from)."""
    with Pipeline(InMemoryBackend(DOCS)) as p:
        return list(p.search(FOLLOW_UP, HISTORY, top_k=len(DOCS)).hits)


def server_order(candidates: list[Hit], sent: int) -> list[str]:
    """The ids as the loopback server orders the first ``sent`` (its overlap score, ties in the order sent), the
    rest after them in the heuristic order."""
    head = sorted(range(sent), key=lambda i: (-overlap_score(STANDALONE, document(candidates[i])), i))
    return [candidates[i].id for i in head] + [h.id for h in candidates[sent:]]


SHAPES = pytest.mark.parametrize("server", ["cohere", "tei"], indirect=True)
PATHS = pytest.mark.parametrize("path", ["search", "asearch"])


@SHAPES
@PATHS
def test_the_servers_order_is_applied_and_it_was_asked_the_standalone_question(server, path):
    heuristic = heuristic_order()
    expected = server_order(heuristic, len(heuristic))
    assert expected[:5] != [h.id for h in heuristic[:5]]  # else this test could not tell the orders apart
    with Pipeline(InMemoryBackend(DOCS), settings=settings_for(server)) as p:
        r = run(p, path)
    assert [h.id for h in r.hits] == expected[:5] and [h.rank for h in r.hits] == [1, 2, 3, 4, 5]
    assert [h.score for h in r.hits] == [overlap_score(STANDALONE, document(h)) for h in r.hits]
    assert r.errors == () and r.trace.errors == ()
    assert f"rerank ({server.shape}): {len(heuristic)} candidates reordered" in r.trace.notes
    assert r.trace.timings_ms["rerank"] > 0 and [c.n for c in r.citations] == [1, 2, 3, 4, 5]

    (req,) = server.requests
    body = req["json"]
    assert req["status"] == 200 and req["headers"]["Authorization"] == f"Bearer {KEY}"
    assert req["headers"]["Content-Type"] == "application/json"
    assert body["query"] == r.standalone_query == STANDALONE
    assert body["query"] != FOLLOW_UP and body["query"] not in r.variants and len(r.variants) >= 1
    docs = body["documents"] if server.shape == "cohere" else body["texts"]
    assert docs == [document(h) for h in heuristic]
    if server.shape == "cohere":
        assert req["path"] == "/v1/rerank" and body["model"] == MODEL and body["top_n"] == len(docs)
    else:
        assert req["path"] == "/rerank" and "model" not in body
        assert body["raw_scores"] is False and body["truncate"] is True


@SHAPES
def test_only_the_candidates_asked_for_are_sent_the_rest_keep_the_heuristic_order(server):
    heuristic = heuristic_order()
    with Pipeline(InMemoryBackend(DOCS), settings=settings_for(server, candidates="3")) as p:
        r = p.search(FOLLOW_UP, HISTORY, top_k=len(DOCS))
    body = server.requests[0]["json"]
    assert len(body["documents"] if server.shape == "cohere" else body["texts"]) == 3
    assert [h.id for h in r.hits] == server_order(heuristic, 3)
    assert [h.id for h in r.hits[3:]] == [h.id for h in heuristic[3:]]
    assert [h.score for h in r.hits[3:]] == [h.score for h in heuristic[3:]]  # not rescored: not sent


FAULTS = [(Fault.error(500), "HTTP 500: scripted failure"), (Fault.malformed(), "malformed reply: not JSON"),
          (Fault.slow(2.0), "no answer within 0.3 s")]


@SHAPES
@PATHS
@pytest.mark.parametrize("fault, reason", FAULTS, ids=["500", "malformed", "timeout"])
def test_a_failure_leaves_the_heuristic_order_and_names_the_reranker(server, path, fault, reason):
    heuristic = [h.id for h in heuristic_order()[:5]]
    with Pipeline(InMemoryBackend(DOCS), settings=settings_for(server, timeout_s="0.3")) as p:
        run(p, path)  # connections warm: the timing below is the rerank call's, not a first connect
        server.reset()
        server.push(fault)
        t0 = time.perf_counter()
        r = run(p, path)
        elapsed = time.perf_counter() - t0
    assert [h.id for h in r.hits] == heuristic and len(server.requests) == 1
    assert r.errors == (f"rerank ({server.shape}): {reason}; heuristic order used",)
    assert r.errors[0] in r.trace.notes and r.partial is False
    if fault.kind == "slow":
        assert 0.3 <= elapsed < 0.3 + 0.5, elapsed  # the timeout, not the server's 2 s
        assert 290 <= r.trace.timings_ms["rerank"] < 800
    else:
        assert elapsed < 0.5


@SHAPES
def test_a_wrong_key_is_a_401_named_without_the_key(server):
    s = settings_for(server, api_key="sk-wrong-key")
    with Pipeline(InMemoryBackend(DOCS), settings=s) as p:
        r = p.search(FOLLOW_UP, HISTORY)
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-wrong-key"
    assert r.errors == (f"rerank ({server.shape}): HTTP 401: invalid api token; heuristic order used",)
    assert "sk-wrong-key" not in repr(r.to_dict())


@SHAPES
def test_the_turns_deadline_cuts_the_rerank_timeout(server):
    server.push(Fault.slow(2.0))
    with Pipeline(InMemoryBackend(DOCS), settings=settings_for(server, timeout_s="5")) as p:
        t0 = time.perf_counter()
        r = p.search(FOLLOW_UP, HISTORY, deadline=Deadline(0.4))
        elapsed = time.perf_counter() - t0
    assert elapsed < 0.4 + 0.3, elapsed  # the deadline's 0.4 s, not the 5 s timeout nor the server's 2 s
    (error,) = r.errors
    assert re.fullmatch(rf"rerank \({server.shape}\): no answer within 0\.[34]\d* s; heuristic order used", error)


def test_environment_variables_alone_point_a_pipeline_at_the_server(servers, monkeypatch):
    srv: RerankServer = servers["tei"]
    srv.reset()
    for k, v in {"CONVSEARCH_RERANKER": "tei", "CONVSEARCH_RERANK_BASE_URL": srv.base_url,
                 "CONVSEARCH_RERANK_API_KEY": KEY}.items():
        monkeypatch.setenv(k, v)
    with Pipeline.from_settings(backend=InMemoryBackend(DOCS)) as p:
        r = p.search(FOLLOW_UP, HISTORY)
    assert p.reranker.closed and r.errors == () and srv.requests[0]["json"]["query"] == STANDALONE


# --- the loopback server checks what the real servers check -----------------------------------------------------

def _hits(n: int) -> list[Hit]:
    return [Hit(f"h{i}", "", f"AnySearch doc {i}", 1.0, rank=i + 1) for i in range(n)]


def test_tei_refuses_more_texts_than_its_batch_size_and_the_reranker_says_413(servers):
    srv: RerankServer = servers["tei"]
    r = RemoteReranker(RemoteConfig("tei", rerank_url(srv.base_url), api_key=Secret.from_token(KEY), candidates=40))
    try:
        with pytest.raises(RerankError) as e:
            r.rerank("AnySearch", _hits(40))
        assert str(e.value) == "rerank (tei): HTTP 413: batch size 40 > maximum allowed batch size 32"
        assert [h.id for h in r.rerank("doc 7", _hits(32), limit=1)] == ["h7"]
    finally:
        r.close()


@pytest.mark.parametrize("shape, path, body, headers, status", [
    ("cohere", "/v1/rerank", {"query": "q", "documents": ["a"], "model": MODEL}, {"Content-Type": "text/plain"}, 415),
    ("cohere", "/v1/rerank", {"query": "q", "documents": ["a"], "model": MODEL}, {}, 401),
    ("cohere", "/rerank", {"query": "q", "documents": ["a", "b"], "top_n": 3, "model": MODEL}, None, 422),
    ("cohere", "/v1/rerank", {"query": " ", "documents": ["a"], "model": MODEL}, None, 422),
    ("cohere", "/v1/rerank", {"query": "q", "documents": [], "model": MODEL}, None, 422),
    ("cohere", "/v1/rerank", {"query": "q", "documents": ["a"]}, None, 422),
    ("cohere", "/v1/rerank", {"query": "q", "documents": ["a"], "model": "other"}, None, 404),
    ("cohere", "/v2/rerank", {"query": "q", "documents": ["a"], "model": MODEL}, None, 404),
    ("tei", "/rerank", {"query": "q", "documents": ["a"]}, None, 422),
    ("tei", "/rerank", {"query": "q", "texts": ["a", 3]}, None, 422),
    ("tei", "/rerank", {"query": "q", "texts": ["a"], "truncate": "yes"}, None, 422),
    ("tei", "/v1/rerank", {"query": "q", "texts": ["a"]}, None, 404),
])
def test_the_server_refuses_what_the_real_ones_refuse(servers, shape, path, body, headers, status):
    srv: RerankServer = servers[shape]
    sent = {"Authorization": f"Bearer {KEY}"} if headers is None else headers
    r = httpx.post(srv.root_url + path, content=httpx.Request("POST", "/", json=body).content,
                   headers={"Content-Type": "application/json", **sent})
    assert r.status_code == status, r.text


def test_the_server_answers_cohere_with_top_n_results_best_first(servers):
    srv: RerankServer = servers["cohere"]
    r = httpx.post(srv.base_url + "/rerank", json={"model": MODEL, "query": "cat food",
                                                   "documents": ["dog", {"text": "cat food"}, "cat"], "top_n": 2},
                   headers={"Authorization": f"Bearer {KEY}"})
    assert r.status_code == 200
    assert r.json()["results"] == [{"index": 1, "relevance_score": 1.0}, {"index": 2, "relevance_score": 0.5}]
