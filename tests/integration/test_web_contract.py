"""Every web adapter (and the cached failover chain) passes the shared SearchBackend contract, against the
loopback replay server (the pages are not CONTRACT_DOCS: the data-describing attributes are overridden)."""

from __future__ import annotations

from datetime import date

import pytest

from convsearch.backends import testing as contract
from convsearch.backends.web import bocha, brave, searxng, serpapi, tavily
from convsearch.backends.web import from_settings as web_from_settings
from convsearch.backends.web._http import reset_shared_state
from convsearch.config import Settings
from convsearch.testing.web_replay import WebReplayServer

pytestmark = pytest.mark.integration
KEYS = ("contract-1", "contract-2")


@pytest.fixture(scope="module")
def replay():
    """One replay server per provider for the module."""
    servers = {p: WebReplayServer(p, keys=KEYS if p != "searxng" else ()).start()
               for p in ("tavily", "brave", "serpapi", "searxng", "bocha")}
    yield servers
    for srv in servers.values():
        srv.close()


class _WebContract(contract.SearchBackendContract):
    provider = "tavily"
    zh_query, zh_expected = "番禺 露营 天气", None
    en_query, en_expected = "Falcon rocket launch", None
    broad_queries = ("AnySearch 检索 混合检索 价格", "AnySearch hybrid search pricing")
    filter_cases = (("lang", "zh"), ("lang", "en"), ("source", "docs.anysearch.example"), ("source_type", "web"),
                    ("date_from", "2026-11-01"), ("date_to", date.today().isoformat()))
    knows_corpus = False
    big_k = 20

    @property
    def today(self) -> date:  # type: ignore[override]
        """The date the backend counts its recency windows from: the real one, read when the test runs (the replay
        server dates its pages by the real clock; a date taken at import is yesterday's once a run crosses
        midnight, and every recency test then took it for a replayed session's date)."""
        return date.today()

    def make(self, s: Settings):
        modules = {"tavily": tavily, "brave": brave, "serpapi": serpapi, "searxng": searxng, "bocha": bocha}
        return modules[self.provider].from_settings(s)

    @pytest.fixture
    def backend(self, replay):
        server = replay[self.provider]
        reset_shared_state()
        p = self.provider.upper()
        env = {f"CONVSEARCH_{p}_BASE_URL": server.base_url, f"CONVSEARCH_{p}_RATE": "off"}
        if self.provider != "searxng":
            env[f"CONVSEARCH_{p}_API_KEYS"] = ",".join(KEYS)
        b = self.make(Settings.from_env(env))
        yield b
        b.close()


class TestTavilyContract(_WebContract):
    provider = "tavily"
    filter_cases = _WebContract.filter_cases[:4]  # Tavily dates only its news topic: no date filter finds a hit


class TestBraveContract(_WebContract):
    provider = "brave"


class TestSerpApiContract(_WebContract):
    provider = "serpapi"


class TestSearxngContract(_WebContract):
    provider = "searxng"


class TestBochaContract(_WebContract):
    provider = "bocha"


class TestCachedFailoverContract(_WebContract):
    """``web``: tavily → brave, behind the tiered cache."""

    provider = "brave"

    def make(self, s: Settings):
        return web_from_settings(Settings.from_env(s.to_env(), web_providers="brave,searxng",
                                                   searxng_base_url="http://127.0.0.1:9"))
