"""One body for Pipeline.search and asearch, and the TurnRequest they take (issue 36, item 7)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from datetime import date

import pytest

from convsearch import InMemoryBackend, InputError, Pipeline, Settings
from convsearch.backends.base import Filters, Recency
from convsearch.config import SearchMode
from convsearch.history import Conversation, InMemoryStore, Scope
from convsearch.infra import turn as turn_ctx
from convsearch.pipeline import TurnRequest
from convsearch.testing.backends import ScriptedBackend
from convsearch.types import Document, SearchResponse

TODAY = date(2025, 6, 1)
DOCS = [Document("zh-price", "AnySearch 的价格：专业版每月 99 元", title="AnySearch 价格", date="2025-05-20"),
        Document("zh-modes", "AnySearch 支持关键词检索和向量检索", title="AnySearch 检索方式", date="2024-01-02"),
        Document("en-pip", "pip ships with the Python 3.12 installer; run python -m ensurepip", title="pip 3.12"),
        Document("en-apt", "How to install pip on Ubuntu: apt install python3-pip", title="pip on Ubuntu")]
ZH = ("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
                  {"role": "assistant", "content": "关键词和向量检索。"}])
EN = ("And for Python 3.12?", [{"role": "user", "content": "How do I install pip on Ubuntu?"},
                               {"role": "assistant", "content": "apt install python3-pip"}])


def untimed(r: SearchResponse) -> SearchResponse:
    """The response with every wall-clock number zeroed (the only thing allowed to differ between the paths)."""
    runs = tuple(dataclasses.replace(b, ms=0.0) for b in r.trace.backends)
    trace = dataclasses.replace(r.trace, timings_ms={k: 0.0 for k in r.trace.timings_ms}, backends=runs)
    return dataclasses.replace(r, trace=trace)


class Reversing:
    """A 'remote' reranker double: reverses the heuristic order (sync and async alike), counting its calls."""

    name = "reversing"
    remote = True
    candidates = 10

    def __init__(self) -> None:
        self.calls = {"sync": 0, "async": 0}

    def rerank(self, question, hits, *, budget_s=None):
        self.calls["sync"] += 1
        return list(reversed(hits))

    async def arerank(self, question, hits, *, budget_s=None):
        self.calls["async"] += 1
        return list(reversed(hits))

    def close(self) -> None:
        pass


def both(p: Pipeline, req: TurnRequest) -> tuple[SearchResponse, SearchResponse]:
    return p.search(req), asyncio.run(p.asearch(req))


@pytest.mark.parametrize("q, history", [ZH, EN], ids=["zh", "en"])
def test_sync_and_async_give_the_same_response_on_one_memory_backend(q, history):
    with Pipeline(InMemoryBackend(DOCS)) as p:
        s, a = both(p, TurnRequest(q, history, top_k=3, today=TODAY))
    assert s.hits and s.standalone_query != q  # a real follow-up, rewritten and answered
    assert untimed(s) == untimed(a)
    assert s.trace.backends[0].status == "ok" and set(s.trace.timings_ms) == set(a.trace.timings_ms)


@pytest.mark.parametrize("q, history", [ZH, EN], ids=["zh", "en"])
def test_sync_and_async_agree_with_a_fan_out_options_and_a_remote_reranker(q, history):
    backends = [ScriptedBackend("one", DOCS[:2] + DOCS[3:]), ScriptedBackend("two", DOCS[1:], native_filters=False)]
    reranker = Reversing()
    with Pipeline(backends, settings=Settings(mode="rewrite"), reranker=reranker) as p:
        req = TurnRequest(q, history, top_k=2, recency="year", today=TODAY, mode="dual", max_variants=1,
                          backends=["two", "one"])
        s, a = both(p, req)
    assert reranker.calls == {"sync": 1, "async": 1}
    assert [b.backend for b in s.trace.backends] == ["two", "one"]
    assert q in s.trace.queries  # mode="dual" for this turn: the original query is searched too
    assert any(n.startswith("rerank (reversing)") for n in s.trace.notes)
    assert untimed(s) == untimed(a)


def test_sync_and_async_agree_in_a_stored_session():
    def run(driver: str) -> SearchResponse:
        store = InMemoryStore()
        c = Conversation(store, Scope("acme", "bot", "s1"), refresh="inline")
        with Pipeline(InMemoryBackend(DOCS)) as p:
            first = TurnRequest("AnySearch 支持哪些检索方式？", session=c, today=TODAY)
            second = TurnRequest("价格呢？", session=c, today=TODAY)
            if driver == "sync":
                p.search(first)
                out = p.search(second)
            else:
                asyncio.run(p.asearch(first))
                out = asyncio.run(p.asearch(second))
        assert [m.content for m in store.messages(Scope("acme", "bot", "s1"))] == ["AnySearch 支持哪些检索方式？",
                                                                                     "价格呢？"]
        return out

    s, a = run("sync"), run("async")
    assert s.standalone_query == "AnySearch 的价格" and s.memory is not None
    assert untimed(s) == untimed(a)


def test_the_keyword_form_builds_the_same_request():
    with Pipeline(InMemoryBackend(DOCS)) as p:
        kw = p.search(ZH[0], ZH[1], top_k=2, filters={"source": None}, today=TODAY)
        typed = p.search(TurnRequest(ZH[0], ZH[1], top_k=2, today=TODAY))
        assert untimed(kw) == untimed(typed)
        a = p.plan(ZH[0], ZH[1], mode="dual", max_variants=0)
        b = p.plan(TurnRequest(ZH[0], ZH[1], mode=SearchMode.DUAL, max_variants=0))
        assert dataclasses.replace(a, timings_ms={}) == dataclasses.replace(b, timings_ms={})
        assert a.queries[:2] == ("AnySearch 的价格", "价格呢？")  # dual: the original query second


def test_sync_search_from_code_running_an_event_loop_and_from_threads():
    """The server calls sync search on its loop (inline turns) and from worker threads; a fan-out turn then runs
    its own loop in a worker thread."""
    backends = [ScriptedBackend("one", DOCS), ScriptedBackend("two", DOCS, delay_s=0.01)]
    with Pipeline(backends) as p:
        req = TurnRequest(EN[0], EN[1], today=TODAY)
        plain = p.search(req)

        async def on_loop() -> SearchResponse:
            return p.search(req)

        assert untimed(asyncio.run(on_loop())) == untimed(plain)
        out: list[SearchResponse] = []
        threads = [threading.Thread(target=lambda: out.append(p.search(req))) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(out) == 3 and all(untimed(r) == untimed(plain) for r in out)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_failing_backend_raises_through_either_driver_and_the_turn_is_closed(driver):
    failing = ScriptedBackend("down", DOCS, error=RuntimeError("connection refused"))
    with Pipeline(failing) as p:
        with pytest.raises(RuntimeError, match="connection refused"):
            if driver == "sync":
                p.search(ZH[0], ZH[1])
            else:
                asyncio.run(p.asearch(ZH[0], ZH[1]))
    turn_ctx.note("after the turn")  # outside any turn again: dropped, and no deadline is left behind
    assert turn_ctx.deadline().remaining() == float("inf")


@pytest.mark.parametrize("kw, says", [
    ({"top_k": 0}, "top_k must be a positive integer, not 0"),
    ({"top_k": "3"}, "top_k must be a positive integer, not '3'"),
    ({"top_k": True}, "top_k must be a positive integer, not True"),
    ({"max_variants": -1}, "max_variants must be a non-negative integer, not -1"),
    ({"mode": "both"}, "mode must be one of rewrite, dual, not 'both'"),
    ({"recency": "fortnight"}, "unknown recency 'fortnight'"),
    ({"filters": {"colour": "red"}}, "unknown filter field(s) 'colour'"),
    ({"today": "2025-06-01"}, "today must be a date, not str"),
    ({"topic": 3}, "topic must be a string, not int"),
    ({"backends": ["local", 2]}, "backends must be backend names (strings)"),
    ({"deadline": 2.0}, "deadline must be a Deadline, not float"),
])
def test_a_bad_value_is_one_clear_input_error_line(kw, says):
    with pytest.raises(InputError) as e:
        TurnRequest("价格呢？", **kw)
    assert says in str(e.value) and "\n" not in str(e.value)
    with Pipeline(InMemoryBackend(DOCS)) as p, pytest.raises(InputError, match="must be|unknown"):
        p.search("价格呢？", **kw)


def test_bad_messages_query_and_options_are_input_errors():
    with pytest.raises(InputError, match="message 0: unknown role 'robot'"):
        TurnRequest("价格呢？", [{"role": "robot", "content": "hi"}])
    with pytest.raises(InputError, match="query must be a string"):
        TurnRequest(None)  # type: ignore[arg-type]
    with Pipeline(InMemoryBackend(DOCS)) as p:
        with pytest.raises(InputError, match=r"unknown search option\(s\) 'topk'; options are: messages, topic"):
            p.search("价格呢？", topk=3)
        with pytest.raises(InputError, match="a TurnRequest alone"):
            p.search(TurnRequest("价格呢？"), top_k=3)
        with pytest.raises(InputError, match="query is empty"):
            asyncio.run(p.asearch(TurnRequest("  ")))


def test_the_request_is_frozen_and_normalised():
    r = TurnRequest("q", iter([{"role": "user", "content": "hi"}]), filters={"lang": "zh"}, recency="WEEK",
                    backends="local", mode=" Dual ")
    assert r.messages[0].content == "hi" and r.filters == Filters(lang="zh") and r.recency is Recency.WEEK
    assert r.backends == ("local",) and r.mode is SearchMode.DUAL
    assert TurnRequest("q", filters={}).filters is None and TurnRequest("q", backends=[]).backends is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.top_k = 3  # type: ignore[misc]
    assert dataclasses.replace(r, top_k=4).top_k == 4 and dataclasses.replace(r, top_k=4).messages == r.messages
