"""Bocha (博查), the fifth web provider, added as one module (its settings declared there) and one registry row
(issue 27 item 5): its request checked by the replay server like the real API (``POST /v1/web-search``, Bearer
key, JSON body with query / count / summary / freshness), its ``webPages.value[]`` mapped to hits, and it joins the
``web`` chain and the policy + cache like every provider. The shared adapter tests (test_web_adapters.py) and the
contract suite (test_web_contract.py) run over it too."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from convsearch.backends.base import Recency
from convsearch.backends.registry import BUILTINS, Row, known_backends, open_backend, web_providers
from convsearch.backends.web import bocha, configured
from convsearch.backends.web import from_settings as web_from_settings
from convsearch.backends.web._http import reset_shared_state
from convsearch.config import Settings
from convsearch.errors import ConfigError, UpstreamRateLimited, UpstreamRejected
from convsearch.infra.turn import turn
from convsearch.testing.web_replay import Fault, WebReplayServer

pytestmark = pytest.mark.integration
KEYS = ("sk-bocha-one", "sk-bocha-two")


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    reset_shared_state()
    yield
    reset_shared_state()


@pytest.fixture
def srv() -> Iterator[WebReplayServer]:
    with WebReplayServer("bocha", keys=KEYS) as s:
        yield s


def env_for(srv: WebReplayServer, **extra: str) -> dict[str, str]:
    return {"CONVSEARCH_BOCHA_API_KEYS": ",".join(KEYS), "CONVSEARCH_BOCHA_BASE_URL": srv.base_url,
            "CONVSEARCH_BOCHA_RATE": "50/s", "CONVSEARCH_WEB_MAX_RETRIES": "1", **extra}


def test_the_request_is_the_documented_one(srv: WebReplayServer) -> None:
    b = bocha.from_settings(Settings.from_env(env_for(srv)))
    b.search("深圳 今天 天气", top_k=3, recency=Recency.WEEK)
    r = srv.requests[-1]
    assert (r["method"], r["path"], r["status"]) == ("POST", "/v1/web-search", 200)
    assert r["headers"]["authorization"] == f"Bearer {r['key']}" and r["key"] in KEYS
    assert r["headers"]["content-type"].startswith("application/json")
    assert r["json"] == {"query": "深圳 今天 天气", "count": 3, "summary": True, "freshness": "oneWeek"}
    b.search("AnySearch pricing", top_k=60)  # the API's count is 1..50
    assert srv.requests[-1]["json"]["count"] == 50 and srv.requests[-1]["json"]["freshness"] == "noLimit"
    b.close()


def test_web_pages_become_hits_with_title_url_domain_date_and_text(srv: WebReplayServer) -> None:
    b = bocha.from_settings(Settings.from_env(env_for(srv)))
    zh = b.search("深圳 今天 天气", top_k=3)
    h = zh[0]
    assert h.title == "深圳今天天气：多云转晴 18~25°C" and h.url.startswith("https://")
    assert h.metadata["domain"] and h.metadata["site_name"] == h.metadata["domain"].removeprefix("www.")
    assert h.date == (datetime.now(UTC) - timedelta(hours=2)).date().isoformat()  # +08:00 counted in UTC
    assert h.metadata["published_raw"].endswith("+08:00")
    assert h.source == "bocha" and h.metadata["provider"] == "bocha" and h.metadata["source_type"] == "web"
    full = h.text
    b.close()
    off = bocha.from_settings(Settings.from_env(env_for(srv, CONVSEARCH_BOCHA_SUMMARY="off")))
    short = off.search("深圳 今天 天气", top_k=3)[0]
    assert srv.requests[-1]["json"]["summary"] is False
    assert short.id == h.id and len(short.text) < len(full) and full.startswith(short.text)  # snippet, not summary
    off.close()


def test_errors_in_a_200_answer_and_http_errors(srv: WebReplayServer) -> None:
    b = bocha.from_settings(Settings.from_env(env_for(srv)))
    srv.push(Fault.payload({"code": 403, "message": "You do not have enough money", "log_id": "x"}))
    with pytest.raises(UpstreamRejected, match="bocha: You do not have enough money"):
        b.search("金价", top_k=3)
    srv.push(*[Fault.payload({"code": 429, "msg": "You have reached the request limit."})] * 5)
    with pytest.raises(UpstreamRateLimited, match="request limit"):
        b.search("比分", top_k=3)
    srv.push(Fault.empty())
    assert b.search("比分", top_k=3) == []
    b.close()
    wrong = bocha.from_settings(Settings.from_env({**env_for(srv), "CONVSEARCH_BOCHA_API_KEYS": "sk-wrong"}))
    with pytest.raises(UpstreamRejected) as e:
        wrong.search("比分", top_k=3)
    assert e.value.status == 401 and "CONVSEARCH_BOCHA_API_KEYS" in str(e.value) and "sk-wrong" not in str(e.value)
    wrong.close()


def test_its_settings_are_declared_in_its_module_and_stay_secret(caplog: pytest.LogCaptureFixture) -> None:
    s = Settings.from_env({"CONVSEARCH_BOCHA_API_KEYS": "sk-live-hunter2"})
    conf = bocha.SECTION.of(s)
    assert conf is s.section("bocha") and conf.summary == "on"
    assert conf.endpoint() == "https://api.bochaai.com" and bocha.PATH == "/v1/web-search"
    assert conf.call_rate() == (60, 60.0)
    keys = conf.secrets()
    assert [k.env_var for k in keys] == ["CONVSEARCH_BOCHA_API_KEYS"] and keys[0].reveal() == "sk-live-hunter2"
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("convsearch.test").info("%s %r %r", s, s.sections, conf)
    assert "hunter2" not in repr(s) + str(s) + repr(conf) + caplog.text
    with pytest.raises(ConfigError, match="CONVSEARCH_BOCHA_API_KEYS is not set"):
        bocha.from_settings(Settings())
    with pytest.raises(ConfigError, match="CONVSEARCH_BOCHA_RATE"):
        bocha.from_settings(Settings.from_env({"CONVSEARCH_BOCHA_API_KEYS": "k", "CONVSEARCH_BOCHA_RATE": "fast"}))
    with pytest.raises(ConfigError, match="CONVSEARCH_BOCHA_SUMMARY"):
        bocha.from_settings(Settings.from_env({"CONVSEARCH_BOCHA_API_KEYS": "k", "CONVSEARCH_BOCHA_SUMMARY": "yes"}))


def test_it_is_a_row_of_the_registry_like_every_provider(srv: WebReplayServer) -> None:
    assert BUILTINS["bocha"] == Row("convsearch.backends.web.bocha:from_settings", web=True)
    assert known_backends()["bocha"] == "convsearch.backends.web.bocha:from_settings"
    assert web_providers() == ["tavily", "brave", "serpapi", "bing", "searxng", "bocha"]
    assert web_providers(chain=True) == ["tavily", "brave", "serpapi", "searxng", "bocha"]
    s = Settings.from_env(env_for(srv, CONVSEARCH_BACKENDS="bocha"))
    b = open_backend(s)  # behind the policy and the cache, like every provider
    assert type(b).__name__ == "Policed"
    with turn() as notes:
        assert b.search("AnySearch pricing 价格", top_k=3)
    assert any(n.startswith("bocha: ") for n in notes)
    b.close()
    assert configured(s) == ["bocha"] and configured(Settings()) == []
    chain = web_from_settings(s)  # `web` with nothing else configured is bocha alone
    assert chain.search("AnySearch pricing 价格", top_k=3)[0].source == "bocha"
    chain.close()
    with pytest.raises(ConfigError, match="CONVSEARCH_BOCHA_API_KEYS"):
        web_from_settings(Settings())  # the message names every provider's variable, bocha's too
    with pytest.raises(ConfigError, match="cannot be indexed into"):
        open_backend(s, "bocha", create=True)
