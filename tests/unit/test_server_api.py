"""The HTTP API in process (FastAPI TestClient over a small temp index): happy paths, the error map, auth,
rate limits, body limits, tenant isolation, metrics, OpenAPI and the playground page."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from convsearch.backends.base import InMemoryBackend  # noqa: E402
from convsearch.config import Settings  # noqa: E402
from convsearch.errors import BackendError  # noqa: E402
from convsearch.history import InMemoryStore  # noqa: E402
from convsearch.infra.ratelimit import TokenBucketLimiter  # noqa: E402
from convsearch.resolve.rules import RuleRewriter  # noqa: E402
from convsearch.server.app import create_app  # noqa: E402
from convsearch.server.service import Service  # noqa: E402
from convsearch.types import RewriteResult  # noqa: E402

KEYS = "acme:key-acme,beta:key-beta"
A = {"Authorization": "Bearer key-acme"}
B = {"X-API-Key": "key-beta"}
STATIC = Path(__file__).resolve().parents[2] / "src" / "convsearch" / "server" / "static"


def settings(**kw: Any) -> Settings:
    base: dict[str, Any] = dict(api_keys=KEYS, dense="off", rate_limit=0)
    base.update(kw)
    return Settings.from_env({}, **base)


@pytest.fixture
def make_client(bm25_index) -> Iterator[Any]:
    clients: list[TestClient] = []

    def make(s: Settings | None = None, **service_kw: Any) -> TestClient:
        service_kw.setdefault("backend", bm25_index)
        service_kw.setdefault("store", InMemoryStore())
        c = TestClient(create_app(s or settings(), **service_kw), raise_server_exceptions=False)
        c.__enter__()
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.__exit__(None, None, None)


@pytest.fixture
def client(make_client) -> TestClient:
    return make_client()


def assert_error(r: Any, status: int, code: str, field: str | None = None) -> dict:
    assert r.status_code == status, r.text
    body = r.json()["error"]
    assert body["status"] == status and body["code"] == code
    assert body["request_id"] == r.headers["x-request-id"]
    if field is not None:
        assert body["field"] == field
    assert "Traceback" not in r.text and 'File "' not in r.text
    return body


# --- happy paths -----------------------------------------------------------------------------------------

def test_healthz_and_tools_need_no_key(client: TestClient) -> None:
    h = client.get("/healthz").json()
    assert h["status"] == "ok" and h["index"] == {"status": "ok", "documents": 13, "detail": None}
    assert h["auth"] == "keys"
    tools = client.get("/v1/tools").json()
    assert tools[0]["function"]["name"] == "web_search"


def test_search_turns_a_follow_up_into_a_standalone_query(client: TestClient) -> None:
    first = client.post("/v1/search", json={"query": "AnySearch 支持哪些检索方式？", "session_id": "s1"}, headers=A)
    assert first.status_code == 200, first.text
    assert first.json()["rewrite"]["method"] == "gate"
    r = client.post("/v1/search", json={"query": "价格呢？", "session_id": "s1"}, headers=A).json()
    assert r["standalone_query"] == "AnySearch 的价格"
    assert r["rewrite"]["changed"] and "ellipsis" in r["rewrite"]["reason"]
    assert r["results"][0]["id"] == "zh-any-price" and r["results"][0]["n"] == 1
    assert r["context"].startswith("[1] AnySearch 价格")
    assert r["trace"]["queries"][0] == "AnySearch 的价格" and "search" in r["trace"]["timings_ms"]
    assert r["session_id"] == "s1" and r["cached"] is False


def test_search_with_messages_english_and_options(client: TestClient) -> None:
    body = {"query": "When did it first launch a rocket?", "top_k": 2, "mode": "dual", "variants": False,
            "messages": [{"role": "user", "content": "Who founded SpaceX?"},
                         {"role": "assistant", "content": "Elon Musk founded SpaceX in 2002."}]}
    r = client.post("/v1/search", json=body, headers=A).json()
    assert r["standalone_query"] == "When did SpaceX first launch a rocket?"
    assert r["variants"] == [] and len(r["results"]) <= 2
    assert r["results"][0]["id"] == "en-spacex-launch"
    assert body["query"] in r["trace"]["queries"]  # dual mode also searched the original


def test_top_k_takes_a_json_integer_also_written_with_a_point(client: TestClient) -> None:
    r = client.post("/v1/search", json={"query": "SpaceX", "top_k": 1.0}, headers=A)
    assert r.status_code == 200, r.text
    assert len(r.json()["results"]) == 1


def test_lang_and_recency_filters(client: TestClient) -> None:
    r = client.post("/v1/search", json={"query": "AnySearch 价格 pricing", "lang": "en"}, headers=A).json()
    assert r["results"] and all(x["id"].startswith("en-") for x in r["results"])
    r = client.post("/v1/search", json={"query": "AnySearch 价格", "recency": "week"}, headers=A).json()
    assert r["results"] == []  # the corpus is years old


def test_recency_keeps_recent_results(make_client, bm25_index) -> None:
    from datetime import date

    c = make_client(today=lambda: date(2024, 12, 1))
    r = c.post("/v1/search", json={"query": "露营 天气", "recency": "week"}, headers=A).json()
    assert r["results"] and all(x["date"] >= "2024-11-24" for x in r["results"])


def test_rewrite_endpoint(client: TestClient) -> None:
    body = {"query": "那番禺呢？", "messages": [{"role": "user", "content": "深圳最近三天适合露营吗？"}]}
    r = client.post("/v1/rewrite", json=body, headers=A).json()
    assert r["standalone_query"] == "番禺最近三天适合露营吗"
    assert r["rewrite"]["method"] == "rules" and "深圳 → 番禺" in r["rewrite"]["reason"]
    assert r["decision"]["needed"] is True and r["queries"][0] == r["standalone_query"]


def test_sessions_append_and_read(client: TestClient) -> None:
    client.post("/v1/search", json={"query": "AnySearch 支持哪些检索方式？", "session_id": "s2"}, headers=A)
    add = client.post("/v1/sessions/s2/messages", headers=A, json={
        "messages": [{"role": "assistant", "content": "支持混合检索 [1]。", "id": "m-1"}]})
    assert add.status_code == 200, add.text
    again = client.post("/v1/sessions/s2/messages", headers=A, json={
        "messages": [{"role": "assistant", "content": "支持混合检索 [1]。", "id": "m-1"}]})
    assert again.json()["messages"][0]["id"] == "m-1"  # idempotent by message id
    got = client.get("/v1/sessions/s2/messages", headers=A).json()
    assert [(m["role"], m["content"]) for m in got["messages"]] == [
        ("user", "AnySearch 支持哪些检索方式？"), ("assistant", "支持混合检索 [1]。")]
    assert client.get("/v1/sessions/s2/messages?limit=1", headers=A).json()["messages"][0]["role"] == "assistant"
    assert client.get("/v1/sessions/never/messages", headers=A).json()["messages"] == []
    assert client.get("/v1/sessions/s2/messages?agent=other", headers=A).json()["messages"] == []


def test_message_id_conflict_is_409_and_oversized_message_413(make_client) -> None:
    c = make_client(store=InMemoryStore(max_message_bytes=100))
    c.post("/v1/sessions/s/messages", headers=A, json={"messages": [{"role": "user", "content": "a", "id": "x"}]})
    r = c.post("/v1/sessions/s/messages", headers=A, json={"messages": [{"role": "user", "content": "b", "id": "x"}]})
    assert_error(r, 409, "conflict")
    r = c.post("/v1/sessions/s/messages", headers=A, json={"messages": [{"role": "user", "content": "长" * 100}]})
    assert_error(r, 413, "payload_too_large")


# --- auth, limits, the error map ----------------------------------------------------------------------------

@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}, {"X-API-Key": "nope"},
                                     {"Authorization": "Basic a2V5LWFjbWU="}])
def test_missing_or_unknown_key_is_401(client: TestClient, headers: dict) -> None:
    for r in (client.post("/v1/search", json={"query": "x"}, headers=headers),
              client.post("/v1/rewrite", json={"query": "x"}, headers=headers),
              client.get("/v1/sessions/s/messages", headers=headers),
              client.post("/mcp", json={}, headers=headers)):
        assert_error(r, 401, "unauthorized")
        assert r.headers["www-authenticate"] == "Bearer"


def test_auth_comes_before_body_validation(client: TestClient) -> None:
    assert_error(client.post("/v1/search", json={"query": ""}), 401, "unauthorized")


def test_rate_limit_429_with_retry_after_per_tenant(make_client) -> None:
    now = [0.0]
    limiter = TokenBucketLimiter(rate=0.5, burst=2, clock=lambda: now[0])
    c = make_client(limiter=limiter)
    assert [c.post("/v1/rewrite", json={"query": "hi"}, headers=A).status_code for _ in range(2)] == [200, 200]
    r = c.post("/v1/rewrite", json={"query": "hi"}, headers=A)
    assert_error(r, 429, "rate_limited")
    assert r.headers["retry-after"] == "2"
    assert c.post("/v1/rewrite", json={"query": "hi"}, headers=B).status_code == 200  # beta has its own bucket
    now[0] += 2.0
    assert c.post("/v1/rewrite", json={"query": "hi"}, headers=A).status_code == 200
    assert "convsearch_rate_limited_total 1.0" in c.get("/metrics").text


def test_rate_limit_from_settings(make_client) -> None:
    c = make_client(settings(rate_limit=0.001, rate_burst=1))
    assert c.post("/v1/rewrite", json={"query": "hi"}, headers=A).status_code == 200
    r = c.post("/v1/rewrite", json={"query": "hi"}, headers=A)
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1


def test_body_over_the_limit_is_413(make_client) -> None:
    c = make_client(settings(max_body_bytes=2000))
    big = {"query": "x", "messages": [{"role": "user", "content": "长" * 1000}]}
    assert_error(c.post("/v1/search", json=big, headers=A), 413, "payload_too_large")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
        yield b'{"query": "x", "topic": "'
        for _ in range(10):
            yield b"y" * 500
        yield b'"}'

    r = c.post("/v1/search", content=chunks(), headers={**A, "content-type": "application/json"})
    assert_error(r, 413, "payload_too_large")


@pytest.mark.parametrize("body,field", [
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({}, "query"),
    ({"query": 5}, "query"),
    ({"query": "x", "top_k": 0}, "top_k"),
    ({"query": "x", "top_k": "many"}, "top_k"),
    ({"query": "x", "top_k": True}, "top_k"),
    ({"query": "x", "top_k": "2"}, "top_k"),
    ({"query": "x", "top_k": 2.5}, "top_k"),
    ({"query": "x", "mode": "fast"}, "mode"),
    ({"query": "x", "recency": "hour"}, "recency"),
    ({"query": "x", "messages": [{"role": "robot", "content": "hi"}]}, "messages.0.role"),
    ({"query": "x", "messages": "hi"}, "messages"),
    ({"query": "x", "session_id": "a\nb"}, "session_id"),
    ({"query": "x", "colour": "red"}, "colour"),
])
def test_bad_input_is_400_naming_the_field(client: TestClient, body: dict, field: str) -> None:
    body_ = assert_error(client.post("/v1/search", json=body, headers=A), 400, "invalid_request", field)
    assert field in body_["message"]


def test_query_over_the_configured_limit_is_400(make_client) -> None:
    c = make_client(settings(max_query_chars=10))
    assert_error(c.post("/v1/search", json={"query": "x" * 11}, headers=A), 400, "invalid_request", "query")
    assert_error(c.post("/v1/rewrite", json={"query": "x" * 11}, headers=A), 400, "invalid_request", "query")


@pytest.mark.parametrize("raw", [b"{bad json", b"\xff\xfe\x00", b"[1, 2]", b"null"])
def test_malformed_bodies_are_400(client: TestClient, raw: bytes) -> None:
    r = client.post("/v1/search", content=raw, headers={**A, "content-type": "application/json"})
    assert_error(r, 400, "invalid_request")


def test_bad_path_and_query_params_are_400(client: TestClient) -> None:
    assert_error(client.get("/v1/sessions/" + "s" * 300 + "/messages", headers=A), 400, "invalid_request", "session_id")
    assert_error(client.get("/v1/sessions/s/messages?limit=0", headers=A), 400, "invalid_request", "limit")
    assert_error(client.post("/v1/sessions/s/messages", json={"messages": []}, headers=A), 400, "invalid_request",
                 "messages")


def test_unknown_route_404_and_wrong_method_405(client: TestClient) -> None:
    assert_error(client.get("/v1/nothing", headers=A), 404, "not_found")
    assert_error(client.get("/v1/search", headers=A), 405, "method_not_allowed")


class Exploding(InMemoryBackend):
    def __init__(self, exc: Exception) -> None:
        super().__init__()
        self.exc = exc

    def search(self, query: str, **kw: Any) -> list:
        raise self.exc


class Slow(InMemoryBackend):
    def search(self, query: str, **kw: Any) -> list:
        time.sleep(1.0)
        return []


def test_backend_failure_is_502_without_details(make_client) -> None:
    c = make_client(backend=Exploding(BackendError("cannot open the index at /secret/path")))
    body = assert_error(c.post("/v1/search", json={"query": "x"}, headers=A), 502, "backend_error")
    assert "/secret/path" not in body["message"]


def test_a_bug_is_500_with_a_request_id_and_no_traceback(make_client) -> None:
    c = make_client(backend=Exploding(ZeroDivisionError("division by zero in secret_function")))
    body = assert_error(c.post("/v1/search", json={"query": "x"}, headers=A), 500, "internal")
    assert "secret_function" not in str(body) and body["message"] == "internal error"


def test_deadline_is_504(make_client) -> None:
    c = make_client(settings(deadline_s=0.2), backend=Slow())
    t0 = time.perf_counter()
    assert_error(c.post("/v1/search", json={"query": "x"}, headers=A), 504, "deadline_exceeded")
    assert time.perf_counter() - t0 < 0.9  # answered at the deadline, not when the work finished


def test_missing_index_is_404_and_degraded_health(make_client, tmp_path: Path) -> None:
    c = make_client(settings(data_dir=tmp_path / "empty"), backend=None)
    assert_error(c.post("/v1/search", json={"query": "x"}, headers=A), 404, "not_found")
    h = c.get("/healthz").json()
    assert h["status"] == "degraded" and h["index"]["status"] == "missing"


# --- tenants ---------------------------------------------------------------------------------------------

class Recording(RuleRewriter):
    """The rule rewriter, remembering every query it was asked about (one instance per tenant)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def rewrite(self, history: Any, query: str, *, topic: str | None = None, decision: object = None) -> RewriteResult:
        self.seen.append(query)
        return super().rewrite(history, query, topic=topic)


