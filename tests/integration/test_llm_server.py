"""The LLM path against a real OpenAI-compatible HTTP server on loopback (the official SDK end to end):
what reaches the server, timeouts and errors that fall back within the deadline, guardrails, the cache,
structured output, 50 concurrent turns, and an API key that never leaks.

Elapsed-time bounds here are generous on purpose (timeout + 1 s): the precise cost of a timeout is measured
by bench/llm_path.py, not asserted by a test that a busy CI machine could make flaky.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import pytest
from pydantic import BaseModel, ConfigDict

from convsearch.config import Settings
from convsearch.llm import (
    LLMBadOutput,
    LLMRateLimited,
    LLMRequestRejected,
    LLMTimeout,
    LLMUnavailable,
    OpenAILLM,
    llm_config,
)
from convsearch.rewrite import get_rewriter
from convsearch.rewrite.enhance import EnhanceRequest, HyDE
from convsearch.rewrite.llm import HybridVariants, LLMRewriter, LLMSummarizer, LLMVariants
from convsearch.testing.openai_server import FakeOpenAIServer, Reply, answer_by_query, echo_last_user
from convsearch.types import Message

pytestmark = pytest.mark.integration

KEY = "sk-test-SECRET-5f3c9a1e77"
SLACK_S = 1.0  # generous: the precise number is in the benchmark
ZH = (Message("user", "AnySearch 支持哪些检索方式？"), Message("assistant", "支持 BM25、向量和混合检索。"))
EN = (Message("user", "Who founded SpaceX?"), Message("assistant", "Elon Musk founded SpaceX in 2002."))
ANSWERS = {"价格呢？": "AnySearch 的价格",
           "When did it first launch a rocket?": "When did SpaceX first launch a rocket?"}



@pytest.fixture
def srv(openai_server: FakeOpenAIServer):
    server = openai_server
    server.reset()
    server.latency_s = 0.0
    server.api_key = None
    server.responder = answer_by_query(ANSWERS)
    yield server
    server.reset()
    server.responder = echo_last_user


@pytest.fixture
def opened():
    """Close every client a test opens (unclosed sockets would be a ResourceWarning, an error here)."""
    things: list = []
    yield things.append
    for t in things:
        t.close()


def settings(srv: FakeOpenAIServer, **env: str) -> Settings:
    # the rules' auto (gate → LLM → guard → rules): this file tests that chain; the learned auto, the default, which
    # asks only where its doubt is below the threshold, is tested in test_auto_unsure.py
    base = {"CONVSEARCH_LLM_BASE_URL": srv.base_url, "CONVSEARCH_LLM_MODEL": "fake-model",
            "CONVSEARCH_LLM_API_KEY": KEY, "CONVSEARCH_LLM_TIMEOUT_S": "1.0", "CONVSEARCH_LLM_UNSURE_BELOW": "-1"}
    return Settings.from_env({**base, **{f"CONVSEARCH_{k.upper()}": v for k, v in env.items()}})


def rewriter(srv, opened, name: str = "auto", **env: str):
    rw = get_rewriter(name, settings(srv, **env))
    opened(rw)
    return rw


# --- what reaches the server --------------------------------------------------------------------------
def test_the_right_messages_reach_the_server(srv, opened):
    r = rewriter(srv, opened).rewrite(ZH, "价格呢？", topic="AnySearch 产品文档")
    assert (r.rewritten, r.method, r.fell_back) == ("AnySearch 的价格", "llm", False)
    assert len(srv.requests) == 1
    req = srv.requests[0]
    body = req["json"]
    assert req["path"] == "/v1/chat/completions" and body["model"] == "fake-model"
    assert body["temperature"] == 0 and body["max_tokens"] > 0 and "response_format" not in body
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert [m["content"] for m in body["messages"][1:]] == [ZH[0].content, ZH[1].content, "价格呢？"]
    system = body["messages"][0]["content"]
    assert "改写成一个能独立理解的搜索查询" in system and "不超过 30 个字" in system and "AnySearch 产品文档" in system
    assert req["headers"]["authorization"] == f"Bearer {KEY}"


def test_english_turns_get_the_english_prompt_and_the_last_n_messages(srv, opened):
    hist = tuple(Message("user" if i % 2 == 0 else "assistant", f"earlier turn {i}") for i in range(8)) + EN
    r = rewriter(srv, opened, llm_window="4").rewrite(hist, "When did it first launch a rocket?")
    assert r.rewritten == "When did SpaceX first launch a rocket?" and r.method == "llm"
    msgs = srv.messages(0)
    assert "standalone search query" in msgs[0]["content"] and "At most 20 words" in msgs[0]["content"]
    assert [m["content"] for m in msgs[1:]] == ["earlier turn 6", "earlier turn 7", EN[0].content, EN[1].content,
                                                "When did it first launch a rocket?"]


def test_a_turn_the_gate_resolves_sends_nothing(srv, opened):
    rw = rewriter(srv, opened)
    assert rw.rewrite(EN, "What is the boiling point of water?").method == "gate"
    assert rw.rewrite((), "价格呢？").method == "gate"
    assert srv.requests == []


# --- failures fall back within the deadline -------------------------------------------------------------
def _timed(fn, *a, **kw):
    t0 = time.perf_counter()
    out = fn(*a, **kw)
    return out, time.perf_counter() - t0


def test_a_reply_past_the_timeout_falls_back_to_rules_within_the_deadline(srv, opened):
    srv.push(Reply.of("AnySearch 的价格", delay_s=5.0))
    rw = rewriter(srv, opened, llm_timeout_s="0.3")
    r, elapsed = _timed(rw.rewrite, ZH, "价格呢？")
    assert (r.rewritten, r.method, r.fell_back) == ("AnySearch 的价格", "rules", True)
    assert "llm fell back: timed out (budget 0.30 s)" in r.reason
    assert elapsed <= 0.3 + SLACK_S
    assert len(srv.requests) == 1  # the budget was spent: no retry


def test_llm_only_rewriter_falls_back_to_the_original(srv, opened):
    srv.push(Reply.of("x", delay_s=5.0))
    r, elapsed = _timed(rewriter(srv, opened, "llm", llm_timeout_s="0.2").rewrite, ZH, "价格呢？")
    assert (r.rewritten, r.method, r.fell_back) == ("价格呢？", "llm", True) and "timed out" in r.reason
    assert elapsed <= 0.2 + SLACK_S


def test_429_is_retried_after_retry_after(srv, opened):
    srv.push(Reply.error(429, retry_after=0.05))
    r = rewriter(srv, opened).rewrite(ZH, "价格呢？")
    assert r.method == "llm" and not r.fell_back and len(srv.requests) == 2


def test_a_retry_after_beyond_the_budget_gives_up_at_once(srv, opened):
    srv.push(Reply.error(429, retry_after=30))
    r, elapsed = _timed(rewriter(srv, opened, llm_timeout_s="2").rewrite, ZH, "价格呢？")
    assert r.method == "rules" and r.fell_back and "rate limited (HTTP 429)" in r.reason
    assert "would not fit the budget" in r.reason and elapsed < 1.0 and len(srv.requests) == 1


def test_retries_are_bounded(srv, opened):
    srv.push(Reply.error(500), Reply.error(503), Reply.error(500))
    r = rewriter(srv, opened, llm_max_retries="1").rewrite(ZH, "价格呢？")
    assert r.method == "rules" and "server error (HTTP 503)" in r.reason and len(srv.requests) == 2


def test_a_4xx_is_not_retried(srv, opened):
    srv.push(Reply.error(400, message="unknown parameter"))
    r = rewriter(srv, opened).rewrite(ZH, "价格呢？")
    assert r.fell_back and "request rejected (HTTP 400)" in r.reason and len(srv.requests) == 1


@pytest.mark.parametrize("reply, why", [
    (Reply.malformed(), "malformed reply"),
    (Reply.empty(), "empty content"),
    (Reply.tool_call("search", {"q": "AnySearch"}), "tool call instead of text"),
])
def test_bad_replies_fall_back(srv, opened, reply, why):
    srv.push(reply)
    r = rewriter(srv, opened).rewrite(ZH, "价格呢？")
    assert (r.rewritten, r.method, r.fell_back) == ("AnySearch 的价格", "rules", True) and why in r.reason


def test_client_errors_are_ours(srv, opened):
    llm = OpenAILLM(llm_config(settings(srv)))
    opened(llm)
    msgs = [{"role": "user", "content": "hi"}]
    for reply, exc in ((Reply.of("x", delay_s=3), LLMTimeout), (Reply.error(429, retry_after=60), LLMRateLimited),
                       (Reply.error(502), LLMUnavailable), (Reply.error(404), LLMRequestRejected),
                       (Reply.malformed(), LLMBadOutput)):
        srv.push(reply, reply)
        with pytest.raises(exc):
            llm.complete(msgs, budget_s=0.3)
        srv.reset()
    assert llm.stats.failures and llm.stats.requests >= 5


def test_a_dead_endpoint_falls_back(opened):
    s = Settings.from_env({"CONVSEARCH_LLM_BASE_URL": "http://127.0.0.1:9/v1", "CONVSEARCH_LLM_MODEL": "m",
                           "CONVSEARCH_LLM_UNSURE_BELOW": "-1"})
    rw = get_rewriter("auto", s)
    opened(rw)
    r = rw.rewrite(ZH, "价格呢？")
    assert r.method == "rules" and "connection failed" in r.reason
    # the learned auto (the default) asked above every confidence: falls back to its offline answer
    s = Settings.from_env({"CONVSEARCH_LLM_BASE_URL": "http://127.0.0.1:9/v1", "CONVSEARCH_LLM_MODEL": "m",
                           "CONVSEARCH_LLM_UNSURE_BELOW": "1.5"})
    rw = get_rewriter("auto", s)
    opened(rw)
    r = rw.rewrite(ZH, "价格呢？")
    assert r.method == "learned" and r.fell_back and "connection failed" in r.reason
    assert r.rewritten == "AnySearch 的价格"


# --- guardrails ---------------------------------------------------------------------------------------
def test_unfaithful_output_is_rejected(srv, opened):
    srv.push(Reply.of("AnySearch 的价格和优惠券"))
    r = rewriter(srv, opened).rewrite(ZH, "价格呢？")
    assert r.rewritten == "AnySearch 的价格" and r.method == "rules" and "unfaithful: adds 优惠券" in r.reason


def test_overlong_output_is_reasked_once(srv, opened):
    srv.push(Reply.of("AnySearch 支持哪些检索方式以及价格" * 3), Reply.of("AnySearch 价格"))
    r = rewriter(srv, opened).rewrite(ZH, "价格呢？")
    assert (r.rewritten, r.method) == ("AnySearch 价格", "llm") and "after a re-ask" in r.reason
    second = srv.messages(1)
    assert [m["role"] for m in second[-3:]] == ["user", "assistant", "user"] and "太长了" in second[-1]["content"]


def test_overlong_twice_falls_back(srv, opened):
    long = "When did SpaceX, founded by Elon Musk in 2002, first launch a rocket " * 2
    srv.push(Reply.of(long), Reply.of(long))
    r = rewriter(srv, opened).rewrite(EN, "When did it first launch a rocket?")
    assert r.method == "rules" and r.fell_back and "too long" in r.reason and len(srv.requests) == 2


def test_blocked_words_from_settings(srv, opened):
    r = rewriter(srv, opened, llm_blocked_words="AnySearch").rewrite(ZH, "价格呢？")
    assert r.method in ("rules", "original") and "blocked words (AnySearch)" in r.reason


# --- the cache ----------------------------------------------------------------------------------------
def test_the_cache_avoids_a_second_call(srv, opened):
    rw = rewriter(srv, opened)
    a = rw.rewrite(ZH, "价格呢？")
    b = rw.rewrite(ZH, "价格呢？")
    assert a.rewritten == b.rewritten == "AnySearch 的价格" and "cache hit" in b.reason
    assert len(srv.requests) == 1
    rw.rewrite((*ZH, Message("user", "NovaDB 呢？")), "价格呢？")
    assert len(srv.requests) == 2  # another window: another call


def test_cache_size_zero_turns_it_off(srv, opened):
    rw = rewriter(srv, opened, llm_cache_size="0")
    rw.rewrite(ZH, "价格呢？"), rw.rewrite(ZH, "价格呢？")
    assert len(srv.requests) == 2


# --- structured output --------------------------------------------------------------------------------
class Pick(BaseModel):
    model_config = ConfigDict(extra="forbid")
    variants: list[str]


def test_structured_output_as_json_schema(srv, opened):
    llm = OpenAILLM(llm_config(settings(srv)))
    opened(llm)
    srv.push(Reply.json({"variants": ["AnySearch 的收费标准"]}))
    assert llm.complete([{"role": "user", "content": "AnySearch 的价格"}], schema=Pick).parsed.variants == [
        "AnySearch 的收费标准"]
    rf = srv.requests[0]["json"]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"]["properties"]["variants"]["type"] == "array"


def test_structured_output_as_a_tool_call(srv, opened):
    llm = OpenAILLM(llm_config(settings(srv, llm_structured="tools")))
    opened(llm)
    srv.push(Reply.tool_call("Pick", {"variants": ["a b"]}))
    assert llm.complete([{"role": "user", "content": "q"}], schema=Pick).parsed.variants == ["a b"]
    body = srv.requests[0]["json"]
    assert body["tool_choice"]["function"]["name"] == "Pick" and "response_format" not in body


def test_structured_output_that_fails_the_schema(srv, opened):
    llm = OpenAILLM(llm_config(settings(srv)))
    opened(llm)
    srv.push(Reply.json({"variants": "not a list"}))
    with pytest.raises(LLMBadOutput, match="does not match Pick"):
        llm.complete([{"role": "user", "content": "q"}], schema=Pick)


def test_llm_variants_merged_with_heuristic_ones(srv, opened):
    llm = OpenAILLM(llm_config(settings(srv)))
    opened(llm)
    srv.push(Reply.json({"variants": ["AnySearch 的收费标准", "AnySearch pricing", "AnySearch 的价钱"]}))
    out = HybridVariants(LLMVariants(llm))("AnySearch 的价格", max_variants=3)
    assert out[:2] == ["AnySearch 的收费标准", "AnySearch 的价钱"] and len(out) <= 3
    assert len(srv.requests) == 1


def test_pipeline_with_llm_variants_and_the_default_rewriter(srv, bm25_index):
    from convsearch import Pipeline

    s = settings(srv, llm_variants="on")
    srv.push(Reply.of("AnySearch 的价格"), Reply.json({"variants": ["AnySearch 的收费"]}))
    with Pipeline.from_settings(s, backend=bm25_index) as p:  # its own LLM clients, closed on exit
        r = p.search("价格呢？", [{"role": "user", "content": ZH[0].content}])
        assert r.standalone_query == "AnySearch 的价格" and r.rewrite.method == "llm"
        assert r.variants[0] == "AnySearch 的收费" and r.hits[0].id == "zh-any-price"
        assert len(srv.requests) == 2
        assert [c.step for c in r.trace.llm_calls] == ["rewrite", "variants"]  # each call in the trace


# --- tool calls and token usage (the agent's contract) ---------------------------------------------------
WEB_SEARCH = {"type": "function", "function": {
    "name": "web_search", "description": "Search the web",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}


def test_a_tool_call_round_trip(srv, opened):
    from convsearch.llm import assistant_message, tool_message
    from convsearch.types import Usage

    llm = OpenAILLM(llm_config(settings(srv)))
    opened(llm)
    srv.push(Reply.tool_call("web_search", {"query": "AnySearch 价格"}).with_usage(120, 18),
             Reply.of("专业版每月 99 元 [1]。").with_usage(210, 12))
    msgs: list = [Message("system", "你是搜索助手。"), Message("user", "AnySearch 多少钱？")]
    first = llm.complete(msgs, tools=[WEB_SEARCH])
    assert first.text == "" and first.finish_reason == "tool_calls" and first.model == "fake-model"
    (call,) = first.tool_calls
    assert (call.name, call.arguments, call.id) == ("web_search", '{"query": "AnySearch 价格"}', "call_1")
    msgs += [assistant_message(first), tool_message(call, "[1] AnySearch 专业版每月 99 元")]
    final = llm.complete(msgs, tools=[WEB_SEARCH])
    assert final.text == "专业版每月 99 元 [1]。" and final.tool_calls == () and final.usage == Usage(210, 12)
    sent = srv.requests[1]["json"]
    assert sent["tools"] == [WEB_SEARCH]
    assert sent["messages"][2]["tool_calls"][0]["function"] == {"name": "web_search",
                                                                "arguments": '{"query": "AnySearch 价格"}'}
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "call_1",
                                   "content": "[1] AnySearch 专业版每月 99 元"}
    assert (llm.stats.prompt_tokens, llm.stats.completion_tokens) == (330, 30)


def test_parallel_tool_calls_and_malformed_arguments_pass_through(srv, opened):
    llm = OpenAILLM(llm_config(settings(srv)))
    opened(llm)
    srv.push(Reply.tool_calls_of(("web_search", {"query": "深圳 天气"}), ("web_search", {"query": "Panyu weather"}),
                                 ("web_search", '{"query": "番禺'), text="我查一下。"))
    c = llm.complete([Message("user", "深圳和番禺最近天气怎么样？")], tools=[WEB_SEARCH])
    assert [t.id for t in c.tool_calls] == ["call_1", "call_2", "call_3"] and c.text == "我查一下。"
    assert [t.arguments for t in c.tool_calls] == ['{"query": "深圳 天气"}', '{"query": "Panyu weather"}',
                                                   '{"query": "番禺']  # junk arrives as the raw text it was


def test_usage_is_counted_and_missing_usage_is_zero(srv, opened):
    from convsearch.types import Usage

    llm = OpenAILLM(llm_config(settings(srv)))
    opened(llm)
    srv.push(Reply.of("AnySearch 的价格").with_usage(95, 7), Reply.of("x").with_usage(None),
             Reply.empty().with_usage(40, 0))
    assert llm.complete([Message("user", "价格呢？")]).usage == Usage(95, 7)
    assert llm.complete([Message("user", "价格呢？")]).usage == Usage()
    with pytest.raises(LLMBadOutput) as info:
        llm.complete([Message("user", "价格呢？")])
    assert info.value.usage == Usage(40, 0)
    assert (llm.stats.prompt_tokens, llm.stats.completion_tokens) == (135, 7)  # the rejected reply counted too


def test_a_rewrite_reports_its_tokens_from_the_server(srv, opened):
    from convsearch.types import Usage

    srv.push(Reply.of("AnySearch 支持哪些检索方式以及价格" * 3).with_usage(300, 60),
             Reply.of("AnySearch 价格").with_usage(330, 5))
    r = rewriter(srv, opened).rewrite(ZH, "价格呢？")
    assert r.rewritten == "AnySearch 价格" and r.usage == Usage(630, 65)
    assert [(c.step, c.model) for c in r.llm_calls] == [("rewrite", "fake-model")] * 2


def test_async_tool_calls(srv):
    llm = OpenAILLM(llm_config(settings(srv)))
    srv.push(Reply.tool_calls_of(("web_search", {"query": "SpaceX first launch"}),
                                 ("web_search", {"query": "Falcon 1"})))

    async def main():
        try:
            return await llm.acomplete([Message("user", "When did SpaceX first launch?")], tools=[WEB_SEARCH])
        finally:
            await llm.aclose()

    try:
        c = asyncio.run(main())
    finally:
        llm.close()
    assert [t.name for t in c.tool_calls] == ["web_search", "web_search"] and c.usage.total_tokens == 2


# --- HyDE and summaries ---------------------------------------------------------------------------------
def test_hyde_and_summaries_against_the_server(srv, opened):
    llm = OpenAILLM(llm_config(settings(srv)))
    opened(llm)
    srv.push(Reply.of("AnySearch 专业版每月 99 元，免费版每月 1000 次查询。"))
    e = HyDE(llm).enhance(EnhanceRequest("AnySearch 的价格"))
    assert e.query == "AnySearch 的价格" and e.dense_query.startswith("AnySearch 专业版")
    srv.push(Reply.of("The user asks about SpaceX: who founded it and when it first launched. " * 4))
    summary = LLMSummarizer(llm, max_chars=80).summarize(list(EN))
    assert summary is not None and len(summary) <= 80 and summary.startswith("The user asks about SpaceX")
    srv.push(Reply.of("late", delay_s=3))
    assert LLMSummarizer(llm, budget_s=0.2).summarize(list(EN)) is None


# --- concurrency --------------------------------------------------------------------------------------
def test_50_concurrent_turns_stay_within_the_concurrency_limit(srv, opened):
    srv.latency_s = 0.05
    rw = rewriter(srv, opened, llm_max_concurrency="4", llm_timeout_s="5", llm_cache_size="0")
    queries = [f"价格呢？{'！' * (i % 3)}" for i in range(50)]
    srv.responder = lambda req: Reply.of("AnySearch 的价格")
    with ThreadPoolExecutor(50) as pool:
        results = list(pool.map(lambda q: rw.rewrite(ZH, q), queries))
    assert len(srv.requests) == 50 and 1 < srv.max_in_flight <= 4
    assert rw.llm.stats.max_in_flight <= 4
    assert all(r.rewritten == "AnySearch 的价格" and r.method == "llm" for r in results)


def test_an_overloaded_llm_falls_back_within_the_budget(srv, opened):
    srv.latency_s = 0.4
    srv.responder = lambda req: Reply.of("AnySearch 的价格")
    rw = rewriter(srv, opened, llm_max_concurrency="2", llm_timeout_s="0.6", llm_cache_size="0")

    def turn(i: int):
        return _timed(rw.rewrite, ZH, "价格呢？" + "！" * (i % 4))

    with ThreadPoolExecutor(50) as pool:
        results = list(pool.map(turn, range(50)))
    stats = rw.llm.stats
    assert stats.max_in_flight <= 2  # ours; the server may briefly see an abandoned request still open
    deadline = time.perf_counter() + 2.0  # the server notices a hang-up within its select() wake-up
    while not any(r.get("abandoned") for r in srv.requests) and time.perf_counter() < deadline:
        time.sleep(0.01)
    assert any(r.get("abandoned") for r in srv.requests)  # timed-out requests are hung up on
    slow = [r for r, _ in results if r.fell_back]
    assert slow and all(r.rewritten == "AnySearch 的价格" for r, _ in results)  # rules stood in
    assert any("no free LLM slot" in r.reason for r in slow)
    assert max(e for _, e in results) <= 0.6 + SLACK_S


def test_50_concurrent_async_turns(srv):
    srv.latency_s = 0.05
    srv.responder = lambda req: Reply.of("AnySearch 的价格")
    s = settings(srv, llm_max_concurrency="5", llm_timeout_s="5")
    llm = OpenAILLM(llm_config(s))
    rw = LLMRewriter(llm, cache=None)

    async def main():
        try:
            return await asyncio.gather(*(rw.arewrite(ZH, "价格呢？" + "！" * i) for i in range(50)))
        finally:
            await llm.aclose()

    try:
        results = asyncio.run(main())
    finally:
        llm.close()
    assert all(r.rewritten == "AnySearch 的价格" for r in results)
    assert len(srv.requests) == 50 and srv.max_in_flight <= 5, llm.stats


def test_async_timeout_is_a_hard_deadline(srv):
    srv.push(Reply.of("x", delay_s=5))
    llm = OpenAILLM(llm_config(settings(srv)))

    async def main():
        try:
            t0 = time.perf_counter()
            with pytest.raises(LLMTimeout):
                await llm.acomplete([{"role": "user", "content": "q"}], budget_s=0.2)
            return time.perf_counter() - t0
        finally:
            await llm.aclose()

    try:
        assert asyncio.run(main()) <= 0.2 + SLACK_S
    finally:
        llm.close()


# --- the key never leaks ----------------------------------------------------------------------------------
def test_the_api_key_never_appears_in_logs_reprs_or_errors(srv, opened, caplog):
    srv.api_key = "sk-the-right-one"  # ours is wrong: the server answers 401 and echoes the header it got
    s = settings(srv)
    with caplog.at_level(logging.DEBUG):  # every logger: ours, openai's, httpx's
        rw = rewriter(srv, opened)
        r = rw.rewrite(ZH, "价格呢？")
        llm = OpenAILLM(llm_config(s))
        opened(llm)
        with pytest.raises(LLMRequestRejected) as info:
            llm.complete([{"role": "user", "content": "hi"}])
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # it was sent, as it must be
    assert r.fell_back and "HTTP 401" in r.reason
    exc = info.value
    texts = [caplog.text, r.reason, repr(r), repr(s), str(s), repr(rw), repr(llm), repr(llm_config(s)), str(exc),
             repr(exc), "".join(traceback.format_exception(exc)), repr(s.section("llm").api_key),
             repr(s.section("llm"))]
    for text in texts:
        assert KEY not in text and "SECRET-5f3c" not in text
    assert "***" in str(exc)  # the echoed header was scrubbed, not dropped silently


# --- HyDE in the pipeline (CONVSEARCH_HYDE=on) ------------------------------------------------------------
class _DenseSpy:
    """A real hybrid index that remembers what its dense side was asked."""

    def __init__(self, inner):
        self.inner, self.dense_queries = inner, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def search(self, query, **kw):
        if kw.get("dense_query"):
            self.dense_queries.append(kw["dense_query"])
        return self.inner.search(query, **kw)


def _hyde_turn(srv, hybrid_index, *replies):
    from convsearch import Pipeline

    s = settings(srv, hyde="on", rewriter="rules")
    srv.push(*replies)
    spy = _DenseSpy(hybrid_index)
    with Pipeline.from_settings(s, backend=spy) as p:
        r = p.search("价格呢？", [{"role": "user", "content": ZH[0].content}])
    return r, spy


def test_hyde_answer_feeds_the_dense_side_and_the_trace_says_so(srv, hybrid_index):
    passage = "AnySearch 专业版每月收费 99 元，免费版每月可查询 1000 次。"
    r, spy = _hyde_turn(srv, hybrid_index, Reply.of(passage))
    assert r.standalone_query == "AnySearch 的价格"  # the rules rewrote; the LLM only wrote the passage
    assert spy.dense_queries == [passage]
    assert any(n.startswith("hyde: ") for n in r.trace.notes) and "hyde" in r.trace.timings_ms
    assert [c.step for c in r.trace.llm_calls] == ["hyde"]
    assert len(srv.requests) == 1 and "参考文档" in srv.requests[0]["json"]["messages"][0]["content"]
    assert srv.requests[0]["json"]["messages"][1]["content"] == "AnySearch 的价格"
    assert r.hits and r.hits[0].id == "zh-any-price"


def test_hyde_fails_open_to_an_ordinary_search(srv, hybrid_index):
    r, spy = _hyde_turn(srv, hybrid_index, Reply.error(500), Reply.error(500))
    assert spy.dense_queries == []  # no passage: the ordinary hybrid search ran instead
    assert any(n.startswith("hyde fell back") for n in r.trace.notes)
    assert r.hits and r.hits[0].id == "zh-any-price"


def test_hyde_setting_is_checked():
    from convsearch.errors import ConfigError

    with pytest.raises(ConfigError, match="CONVSEARCH_HYDE must be one of on, off, not 'yes'"):
        Settings.from_env({"CONVSEARCH_HYDE": "yes"})


def test_hyde_costs_no_call_without_a_dense_side(srv, bm25_index):
    from convsearch import search_with_context

    s = settings(srv, hyde="on", rewriter="rules")
    # the one-call convenience builds its HyDE writer for this call and closes it on return
    r = search_with_context("价格呢？", [{"role": "user", "content": ZH[0].content}], backend=bm25_index, settings=s)
    assert srv.requests == [] and "hyde skipped: the backend has no dense side" in r.trace.notes
    assert r.hits and r.hits[0].id == "zh-any-price"
