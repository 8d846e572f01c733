"""Fan-out over scripted backends: concurrency, RRF over backends × queries, failures and the deadline leave
the others' results (partial, which backend, why), paid backends get the standalone query only."""

from __future__ import annotations

import asyncio
import logging

import pytest

from convsearch import BackendError, DeadlineExceeded, Document, Filters, Pipeline, Recency, Settings
from convsearch.backends.base import InMemoryBackend
from convsearch.backends.fanout import FanOut, afan_out, fan_out, route_queries
from convsearch.errors import IndexMissingError
from convsearch.infra.deadline import Deadline
from convsearch.testing.backends import ScriptedBackend

ZH_DOCS = [Document("zh-price", "AnySearch 的价格：专业版每月 99 元", title="AnySearch 价格", date="2026-11-30",
                    lang="zh", metadata={"source": "kb"}),
           Document("zh-modes", "AnySearch 支持关键词检索和混合检索", title="AnySearch 检索方式", lang="zh")]
EN_DOCS = [Document("en-price", "AnySearch pricing: the Pro plan costs $99 a month", title="AnySearch pricing",
                    date="2020-01-01", lang="en"),
           Document("en-spacex", "SpaceX was founded by Elon Musk in 2002", title="SpaceX", lang="en")]
ZH_TURN = [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
           {"role": "assistant", "content": "关键词和混合检索。"}]
EN_TURN = [{"role": "user", "content": "Who founded SpaceX?"}, {"role": "assistant", "content": "Elon Musk."}]


def three(delays=(0.05, 0.1, 0.15), **kw):
    return [ScriptedBackend(f"b{i}", ZH_DOCS + EN_DOCS, delay_s=d, **kw) for i, d in enumerate(delays, 1)]


def test_backends_are_searched_concurrently_not_one_after_another():
    bs = three()
    r = fan_out(route_queries(bs, ["AnySearch 价格"]), top_k=3)
    assert not r.partial and [x.status for x in r.runs] == ["ok"] * 3
    starts = [b.calls[0].started for b in bs]
    ends = [b.calls[0].ended for b in bs]
    assert max(starts) < min(ends), "every backend started before the first one finished"
    assert [len(x) for x in r.lists] == [3, 3, 3]


def test_one_list_per_backend_and_query_fused_by_rank_in_the_pipeline():
    a, b = ScriptedBackend("a", ZH_DOCS), ScriptedBackend("b", EN_DOCS)
    with Pipeline([a, b]) as p:
        r = p.search("价格呢？", ZH_TURN)
    assert r.standalone_query == "AnySearch 的价格"
    assert [x.backend for x in r.trace.backends] == ["a", "b"]
    assert all(x.queries == r.trace.queries for x in r.trace.backends)
    assert [c.query for c in a.calls] == list(r.trace.queries)
    assert {h.id for h in r.hits} >= {"zh-price", "en-price"}  # both engines' results, by rank, not by score


def test_a_failing_backend_leaves_the_others_results_and_says_which_and_why(caplog):
    ok = ScriptedBackend("local", ZH_DOCS + EN_DOCS)
    bad = ScriptedBackend("web", error=BackendError("HTTP 503 from the search API"))
    caplog.set_level(logging.INFO, logger="convsearch.events")
    with Pipeline([ok, bad]) as p:
        zh = p.search("价格呢？", ZH_TURN)
        en = p.search("When was it founded?", EN_TURN)
    for r in (zh, en):
        assert r.partial and r.trace.partial and r.hits
        web = r.trace.backends[1]
        assert (web.backend, web.status) == ("web", "failed") and "HTTP 503" in web.why
        assert r.errors == (f"web: failed: {web.why}",)
        assert any(n.startswith("backend web failed") for n in r.trace.notes)
    assert zh.hits[0].id == "zh-price" and en.hits[0].id == "en-spacex"
    assert '"event": "partial"' in caplog.text