def test_two_tenants_cannot_see_each_others_sessions_caches_or_rewrites(bm25_index) -> None:
    made: list[Recording] = []

    def factory(_s: Settings) -> Recording:
        made.append(Recording())
        return made[-1]

    service = Service(settings(), backend=bm25_index, store=InMemoryStore(), rewriter_factory=factory)
    with TestClient(create_app(service.settings, service=service)) as c:
        # the same session id in both tenants: two different conversations
        c.post("/v1/search", json={"query": "AnySearch 支持哪些检索方式？", "session_id": "shared"}, headers=A)
        a = c.post("/v1/search", json={"query": "价格呢？", "session_id": "shared"}, headers=A).json()
        b = c.post("/v1/search", json={"query": "价格呢？", "session_id": "shared"}, headers=B).json()
        assert a["standalone_query"] == "AnySearch 的价格"
        assert "AnySearch" not in b["standalone_query"]  # beta's session has no AnySearch in it
        assert [m["content"] for m in c.get("/v1/sessions/shared/messages", headers=B).json()["messages"]] == ["价格呢？"]
        assert len(c.get("/v1/sessions/shared/messages", headers=A).json()["messages"]) == 2

        # cached results: acme's cached answer is not beta's
        body = {"query": "那番禺呢？", "messages": [{"role": "user", "content": "深圳最近三天适合露营吗？"}]}
        for path in ("/v1/search", "/v1/rewrite"):
            assert c.post(path, json=body, headers=A).json()["cached"] is False
            assert c.post(path, json=body, headers=A).json()["cached"] is True
            assert c.post(path, json=body, headers=B).json()["cached"] is False

        # rewrites: each tenant's rewriter saw only its own turns
        by_tenant = {name: state.rewriter.seen for name, state in service._tenants.items()}
        assert set(by_tenant) == {"acme", "beta"} and len(made) == 2
        assert by_tenant["acme"] == ["价格呢？", "那番禺呢？", "那番禺呢？"]  # search + rewrite, then cache hits
        assert by_tenant["beta"] == ["那番禺呢？", "那番禺呢？"]  # beta's "价格呢？" had no history: gate only


