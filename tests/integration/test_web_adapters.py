"""The real web adapters (httpx) against the loopback replay server: request shapes, cleaning, recency, faults,
key rotation, retries, the breaker, the deadline. zh and en queries throughout."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, date, datetime, timedelta

import pytest

from convsearch.backends.base import Recency, hit_date
from convsearch.backends.web import bocha, brave, searxng, serpapi, tavily
from convsearch.backends.web._http import (
    BreakerOpen,
    UpstreamMalformed,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamUnavailable,
    reset_shared_state,
)
from convsearch.config import Settings
from convsearch.errors import BackendError, ConfigError
from convsearch.infra.turn import turn
from convsearch.testing.web_replay import Fault, WebReplayServer

pytestmark = pytest.mark.integration
PROVIDERS = ("tavily", "brave", "serpapi", "searxng", "bocha")
MODULES = {"tavily": tavily, "brave": brave, "serpapi": serpapi, "searxng": searxng, "bocha": bocha}
JSON_BODY = ("tavily", "bocha")  # the providers whose parameters go in a JSON body
KEYS = ("key-one", "key-two")


@pytest.fixture(autouse=True)
def _fresh_budgets():
    reset_shared_state()
    yield
    reset_shared_state()


def settings_for(provider: str, srv: WebReplayServer, **extra: str) -> Settings:
    env = {f"CONVSEARCH_{provider.upper()}_BASE_URL": srv.base_url, "CONVSEARCH_WEB_MAX_RETRIES": "2",
           "CONVSEARCH_WEB_TIMEOUT_S": "2", f"CONVSEARCH_{provider.upper()}_RATE": "50/s"}
    if provider != "searxng":
        env[f"CONVSEARCH_{provider.upper()}_API_KEYS"] = ",".join(KEYS)
    env.update(extra)
    return Settings.from_env(env)


@pytest.fixture(params=PROVIDERS)
def provider(request) -> str:
    return request.param


@pytest.fixture
def served(provider):
    """(server, backend) for one provider; the backend built by its module's from_settings."""
    with WebReplayServer(provider, keys=KEYS if provider != "searxng" else ()) as srv:
        b = MODULES[provider].from_settings(settings_for(provider, srv))
        yield srv, b
        b.close()


def test_zh_and_en_hits_are_clean_and_annotated(served, provider):
    srv, b = served
    zh = b.search("深圳 今天 天气", top_k=3)
    en = asyncio.run(b.asearch("AnySearch pricing plans", top_k=3))
    assert zh[0].title == "深圳今天天气：多云转晴 18~25°C"  # &deg; decoded
    assert en[0].url == "https://docs.anysearch.example/en/pricing?ref=nav"
    assert en[0].id == "//docs.anysearch.example/en/pricing"  # canonical: tracking parameter dropped
    for h in zh + en:
        assert "<" not in h.text and "&amp;" not in h.text and "&nbsp;" not in h.text
        assert h.source == b.name and h.metadata["provider"] == b.name and h.metadata["rank"] == h.rank
        assert h.metadata["domain"] and h.metadata["source_type"] == "web"
        assert h.metadata["key_index"] in (0, 1) and h.metadata["queued_ms"] == 0
    assert [h.rank for h in zh] == list(range(1, len(zh) + 1))
    assert zh[0].metadata["lang"] == "zh" and en[0].metadata["lang"] == "en"
    if provider != "tavily":  # Tavily dates only its news topic
        assert zh[0].date == (datetime.now(UTC) - timedelta(hours=2)).date().isoformat()


@pytest.mark.parametrize("provider", ["tavily", "brave", "serpapi", "bocha"])
def test_keys_rotate_and_never_leave_the_request(served, provider, caplog):
    srv, b = served
    caplog.set_level(logging.DEBUG)
    for q in ("比分", "score", "金价", "price"):
        b.search(q, top_k=2)
    assert sorted({r["key"] for r in srv.requests}) == sorted(KEYS)
    assert all(k not in repr(b) and k not in caplog.text for k in KEYS)