def test_a_late_backend_is_left_out_at_the_deadline():
    fast = ScriptedBackend("fast", ZH_DOCS + EN_DOCS, delay_s=0.01)
    slow = ScriptedBackend("slow", EN_DOCS, delay_s=5.0)
    fast.search("AnySearch 价格 pricing")  # warm: the first search of a process loads the tokenizer dictionaries
    with Pipeline([fast, slow], settings=Settings(deadline_s=0.5)) as p:
        p.plan("AnySearch pricing")
        r = p.search("AnySearch pricing")
    late = r.trace.backends[1]
    assert late.status == "late" and "0.5s deadline" in late.why and r.partial
    assert r.trace.backends[0].status == "ok" and r.hits[0].id == "en-price"
    assert slow.calls == []  # cancelled mid-sleep: it never answered


def test_every_backend_failing_is_a_backend_error_and_a_lone_backend_keeps_its_own_error():
    bs = [ScriptedBackend("a", error=RuntimeError("boom")), ScriptedBackend("b", error=BackendError("down"))]
    with pytest.raises(BackendError, match=r"no backend answered: a: failed: RuntimeError: boom; b: failed"):
        fan_out(route_queries(bs, ["x"]))
    with pytest.raises(IndexMissingError):
        fan_out(route_queries([ScriptedBackend("a", error=IndexMissingError("no index"))], ["x"]))
    with pytest.raises(DeadlineExceeded, match="backend a: no answer within the 0.05s deadline"):
        fan_out(route_queries([ScriptedBackend("a", delay_s=1.0)], ["x"]), deadline=Deadline(0.05))


def test_paid_backends_get_the_standalone_query_only_unless_web_variants_on():
    local, web = ScriptedBackend("local", ZH_DOCS), ScriptedBackend("web", ZH_DOCS, paid=True)
    with Pipeline([local, web]) as p:
        r = p.search("价格呢？", ZH_TURN)
    assert len(r.trace.queries) > 1
    runs = {x.backend: x for x in r.trace.backends}
    assert runs["local"].queries == r.trace.queries
    assert runs["web"].queries == (r.standalone_query,) and [c.query for c in web.calls] == [r.standalone_query]
    web.calls.clear()
    with Pipeline([local, web], settings=Settings(web_variants="on")) as p:
        r = p.search("When was it founded?", EN_TURN)
    assert [c.query for c in web.calls] == list(r.trace.queries)


def test_filters_and_recency_are_applied_per_backend_natively_or_after():
    native = ScriptedBackend("native", ZH_DOCS + EN_DOCS, today=__import__("datetime").date(2026, 12, 1))
    plain = ScriptedBackend("plain", ZH_DOCS + EN_DOCS, native_filters=False)
    from datetime import date

    with Pipeline([native, plain]) as p:
        r = p.search("AnySearch 价格 pricing", filters={"lang": "zh"}, recency="week", today=date(2026, 12, 1))
    assert [h.id for h in r.hits] == ["zh-price"]
    runs = {x.backend: x for x in r.trace.backends}
    assert runs["native"].notes == ("filter lang: natively", "recency week: natively")
    assert runs["plain"].notes == ("filter lang: after the search", "recency week: after the search")
    assert plain.calls[0].filters is None and native.calls[0].filters == Filters(lang="zh")
    assert native.calls[0].recency is Recency.WEEK


def test_a_subset_of_backends_by_name():
    a, b = ScriptedBackend("a", EN_DOCS), ScriptedBackend("b", EN_DOCS)
    with Pipeline([a, b]) as p:
        r = p.search("SpaceX founded", backends=["b"])
        assert [x.backend for x in r.trace.backends] == ["b"] and a.calls == []
        with pytest.raises(Exception, match=r"unknown backend\(s\) 'c'.*a, b"):
            p.search("SpaceX", backends=["c"])