def test_session_turns_are_not_served_from_cache(client: TestClient) -> None:
    for _ in range(2):
        r = client.post("/v1/search", json={"query": "年假有几天", "session_id": "s-c"}, headers=A).json()
        assert r["cached"] is False
    assert len(client.get("/v1/sessions/s-c/messages", headers=A).json()["messages"]) == 2


def test_open_server_acts_for_the_local_tenant(make_client) -> None:
    c = make_client(settings(api_keys=""))
    assert c.get("/healthz").json()["auth"] == "open"
    c.post("/v1/search", json={"query": "年假有几天", "session_id": "o"})
    assert len(c.get("/v1/sessions/o/messages").json()["messages"]) == 1


# --- metrics, OpenAPI, playground ------------------------------------------------------------------------

def test_metrics_are_prometheus_text_without_tenant_names(client: TestClient) -> None:
    client.post("/v1/search", json={"query": "年假有几天"}, headers=A)
    client.post("/v1/search", json={"query": ""}, headers=A)
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert 'convsearch_http_requests_total{method="POST",route="/v1/search",status="200"} 1.0' in text
    assert 'convsearch_http_requests_total{method="POST",route="/v1/search",status="400"} 1.0' in text
    assert "convsearch_http_request_duration_seconds_bucket" in text
    assert 'convsearch_rewrites_total{fell_back="false",method="gate"}' in text
    assert "acme" not in text and "beta" not in text


