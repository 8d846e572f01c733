"""The API on the LLM path (a scripted OpenAI-compatible server on loopback): the rewrite says it came from
the LLM, and each tenant has its own LLM rewrite cache (one tenant's cached rewrite never answers another's)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("openai")
from fastapi.testclient import TestClient  # noqa: E402

from convsearch.config import Settings  # noqa: E402
from convsearch.history import InMemoryStore  # noqa: E402
from convsearch.server.app import create_app  # noqa: E402
from convsearch.testing.openai_server import FakeOpenAIServer, answer_by_query  # noqa: E402

pytestmark = pytest.mark.integration

A = {"Authorization": "Bearer key-acme"}
B = {"Authorization": "Bearer key-beta"}
BODY = {"query": "价格呢？", "messages": [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
                                       {"role": "assistant", "content": "支持 BM25、向量和混合检索。"}]}



def test_llm_rewrites_and_per_tenant_llm_caches(bm25_index) -> None:
    with FakeOpenAIServer(answer_by_query({"价格呢？": "AnySearch 的价格"})) as llm:
        s = Settings.from_env({"CONVSEARCH_LLM_BASE_URL": llm.base_url, "CONVSEARCH_LLM_MODEL": "fake-model",
                               "CONVSEARCH_LLM_API_KEY": "sk-test", "CONVSEARCH_LLM_TIMEOUT_S": "2"},
                              rewriter="llm", api_keys="acme:key-acme,beta:key-beta", dense="off", rate_limit=0,
                              cache_size=0)  # response cache off: this is about the LLM's own rewrite cache
        with TestClient(create_app(s, backend=bm25_index, store=InMemoryStore(), mcp=False)) as c:
            first = c.post("/v1/rewrite", json=BODY, headers=A).json()
            assert first["standalone_query"] == "AnySearch 的价格" and first["rewrite"]["method"] == "llm"
            assert len(llm.requests) == 1
            c.post("/v1/rewrite", json=BODY, headers=A)
            assert len(llm.requests) == 1  # acme's LLM cache answered
            beta = c.post("/v1/rewrite", json=BODY, headers=B).json()
            assert beta["standalone_query"] == "AnySearch 的价格"
            assert len(llm.requests) == 2  # beta asked the LLM itself: acme's cache is not beta's
            r = c.post("/v1/search", json=BODY, headers=B).json()
            assert r["standalone_query"] == "AnySearch 的价格" and r["results"][0]["id"] == "zh-any-price"
