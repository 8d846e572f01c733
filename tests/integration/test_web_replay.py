"""The replay server checks each provider's request shape like the real API and answers in its response shape."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import httpx
import pytest

from convsearch.testing.web_replay import Fault, WebReplayServer

pytestmark = pytest.mark.integration
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _get(srv: WebReplayServer, path: str, **kw) -> httpx.Response:
    return httpx.get(srv.base_url + path, timeout=5, **kw)


def test_tavily_auth_and_body_checks():
    with WebReplayServer("tavily", keys=["tvly-1"], now=NOW) as srv:
        url = srv.base_url + "/search"
        ok = httpx.post(url, json={"query": "深圳 天气"}, headers={"Authorization": "Bearer tvly-1"})
        assert ok.status_code == 200 and ok.json()["results"][0]["title"].startswith("深圳今天天气")
        assert httpx.post(url, json={"query": "x", "api_key": "tvly-1"}).status_code == 200  # the older body key
        assert httpx.post(url, json={"query": "x"}).status_code == 401
        assert httpx.post(url, json={"query": "x"}, headers={"Authorization": "Bearer nope"}).status_code == 401
        bad = httpx.post(url, json={"query": "x", "max_results": 50}, headers={"Authorization": "Bearer tvly-1"})
        assert bad.status_code == 400 and "max_results" in bad.json()["detail"]["error"]
        assert httpx.post(url, content=b"{nope", headers={"Authorization": "Bearer tvly-1"}).status_code == 400
        assert httpx.get(url).status_code == 405


def test_tavily_news_topic_dates_results():
    with WebReplayServer("tavily", keys=["k"], now=NOW) as srv:
        r = httpx.post(srv.base_url + "/search", json={"query": "London weather today", "topic": "news",
                                                       "time_range": "day"}, headers={"Authorization": "Bearer k"})
        res = r.json()["results"]
        assert res and all(x["published_date"].endswith("GMT") for x in res)


def test_brave_checks_token_and_count_and_renders_ages():
    with WebReplayServer("brave", keys=["b1"], now=NOW) as srv:
        path = "/res/v1/web/search"
        assert _get(srv, path, params={"q": "x"}).status_code == 401
        token = {"X-Subscription-Token": "b1"}
        assert _get(srv, path, params={"q": "x", "count": 21}, headers=token).status_code == 422
        assert _get(srv, path, params={"q": "x", "freshness": "pz"},
                    headers={"X-Subscription-Token": "b1"}).status_code == 422
        r = _get(srv, path, params={"q": "AnySearch pricing"}, headers={"X-Subscription-Token": "b1"})
        first = r.json()["web"]["results"][0]
        assert first["age"] == "November 14, 2026" and first["page_age"].startswith("2026-11-14")
        assert "<strong>AnySearch</strong>" in first["description"]
        week = _get(srv, path, params={"q": "AnySearch pricing", "freshness": "pw"},
                    headers={"X-Subscription-Token": "b1"}).json()["web"]["results"]
        assert week == []  # 400 hours old: outside the week


def test_serpapi_checks_and_zh_dates_and_200_error():
    with WebReplayServer("serpapi", keys=["s1"], now=NOW) as srv:
        assert _get(srv, "/search", params={"q": "x", "engine": "google"}).status_code == 401
        assert _get(srv, "/search", params={"q": "x", "engine": "yahoo", "api_key": "s1"}).status_code == 400
        assert _get(srv, "/search", params={"engine": "google", "api_key": "s1"}).json()["error"].startswith("Missing")
        zh = _get(srv, "/search", params={"q": "金价 黄金价格", "engine": "google", "api_key": "s1"}).json()
        assert zh["organic_results"][0]["date"] == "1 天前"
        assert "api_key" not in zh["search_parameters"]
        none = _get(srv, "/search", params={"q": "zzzz qqqq", "engine": "bing", "api_key": "s1"})
        assert none.status_code == 200 and "hasn't returned any results" in none.json()["error"]


def test_searxng_json_disabled_is_403_and_week_is_refused():
    with WebReplayServer("searxng", keys=(), json_enabled=False) as srv:
        assert _get(srv, "/search", params={"q": "x", "format": "json"}).status_code == 403
    with WebReplayServer("searxng", keys=(), now=NOW) as srv:
        assert _get(srv, "/search", params={"q": "x", "format": "json", "time_range": "week"}).status_code == 400
        res = _get(srv, "/search", params={"q": "混合检索", "format": "json"}).json()["results"]
        by_url = {r["url"]: r["publishedDate"] for r in res}
        assert by_url["https://wiki.example.org/zh/混合检索"] is None  # an undated page
        assert by_url["https://docs.anysearch.example/zh/pricing"] == "2026-11-14T17:00:00"


def test_faults_in_order_with_provider_headers():
    with WebReplayServer("brave", keys=["b"], now=NOW) as srv:
        srv.push(Fault.rate_limited(retry_after=3), Fault.server_error(503), Fault.malformed(), Fault.html(),
                 Fault.empty())
        h = {"X-Subscription-Token": "b"}
        r = _get(srv, "/res/v1/web/search", params={"q": "x"}, headers=h)
        assert r.status_code == 429 and r.headers["X-RateLimit-Reset"].startswith("3,")
        assert _get(srv, "/res/v1/web/search", params={"q": "x"}, headers=h).status_code == 503
        with pytest.raises(json.JSONDecodeError):
            _get(srv, "/res/v1/web/search", params={"q": "x"}, headers=h).json()
        page = _get(srv, "/res/v1/web/search", params={"q": "x"}, headers=h)
        assert page.status_code == 502 and page.text.startswith("<html>")
        assert _get(srv, "/res/v1/web/search", params={"q": "weather"}, headers=h).json()["web"]["results"] == []
        assert _get(srv, "/res/v1/web/search", params={"q": "weather"}, headers=h).json()["web"]["results"]


def test_tavily_429_has_retry_after_and_slow_answers_are_slow():
    with WebReplayServer("tavily", keys=["k"]) as srv:
        srv.push(Fault.rate_limited(retry_after=2), Fault.slow(0.3))
        h = {"Authorization": "Bearer k"}
        r = httpx.post(srv.base_url + "/search", json={"query": "x"}, headers=h)
        assert r.status_code == 429 and r.headers["Retry-After"] == "2"
        t = time.perf_counter()
        assert httpx.post(srv.base_url + "/search", json={"query": "x"}, headers=h).status_code == 200
        assert time.perf_counter() - t >= 0.3


def test_limit_per_key_answers_429_beyond_it():
    with WebReplayServer("serpapi", keys=["a", "b"], limit=(3, 60.0)) as srv:
        codes = [_get(srv, "/search", params={"q": "x", "engine": "google", "api_key": "a"}).status_code
                 for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        assert _get(srv, "/search", params={"q": "x", "engine": "google", "api_key": "b"}).status_code == 200
        assert srv.served == {200: 4, 429: 1}
