"""Web backends inside a whole turn: the Pipeline, the CLI and /v1/search against loopback replay servers.

Default recency for time-sensitive questions, trace notes of every decision, one provider down or late while
the other answers (partial), sensitive queries refused, the response cache skipping time-sensitive questions."""

from __future__ import annotations

import json
import time

import pytest

from convsearch.backends.registry import open_backend
from convsearch.backends.web._http import reset_shared_state
from convsearch.config import Settings
from convsearch.infra.deadline import Deadline
from convsearch.pipeline import Pipeline
from convsearch.testing.web_replay import Fault, WebReplayServer

pytestmark = pytest.mark.integration
KEYS = ("pipe-1", "pipe-2")


@pytest.fixture(autouse=True)
def _fresh():
    from convsearch.backends.web.guard import reset_shared_caches

    reset_shared_state()
    reset_shared_caches()
    yield
    reset_shared_state()
    reset_shared_caches()


@pytest.fixture
def servers():
    with WebReplayServer("tavily", keys=KEYS) as t, WebReplayServer("brave", keys=KEYS) as b:
        yield {"tavily": t, "brave": b}


def env_for(servers, **extra: str) -> dict[str, str]:
    env = {"CONVSEARCH_BACKENDS": ",".join(servers), "CONVSEARCH_DENSE": "off"}
    for p, srv in servers.items():
        env |= {f"CONVSEARCH_{p.upper()}_API_KEYS": ",".join(KEYS), f"CONVSEARCH_{p.upper()}_BASE_URL": srv.base_url,
                f"CONVSEARCH_{p.upper()}_RATE": "50/s"}
    env.update(extra)
    return env


def test_a_time_sensitive_turn_gets_a_default_recency_and_says_every_decision(servers):
    s = Settings.from_env(env_for(servers))
    with Pipeline(open_backend(s), settings=s, owns_backends=True) as p:
        r = p.search("深圳今天天气怎么样？", top_k=5)
    notes = r.trace.notes
    assert "recency day: default for a time-sensitive query" in notes
    assert servers["tavily"].requests[0]["json"]["time_range"] == "day"
    assert servers["brave"].requests[0]["params"]["freshness"] == "pd"
    assert any(n.startswith("tavily: ") and "key #" in n and "queued" in n for n in notes)
    assert any(n.startswith("cache skipped (brave): time-sensitive") for n in notes)
    assert {c.provider for c in r.citations} <= {"tavily", "brave"} and r.citations
    assert r.citations[0].title.startswith("深圳今天天气") and not r.trace.partial
    assert "[1] 深圳今天天气" in r.context


def test_an_evergreen_question_has_no_default_window_and_is_cached(servers):
    s = Settings.from_env(env_for(servers))
    with Pipeline(open_backend(s), settings=s, owns_backends=True) as p:
        first = p.search("What is hybrid search?", top_k=5)
        again = p.search("What is hybrid search?", top_k=5)
    assert not any("default for a time-sensitive" in n for n in first.trace.notes)
    assert "time_range" not in servers["tavily"].requests[0]["json"]
    assert any(n.startswith("cache hit (tavily)") for n in again.trace.notes)
    assert [c.id for c in again.citations] == [c.id for c in first.citations]
    undated = [c for c in first.citations if c.undated]
    assert undated and all("undated" in first.context.split(f"[{c.n}]")[1].split("\n")[0] for c in undated)


def test_sync_turns_reuse_their_connections_to_each_provider(servers):
    """A sync fan-out turn runs on a fresh event loop of its own; the web adapters then search through their
    pooled sync client (fanout.ON_TURN_LOOP), whose keep-alive connections outlive the turn. An async client
    made per turn's loop opened new connections every turn."""
    s = Settings.from_env(env_for(servers))
    with Pipeline(open_backend(s), settings=s, owns_backends=True) as p:
        for q in ("What is hybrid search?", "Falcon 1 SpaceX", "AnySearch pricing plans"):
            assert p.search(q, top_k=5).citations
    for srv in servers.values():
        assert len(srv.requests) == 3 and srv.connections == 1


def test_one_provider_unreachable_the_other_answers(servers):
    env = env_for(servers, CONVSEARCH_BRAVE_BASE_URL="http://127.0.0.1:9", CONVSEARCH_WEB_MAX_RETRIES="0")
    s = Settings.from_env(env)
    with Pipeline(open_backend(s), settings=s, owns_backends=True) as p:
        r = p.search("AnySearch pricing plans", top_k=5)
    assert r.trace.partial and r.citations and all(c.provider == "tavily" for c in r.citations)
    assert any(n.startswith("backend brave failed: ") and "unreachable at http://127.0.0.1:9" in n
               for n in r.trace.notes)


def test_a_late_provider_is_left_out_at_the_deadline(servers):
    servers["brave"].push(Fault.slow(3.0), Fault.slow(3.0))
    s = Settings.from_env(env_for(servers))
    with Pipeline(open_backend(s), settings=s, owns_backends=True) as p:
        t = time.perf_counter()
        r = p.search("Falcon 1 SpaceX", top_k=5, deadline=Deadline(0.8))
        took = time.perf_counter() - t
    assert took < 1.6 and r.trace.partial and r.citations
    assert {b.backend: b.status for b in r.trace.backends}["brave"] in ("late", "failed")


def test_a_sensitive_query_reaches_no_provider(servers):
    s = Settings.from_env(env_for(servers))
    with Pipeline(open_backend(s), settings=s, owns_backends=True) as p:
        r = p.search("how to make a bomb", top_k=5)
    assert r.citations == () and not servers["tavily"].requests and not servers["brave"].requests
    assert any(n.startswith("refused: policy") for n in r.trace.notes)


def test_cli_search_with_backends_and_recency(servers, run_cli):
    env = env_for(servers)
    p = run_cli("search", "latest AI search launches", "--backend", "tavily,brave", "--recency", "week", "--json",
                env=env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["results"] and {r["provider"] for r in out["results"]} <= {"tavily", "brave"}
    assert servers["brave"].requests[-1]["params"]["freshness"] == "pw"
    text = run_cli("search", "混合检索是什么", "--backend", "brave", env=env)
    assert text.returncode == 0 and "brave, wiki.example.org, UNDATED" in text.stdout


def test_cli_missing_key_is_one_line_naming_the_variable(run_cli):
    p = run_cli("search", "天气", "--backend", "tavily")
    assert p.returncode == 3
    assert p.stderr.strip().count("\n") == 0 and "CONVSEARCH_TAVILY_API_KEYS is not set" in p.stderr


def test_v1_search_wires_backends_recency_and_skips_the_cache_for_time_sensitive_questions(servers):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from convsearch.server.app import create_app

    s = Settings.from_env(env_for(servers), api_keys="acme:k-acme", rate_limit=0)
    with TestClient(create_app(s)) as c:
        h = {"Authorization": "Bearer k-acme"}
        body = {"query": "Bitcoin price today", "backends": ["brave"]}
        first = c.post("/v1/search", json=body, headers=h).json()
        again = c.post("/v1/search", json=body, headers=h).json()
        assert first["results"] and not again["cached"]  # time-sensitive: never served from the cache
        assert len(servers["brave"].requests) == 2 and not servers["tavily"].requests
        week = c.post("/v1/search", json={"query": "AnySearch pricing", "recency": "month", "backends": ["tavily"]},
                      headers=h).json()
        assert servers["tavily"].requests[-1]["json"]["time_range"] == "month"
        assert all(r["provider"] == "tavily" for r in week["results"])
        assert "convsearch_web_outbound_total" in c.get("/metrics").text