def test_openapi_is_published_with_our_error_statuses(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    assert {"/v1/search", "/v1/rewrite", "/v1/sessions/{session_id}/messages", "/healthz"} <= set(paths)
    for path, ops in paths.items():
        for op in ops.values():
            assert "422" not in op["responses"]
    search = paths["/v1/search"]["post"]["responses"]
    assert {"200", "400", "401", "413", "429", "502", "504"} <= set(search)
    assert "Retry-After" in search["429"]["headers"]
    assert {"HTTPBearer", "APIKeyHeader"} <= set(schema["components"]["securitySchemes"])


def test_playground_page_and_its_safety(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert 'id="query"' in r.text
    js = client.get("/static/app.js")
    assert js.status_code == 200
    source = (STATIC / "app.js").read_text(encoding="utf-8")
    # no HTML sinks at all: every piece of text goes through textContent / text nodes
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(", source)


def test_which_turns_run_inline(bm25_index, monkeypatch) -> None:
    from convsearch.resolve import similar
    from convsearch.server.auth import Tenant

    t = Tenant("acme")
    if similar.available():  # the rule rewriter may embed to break a tie: "compute", a worker thread's work
        assert not Service(settings(), backend=bm25_index).inline(t, None, search=False)
    monkeypatch.setattr(similar, "_AVAILABLE", False)  # without the embedder the rules are pure CPU work
    svc = Service(settings(), backend=bm25_index, store=InMemoryStore())
    assert svc.inline(t, None, search=True) and svc.inline(t, None, search=False)
    assert not svc.inline(t, "s1", search=True)  # a stored session waits on the database
    assert not Service(settings(inline_turns="off"), backend=bm25_index).inline(t, None, search=True)
    assert not Service(settings(), backend=InMemoryBackend()).inline(t, None, search=True)  # not known I/O-free
    remote = Service(settings(reranker="tei", rerank_base_url="http://127.0.0.1:9"), backend=bm25_index)
    assert not remote.inline(t, None, search=True) and remote.inline(t, None, search=False)  # a rerank server waits
    assert not Service(settings(), backend=bm25_index,
                       rewriter_factory=lambda s: object()).inline(t, None, search=False)  # e.g. an LLM rewriter


# --- backends: a subset per request, partial answers, one Pipeline per tenant -----------------------------

def test_search_names_backends_and_says_when_one_failed(make_client, corpus) -> None:
    from convsearch.backends.fanout import FanOut
    from convsearch.testing.backends import ScriptedBackend

    kb = ScriptedBackend("kb", corpus)
    web = ScriptedBackend("web", error=BackendError("HTTP 503 from the web API"), paid=True)
    c = make_client(backend=FanOut([kb, web]))
    body = {"query": "价格呢？", "messages": [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}]}
    r = c.post("/v1/search", json=body, headers=A).json()
    assert r["partial"] is True and r["trace"]["partial"] is True
    assert r["errors"] == ["web: failed: BackendError: HTTP 503 from the web API"]
    assert r["results"][0]["id"] == "zh-any-price"
    runs = {b["backend"]: b for b in r["trace"]["backends"]}
    assert runs["kb"]["status"] == "ok" and runs["kb"]["queries"] == r["trace"]["queries"]
    assert runs["web"]["status"] == "failed" and runs["web"]["queries"] == [r["standalone_query"]]  # paid
    r2 = c.post("/v1/search", json=body, headers=A).json()
    assert r2["cached"] is False  # a partial answer is not cached
    en = c.post("/v1/search", json={"query": "SpaceX founded", "backends": ["kb"]}, headers=A).json()
    assert en["partial"] is False and [b["backend"] for b in en["trace"]["backends"]] == ["kb"]
    assert en["results"][0]["id"] == "en-spacex-founded"
    assert_error(c.post("/v1/search", json={"query": "SpaceX", "backends": ["nope"]}, headers=A), 400,
                 "invalid_request", "backends")


def test_recency_goes_through_the_pipeline_and_the_trace_says_how(make_client) -> None:
    from datetime import date, timedelta

    from convsearch.backends.fanout import FanOut
    from convsearch.testing.backends import ScriptedBackend
    from convsearch.types import Document

    day = date.today()  # a backend counts its window from the real date (a made-up today is applied after)
    docs = [Document("zh-new", "番禺最近三天露营天气：周六转晴", title="番禺露营天气", lang="zh",
                     date=(day - timedelta(days=2)).isoformat()),
            Document("zh-old", "番禺去年的露营天气", title="番禺露营旧闻", lang="zh",
                     date=(day - timedelta(days=40)).isoformat()),
            Document("en-new", "Camping weather in Panyu this week", lang="en", date=day.isoformat())]
    native = ScriptedBackend("native", docs)  # applies lang and recency itself
    plain = ScriptedBackend("plain", docs, native_filters=False)  # applies neither: done after its search
    c = make_client(backend=FanOut([native, plain]), today=lambda: day)
    r = c.post("/v1/search", json={"query": "番禺 露营 天气", "recency": "week", "lang": "zh"}, headers=A).json()
    assert [x["id"] for x in r["results"]] == ["zh-new"]
    notes = {b["backend"]: b["notes"] for b in r["trace"]["backends"]}
    assert notes == {"native": ["filter lang: natively", "recency week: natively"],
                     "plain": ["filter lang: after the search", "recency week: after the search"]}
    assert plain.calls[0].recency is None and native.calls[0].recency.value == "week"


def test_rewrite_endpoint_is_the_pipelines_plan_and_emits_the_rewrite_event(client: TestClient, caplog) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="convsearch.events")
    body = {"query": "When was it founded?", "messages": [{"role": "user", "content": "Tell me about SpaceX."}]}
    r = client.post("/v1/rewrite", json=body, headers=A).json()
    assert r["standalone_query"] == "When was SpaceX founded?"
    assert '"event": "rewrite"' in caplog.text and "When was SpaceX founded?" in caplog.text


def test_each_tenant_has_its_own_pipeline_closed_on_shutdown(bm25_index) -> None:
    from convsearch.server.auth import Tenant

    closed: list[str] = []

    class Tracked(RuleRewriter):
        def close(self) -> None:
            closed.append("x")

    svc = Service(settings(), backend=bm25_index, store=InMemoryStore(), rewriter_factory=lambda s: Tracked())
    a, b = svc.tenant(Tenant("acme")), svc.tenant(Tenant("beta"))
    assert a.pipeline is not b.pipeline and a.rewriter is not b.rewriter
    assert a.pipeline.backends == b.pipeline.backends == (bm25_index,)  # the index is the one shared part
    svc.close()
    assert closed == ["x", "x"] and a.pipeline.closed and b.pipeline.closed


def test_a_late_backend_gives_a_partial_answer_before_the_request_deadline(make_client, corpus) -> None:
    from convsearch.backends.fanout import FanOut
    from convsearch.testing.backends import ScriptedBackend

    slow = ScriptedBackend("slow", corpus, delay_s=5.0)
    c = make_client(settings(deadline_s=1.0, inline_turns="off"), backend=FanOut([ScriptedBackend("kb", corpus), slow]))
    r = c.post("/v1/search", json={"query": "When did SpaceX first launch a rocket?"}, headers=A)
    assert r.status_code == 200, r.text  # the fan-out stopped waiting before the 504
    body = r.json()
    assert body["partial"] and body["errors"][0].startswith("slow: late: no answer within the 0.75s deadline")
    assert body["results"][0]["id"] == "en-spacex-launch"


def test_the_published_schema_lists_the_servers_backends(make_client, corpus) -> None:
    from convsearch.backends.fanout import FanOut
    from convsearch.testing.backends import ScriptedBackend

    c = make_client(backend=FanOut([ScriptedBackend("kb", corpus), ScriptedBackend("web", corpus, paid=True)]))
    prop = c.get("/openapi.json").json()["components"]["schemas"]["SearchRequest"]["properties"]["backends"]
    assert [a["items"]["enum"] for a in prop["anyOf"] if a.get("type") == "array"] == [["kb", "web"]]


def test_close_keeps_a_store_the_caller_passed_in(bm25_index, tmp_path: Path) -> None:
    """An injected store is the caller's: close() neither closes nor drops it (dropping it made a later store()
    open SQLite in the data dir, which is how a fuzz test once wrote into the user's history database)."""
    store = InMemoryStore()
    svc = Service(settings(data_dir=tmp_path / "data"), backend=bm25_index, store=store)
    svc.close()
    assert svc.store() is store and not (tmp_path / "data").exists()


def test_healthz_answers_while_a_rule_turn_that_may_embed_is_in_flight(make_client) -> None:
    """The rule rewriter may embed to break a tie (``cost`` "compute" where the embedder is installed): its turns
    run in a worker thread, so the event loop answers /healthz meanwhile (before: such a turn ran on the loop)."""
    import threading

    from convsearch.resolve import similar

    if not similar.available():
        pytest.skip("the embedder (the dense extra) is not installed: the rule rewriter is pure CPU work then")
    started, release = threading.Event(), threading.Event()

    class Embedding(RuleRewriter):  # stands for a turn whose tie-break is still embedding
        def rewrite(self, *args: Any, **kw: Any) -> RewriteResult:
            started.set()
            release.wait(10)
            return super().rewrite(*args, **kw)

    c = make_client(rewriter_factory=lambda s: Embedding())
    done: list[int] = []
    body = {"query": "香蕉呢？", "messages": [{"role": "user", "content": "猫可以吃葡萄吗？"}], "variants": False}
    t = threading.Thread(target=lambda: done.append(c.post("/v1/rewrite", json=body, headers=A).status_code))
    t.start()
    try:
        assert started.wait(10), "the rewrite never started"
        health = c.get("/healthz")  # answered while the rewrite still holds its thread
        assert health.status_code == 200 and not done
    finally:
        release.set()
        t.join(10)
    assert done == [200]