def test_dense_query_only_to_backends_with_a_dense_side():
    dense, keyword = ScriptedBackend("dense", EN_DOCS, dense=True), ScriptedBackend("kw", EN_DOCS)
    routes = route_queries([dense, keyword], ["SpaceX founder", "SpaceX founded by"], dense_query="Elon Musk 2002")
    fan_out(routes, top_k=2)
    assert [c.dense_query for c in dense.calls] == ["Elon Musk 2002", None]  # with the standalone query only
    assert [c.dense_query for c in keyword.calls] == [None, None]


def test_the_sync_search_works_inside_a_running_event_loop_and_asearch_on_it():
    bs = three(delays=(0.01, 0.02, 0.03))

    async def main():
        with Pipeline(bs) as p:
            inside = p.search("价格呢？", ZH_TURN)  # a sync caller inside async code: no "loop is running"
            awaited = await p.asearch("价格呢？", ZH_TURN)
        return inside, awaited

    inside, awaited = asyncio.run(main())
    assert [h.id for h in inside.hits] == [h.id for h in awaited.hits] and inside.hits[0].id == "zh-price"
    assert not awaited.partial and len(awaited.trace.backends) == 3


def test_fanout_is_itself_a_backend_and_closes_its_members():
    a, b = ScriptedBackend("a", ZH_DOCS), ScriptedBackend("b", EN_DOCS)
    f = FanOut([a, b])
    # rank 1 of each backend first: fused by rank
    assert [h.id for h in f.search("AnySearch 价格 pricing", top_k=4)][:2] == ["zh-price", "en-price"]
    assert [h.id for h in asyncio.run(f.asearch("SpaceX"))] == ["en-spacex"]
    with Pipeline(f, owns_backends=True) as p:  # the Pipeline routes per member
        assert [x.backend for x in p.search("AnySearch 价格").trace.backends] == ["a", "b"]
    assert (a.closed, b.closed) == (1, 1)


def test_afan_out_under_a_deadline_on_the_callers_loop():
    bs = three(delays=(0.01, 0.02, 2.0))
    r = asyncio.run(afan_out(route_queries(bs, ["SpaceX"]), deadline=Deadline(0.3)))
    assert [x.status for x in r.runs] == ["ok", "ok", "late"] and r.errors[0].startswith("b3: late: ")


@pytest.mark.parametrize("web", [True, False])
def test_only_web_backends_get_the_default_window_for_time_sensitive_questions(web):
    """A knowledge base on a remote server (Milvus) is remote but not web: '价格' must not drop its undated docs."""
    docs = [Document("kb-price", "AnySearch 价格 专业版 每月 99 元", title="价格")]  # undated
    b = ScriptedBackend("kb", docs, remote=True, web=web)
    with Pipeline.from_settings(Settings(rewriter="rules"), backend=b) as p:
        r = p.search("AnySearch 现在的价格是多少？")
    windows = {c.recency for c in b.calls}
    if web:
        assert windows and None not in windows and not r.hits  # the default window drops the undated page
    else:
        assert windows == {None} and [h.id for h in r.hits] == ["kb-price"]


def test_a_hung_backend_never_starves_later_sync_turns():
    """Each sync turn has its own loop and thread pool: threads left behind by a backend that hangs past the
    deadline must not use up the pool the next turns' backends run in (a shared pool of 6 ran dry by turn 6)."""
    import threading

    release = threading.Event()

    class Threaded(InMemoryBackend):
        async def asearch(self, query, **kw):  # as LocalIndex and Milvus do: the sync call in a worker thread
            return await asyncio.to_thread(self.search, query, **kw)

    class Hung(Threaded):
        name = "hung"

        def search(self, query, **kw):
            release.wait(10)
            return []

    fast = Threaded([Document("1", "SpaceX founded 2002")])
    fast.name = "fast"
    try:
        for _ in range(10):
            r = fan_out(route_queries([Hung(), fast], ["SpaceX"]), deadline=Deadline(0.2))
            assert {x.backend: x.status for x in r.runs} == {"hung": "late", "fast": "ok"}
    finally:
        release.set()
