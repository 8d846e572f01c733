"""Query variants through one backend call: a backend offering ``search_many`` (ManyQueryBackend) gets every
variant of a turn at once and answers one list (each document with its best score), then our rerank with the
original query; any other backend keeps one ``search`` per variant."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from convsearch import Document, Pipeline
from convsearch.backends.base import InMemoryBackend, ManyQueryBackend
from convsearch.backends.compose import asearch_many_applied, search_many_applied
from convsearch.fuse import fuse_max
from convsearch.testing.backends import ScriptedBackend

DOCS = [Document("zh-price", "AnySearch 专业版每月收费 99 元，企业版按需报价", title="AnySearch 价格", lang="zh",
                 date="2026-11-01"),
        Document("zh-free", "AnySearch 免费版每月可查询 1000 次", title="AnySearch 免费版", lang="zh",
                 date="2020-01-01"),
        Document("en-price", "AnySearch pricing: the Pro plan costs $99 a month", title="AnySearch pricing",
                 lang="en", date="2026-11-20"),
        Document("en-cat", "Cats sleep most of the day", title="Cats", lang="en")]
ZH_TURN = [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}, {"role": "assistant", "content": "混合检索。"}]


class Many(ScriptedBackend):
    """ScriptedBackend that also answers all variants in one call, counting those calls."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.many: list[tuple[tuple[str, ...], str | None, int]] = []

    def search_many(self, queries: Sequence[str], *, top_k=10, filters=None, recency=None, dense_query=None):
        self.many.append((tuple(queries), dense_query, top_k))
        return fuse_max([InMemoryBackend.search(self, q, top_k=top_k, filters=filters, recency=recency)
                         for q in queries], limit=top_k)

    async def asearch_many(self, queries: Sequence[str], **kw):
        return self.search_many(queries, **kw)


def variants(q, *, max_variants, calls=None):
    return [f"{q} 专业版", "AnySearch pricing"][:max_variants]


def test_the_protocol_is_optional():
    assert isinstance(Many("m", DOCS), ManyQueryBackend)
    assert not isinstance(ScriptedBackend("s", DOCS), ManyQueryBackend)
    assert not isinstance(InMemoryBackend(DOCS), ManyQueryBackend)


def test_pipeline_sends_every_variant_in_one_call_to_a_many_query_backend():
    m = Many("m", DOCS)
    with Pipeline(m, variant_maker=variants) as p:
        r = p.search("价格呢？", ZH_TURN)
    # the rewrite, two variants, and the follow-up's history variant (pipeline.history_variant)
    assert len(r.trace.queries) == 4 and r.trace.queries[0] == r.standalone_query == "AnySearch 的价格"
    assert r.trace.queries[-1] == f"{ZH_TURN[0]['content']} 价格呢？"
    assert m.many == [(r.trace.queries, None, m.many[0][2])] and m.calls == []  # one call, no per-variant search
    assert r.trace.backends[0].queries == r.trace.queries and r.trace.backends[0].status == "ok"
    assert r.hits and r.hits[0].id == "zh-price"  # reranked against the original query: the zh price page first
    assert {h.id for h in r.hits} >= {"zh-price", "en-price"}


def test_pipeline_loops_over_search_for_any_other_backend():
    s = ScriptedBackend("s", DOCS)
    with Pipeline(s, variant_maker=variants) as p:
        r = p.search("价格呢？", ZH_TURN)
    assert [c.query for c in s.calls] == list(r.trace.queries) and len(s.calls) == 4


def test_async_and_remote_path_uses_one_call_too():
    m = Many("m", DOCS, remote=True)  # remote: the pipeline goes through the fan-out on an event loop
    with Pipeline(m, variant_maker=variants) as p:
        r = p.search("价格呢？", ZH_TURN)
        ra = asyncio.run(p.asearch("价格呢？", ZH_TURN))
    assert len(m.many) == 2 and m.calls == []
    assert [h.id for h in ra.hits] == [h.id for h in r.hits]


def test_a_lone_query_still_goes_through_search():
    m = Many("m", DOCS)
    with Pipeline(m, variant_maker=lambda q, *, max_variants, calls=None: []) as p:
        p.search("AnySearch 价格")
    assert m.many == [] and [c.query for c in m.calls] == ["AnySearch 价格"]


def test_search_many_applied_merges_best_score_and_applies_what_the_backend_lacks():
    qs = ["AnySearch 价格 专业版", "AnySearch 免费版", "pricing Pro plan"]
    m = Many("m", DOCS)
    plain = ScriptedBackend("p", DOCS, native_filters=False)
    one = search_many_applied(m, qs, top_k=4)
    loop = search_many_applied(plain, qs, top_k=4)
    assert len(m.many) == 1 and len(plain.calls) == 3
    assert [h.id for h in one.hits] == [h.id for h in loop.hits]
    assert len({h.id for h in one.hits}) == len(one.hits) and [h.rank for h in one.hits] == [1, 2, 3]
    for h in one.hits:  # each id's best score over the variants
        assert h.score == max(x.score for q in qs for x in InMemoryBackend(DOCS).search(q, top_k=4) if x.id == h.id)
    f = search_many_applied(plain, qs, top_k=4, filters={"lang": "zh"})  # the plain one filters after the search
    assert {h.id for h in f.hits} == {"zh-price", "zh-free"} and any("after the search" in n for n in f.notes)
    a = asyncio.run(asearch_many_applied(plain, qs, top_k=4, filters={"lang": "zh"}))
    assert [h.id for h in a.hits] == [h.id for h in f.hits]
