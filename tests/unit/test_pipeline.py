"""``search_with_context`` and ``compare_queries`` over the InMemoryBackend test double."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import date

import pytest

from convsearch import (ConfigError, InMemoryBackend, InputError, Message, Passthrough, SearchBackend, Settings,
                        compare_queries, search_with_context)
from convsearch.rewrite import Scripted
from convsearch.types import Document, SearchResponse

STAGES = ["window", "gate", "rewrite", "variants", "search", "fuse", "dedup", "rerank", "format"]

DOCS = [
    Document("p1", "AnySearch 的价格：免费版每月 1000 次查询，专业版每月 99 元。", title="AnySearch 价格",
             url="https://www.anysearch.example/pricing?utm_source=newsletter", date="2024-06-01"),
    Document("p1-mirror", "AnySearch 的价格：免费版每月 1000 次查询，专业版每月 99 元。", title="AnySearch 价格",
             url="https://anysearch.example/pricing/", date="2024-06-01"),
    Document("p2", "AnySearch 支持 BM25 关键词检索、向量检索和混合检索。", title="AnySearch 检索方式",
             url="https://anysearch.example/search"),
    Document("p3", "NovaDB 的价格：按节点收费。", title="NovaDB 价格", url="https://novadb.example/pricing"),
    Document("e1", "SpaceX first launched a rocket, Falcon 1, in 2006.", title="Falcon 1",
             url="https://history.example/falcon"),
    Document("e2", "SpaceX was founded by Elon Musk in 2002.", title="SpaceX founding", url="https://history.example/spacex"),
    Document("e3", "Blue Origin launched New Shepard in 2015.", title="New Shepard", url="https://history.example/bo"),
]
ZH_TURN = [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
           {"role": "assistant", "content": "关键词检索、向量检索和混合检索。"}]
EN_TURN = [{"role": "user", "content": "Who founded SpaceX?"}, {"role": "assistant", "content": "Elon Musk, in 2002."}]


@pytest.fixture
def backend() -> InMemoryBackend:
    return InMemoryBackend(DOCS)


def test_backend_double_meets_the_protocol(backend):
    assert isinstance(backend, SearchBackend)
    assert [h.id for h in asyncio.run(backend.asearch("NovaDB 价格", top_k=1))] == ["p3"]
    assert [len(backend.search(q, top_k=5)) for q in ["NovaDB", "SpaceX"]] == [1, 2]


def test_zh_turn_trace(backend):
    r = search_with_context("价格呢？", ZH_TURN, backend=backend, today=date(2025, 1, 1))
    assert isinstance(r, SearchResponse)
    assert r.query == "价格呢？"
    assert r.standalone_query == "AnySearch 的价格"
    t = r.trace
    assert t.decision.needed is True and t.decision.reason == "ellipsis: 'X呢'"
    assert t.rewrite is r.rewrite and t.rewrite.original == "价格呢？"
    assert t.variants == r.variants and 1 <= len(r.variants) <= 3
    assert t.queries[0] == "AnySearch 的价格" and set(r.variants) <= set(t.queries)
    assert list(t.timings_ms) == STAGES
    assert all(v >= 0 for v in t.timings_ms.values())
    assert t.window_size == 2 and t.fusion == "rrf"
    # the two pricing pages share a canonical URL: one is removed
    assert t.hits_before_dedup > t.hits_after_dedup
    assert t.hits_after_dedup >= len(r.hits)
    ids = [h.id for h in r.hits]
    assert ids[0] == "p1" and "p1-mirror" not in ids
    assert [c.n for c in r.citations] == list(range(1, len(r.citations) + 1))
    assert "[1] AnySearch 价格" in r.context


def test_en_turn_trace(backend):
    r = search_with_context("When did it first launch a rocket?", EN_TURN, backend=backend)
    assert "SpaceX" in r.standalone_query
    assert r.trace.decision.reason == "pronoun or demonstrative"
    assert r.hits[0].id == "e1"
    assert list(r.trace.timings_ms) == STAGES


def test_standalone_query_searched_as_typed(backend):
    r = search_with_context("Who founded SpaceX?", EN_TURN, backend=backend)
    assert r.standalone_query == "Who founded SpaceX?"
    assert r.rewrite.method == "gate" and not r.rewrite.changed
    assert backend.queries[0] == "Who founded SpaceX?"


def test_top_k_caps_results(backend):
    r = search_with_context("AnySearch 价格 NovaDB SpaceX", [], backend=backend, top_k=2)
    assert len(r.hits) == len(r.citations) == 2


def test_rewrite_mode_searches_rewrite_and_variants_only(backend):
    search_with_context("价格呢？", ZH_TURN, backend=backend)
    assert "价格呢？" not in backend.queries
    assert backend.queries[0] == "AnySearch 的价格"


def test_dual_mode_runs_original_and_rewrite(backend):
    r = search_with_context("价格呢？", ZH_TURN, backend=backend, settings=Settings(mode="dual"))
    assert backend.queries[:2] == ["AnySearch 的价格", "价格呢？"]
    assert "价格呢？" in r.trace.queries
    assert len(backend.queries) == len(set(backend.queries)) == len(r.trace.queries)


def test_dual_mode_en(backend):
    search_with_context("When did it first launch a rocket?", EN_TURN, backend=backend, settings=Settings(mode="dual"))
    assert "When did it first launch a rocket?" in backend.queries
    assert "When did SpaceX first launch a rocket?" in backend.queries


def test_dual_mode_with_unchanged_query_searches_once(backend):
    search_with_context("Who founded SpaceX?", [], backend=backend, settings=Settings(mode="dual", max_variants=0))
    assert backend.queries == ["Who founded SpaceX?"]


def test_max_fusion_setting(backend):
    r = search_with_context("价格呢？", ZH_TURN, backend=backend, settings=Settings(fusion="max"))
    assert r.trace.fusion == "max" and r.hits


def test_custom_rewriter_and_fallback_note(backend):
    r = search_with_context("价格呢？", ZH_TURN, backend=backend, rewriter=Scripted({}))
    assert r.rewrite.fell_back and r.standalone_query == "价格呢？"
    assert r.trace.notes == ("rewrite fell back to the original",)
    r2 = search_with_context("价格呢？", ZH_TURN, backend=backend, rewriter=Passthrough())
    assert r2.standalone_query == "价格呢？" and r2.trace.notes == ()


def _events(caplog) -> list[dict]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "convsearch.events"]


def test_structured_events(backend, caplog):
    caplog.set_level(logging.INFO, logger="convsearch.events")
    r = search_with_context("价格呢？", ZH_TURN, backend=backend)
    evs = _events(caplog)
    assert [e["event"] for e in evs] == ["rewrite", "dedup"]
    rw, dd = evs
    assert rw["original"] == "价格呢？" and rw["rewritten"] == "AnySearch 的价格"
    assert rw["method"] == "rules" and rw["fell_back"] is False and rw["gate"] == "ellipsis: 'X呢'"
    assert dd["before"] == r.trace.hits_before_dedup and dd["after"] == r.trace.hits_after_dedup
    assert dd["before"] > dd["after"]
    assert {"by_url", "by_hash", "by_near", "ts"} <= set(dd)


def test_structured_events_en(backend, caplog):
    caplog.set_level(logging.INFO, logger="convsearch.events")
    search_with_context("When did it first launch a rocket?", EN_TURN, backend=backend)
    rw = _events(caplog)[0]
    assert rw["event"] == "rewrite" and "SpaceX" in rw["rewritten"]


def test_events_silent_below_info(backend, caplog):
    caplog.set_level(logging.WARNING, logger="convsearch.events")
    search_with_context("价格呢？", ZH_TURN, backend=backend)
    assert _events(caplog) == []


@pytest.mark.parametrize("query,needle", [
    ("", "empty"),
    ("   \n\t  ", "empty"),
    ("价" * 100_000, "100,000"),
    ("x" * 100 * 1024, "limit"),
])
def test_bad_queries_are_input_errors(backend, query, needle):
    with pytest.raises(InputError) as ei:
        search_with_context(query, ZH_TURN, backend=backend)
    msg = str(ei.value)
    assert needle in msg
    assert "\n" not in msg and len(msg) < 200
    assert backend.queries == []  # nothing was searched


def test_max_query_chars_configurable(backend):
    with pytest.raises(InputError, match="limit is 10"):
        search_with_context("What is the price of AnySearch?", [], backend=backend, settings=Settings(max_query_chars=10))


def test_non_string_query_is_input_error(backend):
    with pytest.raises(InputError):
        search_with_context(None, [], backend=backend)  # type: ignore[arg-type]


def test_message_objects_and_dicts_both_accepted(backend):
    a = search_with_context("价格呢？", [Message("user", "AnySearch 支持哪些检索方式？")], backend=backend)
    b = search_with_context("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}], backend=backend)
    assert a.standalone_query == b.standalone_query == "AnySearch 的价格"


def test_topic_without_history(backend):
    r = search_with_context("价格是多少", [], backend=backend, topic="AnySearch")
    assert "AnySearch" in r.standalone_query
    assert r.hits[0].id == "p1"


def test_response_to_dict_is_json_serialisable(backend):
    d = search_with_context("价格呢？", ZH_TURN, backend=backend).to_dict()
    s = json.dumps(d, ensure_ascii=False)
    assert json.loads(s)["standalone_query"] == "AnySearch 的价格"
    assert set(d["trace"]["timings_ms"]) == set(STAGES)


def test_compare_queries_keyword_gain_zh(backend):
    c = compare_queries("价格呢？", "AnySearch 的价格", backend=backend)
    assert c.keyword_hit_gain > 0
    assert c.rewritten_keyword_hits > c.original_keyword_hits
    assert "p2" in c.only_rewritten  # found only thanks to the added entity
    assert set(c.only_original).isdisjoint(c.rewritten_ids)


def test_compare_queries_keyword_gain_en(backend):
    c = compare_queries("When did it first launch a rocket?", "When did SpaceX first launch a rocket?", backend=backend)
    assert c.keyword_hit_gain > 0
    assert c.rewritten_ids[0] == "e1"


def test_compare_queries_no_gain_for_identical_queries(backend):
    c = compare_queries("NovaDB 价格", "NovaDB 价格", backend=backend)
    assert c.keyword_hit_gain == 0 and c.only_original == c.only_rewritten == ()


@pytest.mark.parametrize("kw", [{"fusion": "borda"}, {"mode": "both"}, {"dense": "maybe"}, {"window": 0}])
def test_invalid_settings_are_config_errors(kw):
    with pytest.raises(ConfigError):
        Settings.from_env({}, **kw)
