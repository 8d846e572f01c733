"""convsearch inside LlamaIndex (real llama-index-core) and Haystack (real haystack-ai), zh and en."""

from __future__ import annotations

import asyncio

import pytest

from convsearch import InMemoryBackend
from convsearch.errors import InputError
from convsearch.history.memory_store import InMemoryStore

pytestmark = pytest.mark.integration

ZH = [("user", "AnySearch 支持哪些检索方式？")]


@pytest.fixture
def backend(corpus):
    return InMemoryBackend(corpus)


# --- LlamaIndex ---------------------------------------------------------------------------------------------
def test_llamaindex_history_in_the_query_bundle(backend):
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import NodeWithScore, QueryBundle

    from convsearch.integrations.llamaindex import ChatQueryBundle, ConvSearchRetriever

    r = ConvSearchRetriever(backend, k=3)
    nodes = r.retrieve(ChatQueryBundle("价格呢？", chat_history=ZH))
    assert nodes and all(isinstance(n, NodeWithScore) for n in nodes) and len(nodes) <= 3
    top = nodes[0]
    assert top.node.node_id == "zh-any-price" and top.score > 0
    md = top.node.metadata
    assert md["standalone_query"] == "AnySearch 的价格" and md["citation"] == 1
    assert md["source"] == "https://www.anysearch.example/pricing" and md["date"] == "2024-06-01"
    assert "ellipsis" in md["rewrite_reason"]
    # a plain QueryBundle or a string: no history, searched as typed
    assert r.retrieve(QueryBundle("NovaDB 价格"))[0].node.node_id == "zh-nova-price"
    assert r.retrieve("Falcon rocket launch")[0].node.node_id == "en-spacex-launch"
    got = asyncio.run(r.aretrieve(ChatQueryBundle("价格呢？", chat_history=ZH)))
    assert [n.node.node_id for n in got] == [n.node.node_id for n in nodes]


def test_llamaindex_chat_messages_and_sessions(backend):
    pytest.importorskip("llama_index.core")
    from llama_index.core.llms import ChatMessage, MessageRole

    from convsearch.integrations.llamaindex import ChatQueryBundle, ConvSearchRetriever

    history = [ChatMessage(role=MessageRole.USER, content="Who founded SpaceX?"),
               ChatMessage(role=MessageRole.ASSISTANT, content="SpaceX was founded by Elon Musk in 2002.")]
    r = ConvSearchRetriever(backend, k=3)
    assert r.retrieve(ChatQueryBundle("When did it first launch a rocket?", chat_history=history))[0].node.node_id \
        == "en-spacex-launch"
    s = ConvSearchRetriever(backend, k=3, store=InMemoryStore(), session_id="s-9")
    s.retrieve("AnySearch 支持哪些检索方式？")
    assert s.retrieve("价格呢？")[0].node.metadata["standalone_query"] == "AnySearch 的价格"


# --- Haystack -----------------------------------------------------------------------------------------------
def test_haystack_component_in_a_pipeline(backend):
    pytest.importorskip("haystack")
    from haystack import Document, Pipeline
    from haystack.dataclasses import ChatMessage

    from convsearch.integrations.haystack import ConvSearchRetriever

    p = Pipeline()
    p.add_component("search", ConvSearchRetriever(backend, top_k=3))
    out = p.run({"search": {"query": "价格呢？", "messages": [ChatMessage.from_user("AnySearch 支持哪些检索方式？")]}})
    docs = out["search"]["documents"]
    assert docs and all(isinstance(d, Document) for d in docs) and len(docs) <= 3
    assert docs[0].id == "zh-any-price" and docs[0].meta["standalone_query"] == "AnySearch 的价格"
    assert docs[0].meta["citation"] == 1 and docs[0].meta["url"] == "https://www.anysearch.example/pricing"
    en = [ChatMessage.from_user("Who founded SpaceX?"), ChatMessage.from_assistant("Elon Musk founded SpaceX in 2002.")]
    comp = ConvSearchRetriever(backend, top_k=2)
    got = comp.run("When did it first launch a rocket?", messages=en)["documents"]
    assert got[0].id == "en-spacex-launch" and len(got) <= 2
    assert len(comp.run("AnySearch NovaDB 价格 pricing", top_k=1)["documents"]) == 1
    async_docs = asyncio.run(comp.run_async("When did it first launch a rocket?", messages=en))["documents"]
    assert [d.id for d in async_docs] == [d.id for d in got]


def test_haystack_sessions_and_bad_roles(backend):
    pytest.importorskip("haystack")
    from convsearch.integrations.haystack import ConvSearchRetriever

    comp = ConvSearchRetriever(backend, store=InMemoryStore(), session_id="h-1")
    comp.run("AnySearch 支持哪些检索方式？")
    assert comp.run("价格呢？")["documents"][0].meta["standalone_query"] == "AnySearch 的价格"
    with pytest.raises(InputError, match="unknown chat role"):
        ConvSearchRetriever(backend).run("价格呢？", messages=[{"role": "wizard", "content": "x"}])


# --- built from the environment ------------------------------------------------------------------------------
def test_llamaindex_and_haystack_retrievers_build_themselves_from_the_environment(bm25_index, monkeypatch):
    """No backend, no pipeline: the configured index (CONVSEARCH_DATA_DIR) is opened on the first search."""
    pytest.importorskip("llama_index.core")
    pytest.importorskip("haystack")
    from haystack.dataclasses import ChatMessage

    from convsearch.integrations.haystack import ConvSearchRetriever as HaystackRetriever
    from convsearch.integrations.llamaindex import ChatQueryBundle
    from convsearch.integrations.llamaindex import ConvSearchRetriever as LlamaRetriever

    monkeypatch.setenv("CONVSEARCH_DATA_DIR", str(bm25_index.path.parent))
    monkeypatch.setenv("CONVSEARCH_DENSE", "off")
    li = LlamaRetriever(k=2)
    nodes = li.retrieve(ChatQueryBundle("价格呢？", chat_history=ZH))
    assert nodes and nodes[0].node.metadata["standalone_query"] == "AnySearch 的价格"
    hs = HaystackRetriever(top_k=2)
    docs = hs.run("价格呢？", messages=[ChatMessage.from_user("AnySearch 支持哪些检索方式？")])["documents"]
    assert docs and docs[0].id == "zh-any-price"