@pytest.mark.parametrize("rec", [Recency.DAY, Recency.WEEK, Recency.MONTH])
def test_recency_is_native_or_filtered_after(served, provider, rec):
    srv, b = served
    with turn() as notes:
        hits = b.search("AnySearch 价格 pricing 天气 weather 比分 score latest 最新", top_k=10, recency=rec)
    last = srv.requests[-1]
    sent = last["json"] if provider in JSON_BODY else last["params"]
    expect = {"tavily": ("time_range", rec.value),
              "brave": ("freshness", {"day": "pd", "week": "pw", "month": "pm"}[rec.value]),
              "serpapi": ("tbs", {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m"}[rec.value]),
              "searxng": ("time_range", "month" if rec is Recency.WEEK else rec.value),
              "bocha": ("freshness", {"day": "oneDay", "week": "oneWeek", "month": "oneMonth"}[rec.value])}[provider]
    assert sent[expect[0]] == expect[1]
    oldest = rec.since(date.today())
    assert hits and all(hit_date(h) is None or hit_date(h) >= oldest for h in hits if provider == "tavily")
    if provider != "tavily":
        assert all(hit_date(h) is not None and hit_date(h) >= oldest for h in hits)
    if provider == "searxng" and rec is Recency.WEEK:
        assert any("week: month natively, then week by date filter" in n for n in notes)


def test_bing_through_serpapi_filters_recency_after():
    with WebReplayServer("serpapi", keys=KEYS) as srv:
        b = serpapi.from_settings(settings_for("serpapi", srv, CONVSEARCH_SERPAPI_ENGINE="bing"))
        with turn() as notes:
            hits = b.search("AnySearch pricing 价格", top_k=5, recency=Recency.WEEK)
        assert b.name == "bing" and srv.requests[-1]["params"]["engine"] == "bing"
        assert "tbs" not in srv.requests[-1]["params"] and "count" in srv.requests[-1]["params"]
        assert hits == []  # both pricing pages are 400 h old: dropped by the date filter after the search
        assert any("by date filter after the search" in n for n in notes)
        b.close()


def test_missing_key_is_one_line_naming_the_variable():
    for p in ("tavily", "brave", "serpapi", "bocha"):
        with pytest.raises(ConfigError, match=f"CONVSEARCH_{p.upper()}_API_KEYS is not set") as e:
            MODULES[p].from_settings(Settings())
        assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="CONVSEARCH_SEARXNG_BASE_URL is not set"):
        searxng.from_settings(Settings())


@pytest.mark.parametrize("provider", ["tavily", "brave", "serpapi", "bocha"])
def test_wrong_key_is_rejected_without_retry_and_without_the_key(provider):
    with WebReplayServer(provider, keys=["the-real-one"]) as srv:
        b = MODULES[provider].from_settings(settings_for(provider, srv))
        with pytest.raises(UpstreamRejected) as e:
            b.search("weather", top_k=3)
        assert e.value.status == 401 and len(srv.requests) == 1
        assert f"CONVSEARCH_{provider.upper()}_API_KEYS" in str(e.value)
        assert all(k not in str(e.value) for k in KEYS)
        b.close()


@pytest.mark.parametrize("provider", ["tavily", "brave", "serpapi", "bocha"])
def test_429_cools_that_key_and_the_other_key_answers(served, provider):
    srv, b = served
    srv.push(Fault.rate_limited(retry_after=30))
    with turn() as notes:
        hits = b.search("London weather", top_k=2)
    assert hits
    keys = [r["key"] for r in srv.requests]
    assert len(keys) == 2 and keys[0] != keys[1]
    assert any("upstream 429 on key #" in n for n in notes)
    # the cooled key stays out of rotation: the next calls all go to the other key
    b.search("Bitcoin price", top_k=2)
    b.search("比分", top_k=2)
    assert {r["key"] for r in srv.requests[2:]} == {keys[1]}


def test_searxng_429_waits_for_retry_after_in_the_queue():
    with WebReplayServer("searxng", keys=()) as srv:
        b = searxng.from_settings(settings_for("searxng", srv))
        srv.push(Fault.rate_limited(retry_after=1))
        t = time.perf_counter()
        with turn(deadline_s=5) as notes:
            assert b.search("weather", top_k=2)
        assert time.perf_counter() - t >= 0.9  # it waited out the Retry-After instead of hammering
        assert any("key cooled 1 s" in n for n in notes)
        b.close()


@pytest.mark.parametrize("fault", [Fault.server_error(503), Fault.malformed(), Fault.html(502)],
                         ids=["5xx", "malformed", "html"])
def test_transient_faults_are_retried(served, fault):
    srv, b = served
    srv.push(fault)
    with turn(deadline_s=5) as notes:
        hits = b.search("Falcon 1 SpaceX", top_k=2)
    assert hits and hits[0].metadata["retries"] == 1
    assert any(n.startswith(f"{b.name}: retry 1 in ") for n in notes)


def test_faults_beyond_the_retries_fail_with_the_cause(served):
    srv, b = served
    srv.push(Fault.html(502), Fault.malformed(), Fault.malformed())
    with pytest.raises(UpstreamMalformed, match="not JSON"):
        b.search("Falcon 1", top_k=2)
    assert len(srv.requests) == 3  # one call + two retries


def test_empty_results_and_serpapi_200_errors():
    with WebReplayServer("serpapi", keys=KEYS) as srv:
        b = serpapi.from_settings(settings_for("serpapi", srv))
        srv.push(Fault.empty())
        assert b.search("weather", top_k=3) == []
        srv.push(Fault.serpapi_error())  # "Google hasn't returned any results": an empty list, not a failure
        assert b.search("weather", top_k=3) == []
        srv.push(Fault.serpapi_error("Invalid `tbs` parameter."))
        with pytest.raises(UpstreamRejected, match="Invalid `tbs`"):
            b.search("weather", top_k=3)
        srv.push(Fault.serpapi_error("Your account has run out of searches.", status=429),
                 Fault.serpapi_error("Your account has run out of searches.", status=429),
                 Fault.serpapi_error("Your account has run out of searches.", status=429),
                 Fault.serpapi_error("Your account has run out of searches.", status=429),
                 Fault.serpapi_error("Your account has run out of searches.", status=429))
        with pytest.raises(UpstreamRateLimited, match="run out of searches"):
            b.search("weather", top_k=3)
        b.close()


def test_searxng_with_json_disabled_says_how_to_fix_it():
    with WebReplayServer("searxng", keys=(), json_enabled=False) as srv:
        b = searxng.from_settings(settings_for("searxng", srv))
        with pytest.raises(UpstreamRejected, match="search.formats"):
            b.search("天气", top_k=3)
        b.close()


def test_slow_answer_times_out_and_the_deadline_bounds_the_retries(served):
    srv, b = served
    srv.push(Fault.slow(3.0), Fault.slow(3.0), Fault.slow(3.0))
    t = time.perf_counter()
    with turn(deadline_s=0.6) as notes, pytest.raises(UpstreamUnavailable):
        b.search("weather", top_k=2)
    took = time.perf_counter() - t
    assert took < 1.2, took  # never past the turn's deadline (plus scheduling slack)
    assert any("timed out" in n or "deadline" in n for n in notes)


def test_unreachable_base_url_is_a_clear_backend_error():
    s = Settings.from_env({"CONVSEARCH_BRAVE_API_KEYS": "k", "CONVSEARCH_BRAVE_BASE_URL": "http://127.0.0.1:9",
                           "CONVSEARCH_WEB_MAX_RETRIES": "0"})
    b = brave.from_settings(s)
    with pytest.raises(BackendError, match=r"brave: unreachable at http://127.0.0.1:9"):
        b.search("weather")
    b.close()


def test_breaker_opens_after_consecutive_failures_then_probes():
    with WebReplayServer("tavily", keys=KEYS) as srv:
        b = tavily.from_settings(settings_for("tavily", srv, CONVSEARCH_WEB_MAX_RETRIES="0",
                                              CONVSEARCH_WEB_BREAKER_FAILURES="2",
                                              CONVSEARCH_WEB_BREAKER_COOLDOWN_S="0.3"))
        srv.push(Fault.server_error(500), Fault.server_error(500))
        for _ in range(2):
            with pytest.raises(UpstreamUnavailable):
                b.search("weather")
        n = len(srv.requests)
        with turn() as notes, pytest.raises(BreakerOpen):
            b.search("weather")
        assert len(srv.requests) == n and "breaker open, not called" in notes[-1]
        time.sleep(0.35)
        with turn() as notes:
            assert b.search("weather")  # the half-open probe succeeds and closes the breaker
        assert any("half-open" in x for x in notes) and b.breaker.state == "closed"
        b.close()


def test_sync_and_async_agree(served):
    srv, b = served
    sync = [(h.id, h.date) for h in b.search("最新 AI 搜索", top_k=5)]

    async def both():
        return await asyncio.gather(b.asearch("最新 AI 搜索", top_k=5), b.asearch("latest AI search", top_k=5))

    a_zh, a_en = asyncio.run(both())
    assert [(h.id, h.date) for h in a_zh] == sync and a_en


def test_async_clients_of_finished_loops_are_dropped(served):
    """One AsyncClient per event loop; a caller running each search under its own asyncio.run must not leave
    one entry per finished loop behind."""
    srv, b = served
    for q in ("最新 AI 搜索", "latest AI search", "AnySearch 价格"):
        asyncio.run(b.asearch(q, top_k=3))
    assert len(srv.requests) == 3 and len(b._aclients) == 1
