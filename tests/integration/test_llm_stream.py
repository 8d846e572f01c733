"""Streaming end to end: ``OpenAILLM.astream`` against the loopback OpenAI-compatible server's real SSE chunks
(text deltas timed as they arrive, tool-call deltas assembled, usage from the final chunk, a server that hangs
up mid-answer), ``ScriptedLLM.astream``, and the agent's ``astream`` sending live tokens (Chinese and English)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest

pytest.importorskip("openai")

from convsearch import Settings  # noqa: E402
from convsearch.agent import Agent  # noqa: E402
from convsearch.llm import LLMConfig, LLMUnavailable, OpenAILLM, ScriptedLLM, StreamEvent  # noqa: E402
from convsearch.testing.openai_server import FakeOpenAIServer, Reply  # noqa: E402
from convsearch.types import Usage  # noqa: E402

pytestmark = pytest.mark.integration

MSGS = [{"role": "user", "content": "深圳最近三天适合露营吗？"}]
WEB_SEARCH = {"type": "function", "function": {"name": "web_search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}


@pytest.fixture
def srv() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as s:
        yield s


def client(srv: FakeOpenAIServer, **kw: Any) -> OpenAILLM:
    return OpenAILLM(LLMConfig(base_url=srv.base_url, model="fake", **({"timeout_s": 5.0, "max_retries": 0} | kw)))


async def collect(llm: Any, **kw: Any) -> list[tuple[float, StreamEvent]]:
    out = []
    try:
        async for ev in llm.astream(MSGS, **kw):
            out.append((time.perf_counter(), ev))
    finally:
        if hasattr(llm, "aclose"):
            await llm.aclose()
    return out


def test_text_deltas_arrive_before_the_reply_is_finished(srv: FakeOpenAIServer) -> None:
    text = "深圳最近三天多云转晴，适合露营 [1]. Sunny and dry."
    srv.push(Reply.of(text).with_usage(31, 17).streamed(chunk_delay_s=0.04))
    t0 = time.perf_counter()
    events = asyncio.run(collect(client(srv)))
    deltas = [(t, e.text) for t, e in events if e.completion is None]
    t_done, last = events[-1]
    assert last.completion is not None and last.completion.text == text and "".join(d for _, d in deltas) == text
    assert len(deltas) >= 10  # pieces, not one blob
    # the first delta came while the server was still sending (≥ 10 more chunks 40 ms apart)
    assert t_done - deltas[0][0] >= 0.3 and deltas[0][0] - t0 < t_done - t0 - 0.3
    assert last.completion.usage == Usage(31, 17) and last.completion.finish_reason == "stop"
    req = srv.requests[0]["json"]
    assert req["stream"] is True and req["stream_options"] == {"include_usage": True}


def test_parallel_tool_call_deltas_are_assembled(srv: FakeOpenAIServer) -> None:
    srv.push(Reply.tool_calls_of(("web_search", {"query": "深圳 露营 天气", "recency": "week"}),
                                 ("web_search", {"query": "Panyu camping weather"})).with_usage(40, 12))
    llm = client(srv)
    events = asyncio.run(collect(llm, tools=[WEB_SEARCH]))
    # a reply of tool calls only: no text deltas, one mark as each call begins
    assert [(e.text, e.tool_call) for _, e in events[:-1]] == [("", True), ("", True)]
    c = events[-1][1].completion
    assert c is not None and c.finish_reason == "tool_calls" and [tc.id for tc in c.tool_calls] == ["call_1", "call_2"]
    assert [tc.name for tc in c.tool_calls] == ["web_search", "web_search"]
    assert [json.loads(tc.arguments) for tc in c.tool_calls] == [
        {"query": "深圳 露营 天气", "recency": "week"}, {"query": "Panyu camping weather"}]
    assert c.usage == Usage(40, 12) and llm.stats.prompt_tokens == 40 and llm.stats.completion_tokens == 12


def test_no_usage_chunk_counts_nothing(srv: FakeOpenAIServer) -> None:
    srv.push(Reply.of("pong").with_usage(None))
    c = asyncio.run(collect(client(srv)))[-1][1].completion
    assert c is not None and c.text == "pong" and c.usage == Usage()


def test_a_server_hanging_up_mid_stream_is_an_llm_error_not_retried(srv: FakeOpenAIServer) -> None:
    srv.push(Reply.of("SpaceX was founded in 2002 by Elon Musk.").streamed(cut_after=4), Reply.of("again"))
    got: list[str] = []

    async def run() -> None:
        llm = client(srv, max_retries=2)
        try:
            async for ev in llm.astream(MSGS):
                got.append(ev.text)
        finally:
            await llm.aclose()

    with pytest.raises(LLMUnavailable, match="stream ended"):
        asyncio.run(run())
    assert "".join(got) == "SpaceX wa" and len(srv.requests) == 1  # tokens were out: no retry


def test_the_budget_bounds_the_whole_stream(srv: FakeOpenAIServer) -> None:
    from convsearch.llm import LLMTimeout

    srv.push(Reply.of("慢慢地一个字一个字地说出来，直到时间用完为止。").streamed(chunk_delay_s=0.1))
    got: list[str] = []

    async def run() -> None:
        llm = client(srv)
        try:
            async for ev in llm.astream(MSGS, budget_s=0.45):
                got.append(ev.text)
        finally:
            await llm.aclose()

    t0 = time.perf_counter()
    with pytest.raises(LLMTimeout):
        asyncio.run(run())
    assert got and time.perf_counter() - t0 < 1.0  # tokens came, then the budget ended the stream


def test_a_failure_before_the_first_token_is_retried(srv: FakeOpenAIServer) -> None:
    srv.push(Reply.error(503), Reply.of("第二次成功"))
    events = asyncio.run(collect(client(srv, max_retries=1, backoff_s=0.01)))
    assert events[-1][1].completion is not None and events[-1][1].completion.text == "第二次成功"
    assert len(srv.requests) == 2


def test_scripted_llm_streams_its_text_in_pieces() -> None:
    llm = ScriptedLLM(["专业版每月 99 元 [1]。"], usage=Usage(5, 6))
    events = [e for _, e in asyncio.run(collect(llm))]
    assert len(events) > 2 and "".join(e.text for e in events) == "专业版每月 99 元 [1]。"
    assert events[-1].completion is not None and events[-1].completion.usage == Usage(5, 6)


# --- the agent ---------------------------------------------------------------------------------------------
def one_search_then(answer: Reply, query: str):
    def respond(req: dict[str, Any]) -> Reply:
        if req.get("tools"):
            return Reply.tool_calls_of(("web_search", {"query": query}))
        return answer

    return respond


def agent_over(bm25_index: Any, srv: FakeOpenAIServer, **settings: Any) -> Agent:
    s = Settings.from_env({}, **({"dense": "off", "agent_max_searches": 1} | settings))
    return Agent(bm25_index, client(srv), s, today=date(2024, 11, 30))


def stream_events(agent: Agent, question: str) -> list[tuple[float, Any]]:
    return [(time.perf_counter(), ev) for ev in agent.stream(question)]


@pytest.mark.parametrize("question,query,answer", [
    ("深圳最近三天适合露营吗？", "深圳 露营 天气", "深圳最近三天多云转晴，适合露营 [1]。"),
    ("When was SpaceX founded?", "SpaceX founded", "SpaceX was founded in 2002 [1]."),
])
def test_agent_streams_live_tokens_of_the_final_call(bm25_index, srv: FakeOpenAIServer, question: str, query: str,
                                                     answer: str) -> None:
    srv.responder = one_search_then(Reply.of(f"  {answer}\n").streamed(chunk_delay_s=0.04), query)
    events = stream_events(agent_over(bm25_index, srv, agent_strict="off"), question)
    kinds = [e.kind for _, e in events]
    assert kinds[0] == "search" and kinds[-2:] == ["citations", "done"] and "replace" not in kinds
    tokens = [(t, e.data) for t, e in events if e.kind == "token"]
    done = events[-1][1].data
    assert "".join(d for _, d in tokens) == done.text == answer and not done.flags.degraded
    assert len(tokens) >= 4 and events[-1][0] - tokens[0][0] >= 0.15  # the first token long before the end
    assert all("[" not in d or "]" in d for _, d in tokens)  # a citation marker is never split
    assert done.usage.total_tokens > 0 and len(srv.requests) == 2 and srv.requests[1]["json"].get("stream")


def test_agent_mid_stream_disconnect_gives_a_degraded_answer(bm25_index, srv: FakeOpenAIServer) -> None:
    srv.responder = one_search_then(Reply.of("SpaceX was founded in 2002 [1] by Elon Musk.").streamed(cut_after=5),
                                    "SpaceX founded")
    events = stream_events(agent_over(bm25_index, srv), "When was SpaceX founded?")
    kinds = [e.kind for _, e in events]
    done = events[-1][1].data
    assert "token" in kinds and kinds[-3:] == ["replace", "citations", "done"]
    assert done.flags.degraded and events[-3][1].data == done.text and done.citations
    assert any("LLM failed" in t for t in done.trace)


def test_sse_answer_streams_real_tokens_from_the_live_server(tmp_path, corpus, srv: FakeOpenAIServer) -> None:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("uvicorn")
    from convsearch.backends.local import LocalIndex
    from convsearch.testing.live_server import LiveServer, sse_events

    LocalIndex(tmp_path / "index", embedder=None).add(corpus)
    answer = "SpaceX was founded in 2002 [1]."
    srv.responder = one_search_then(Reply.of(answer).streamed(chunk_delay_s=0.04), "SpaceX founded")
    env = {"CONVSEARCH_API_KEYS": "acme:key-acme", "CONVSEARCH_LLM_BASE_URL": srv.base_url,
           "CONVSEARCH_LLM_MODEL": "fake", "CONVSEARCH_AGENT_MAX_SEARCHES": "1", "CONVSEARCH_AGENT_STRICT": "off"}
    events: list[tuple[float, str | None, Any]] = []
    with LiveServer(tmp_path, env=env) as live:
        with httpx.stream("POST", live.url + "/v1/answer", headers={"Authorization": "Bearer key-acme"}, timeout=30,
                          json={"query": "When was SpaceX founded?", "stream": True}) as r:
            assert r.status_code == 200
            events += [(time.perf_counter(), event, data) for event, data in sse_events(r)]
    kinds = [k for _, k, _ in events]
    assert kinds[0] == "search" and kinds[-2:] == ["citations", "done"] and "replace" not in kinds
    tokens = [(t, d["text"]) for t, k, d in events if k == "token"]
    assert "".join(d for _, d in tokens) == events[-1][2]["text"] == answer
    assert len(tokens) >= 4 and events[-1][0] - tokens[0][0] >= 0.15  # tokens reached the client as generated


# --- live tokens from every step call; a preamble before a tool call is retracted ----------------------------
def standing(events: list[tuple[Any, ...]]) -> str:
    """What a client shows after the events: tokens appended, ``replace`` starting over with its text."""
    text = ""
    for kind, data in events:
        if kind == "token":
            text += data
        elif kind == "replace":
            text = data
    return text


@pytest.mark.parametrize("question,answer", [
    ("你好，1+1 等于几？顺便说说为什么。", "一加一等于二，这是最基本的算术：把一个和另一个放在一起，就是两个。"),
    ("Why is the sky blue, in one short paragraph?",
     "Sunlight scatters off air molecules, and blue light scatters most."),
])
def test_a_step_call_that_answers_streams_while_the_server_is_still_sending(
        bm25_index, srv: FakeOpenAIServer, question: str, answer: str) -> None:
    srv.push(Reply.of(answer).streamed(chunk_delay_s=0.03))  # ≥ 16 chunks: the server keeps sending for ~0.5 s
    agent = agent_over(bm25_index, srv, agent_max_searches=3, agent_no_search_check="off", agent_strict="off")
    events: list[tuple[str, Any]] = []
    in_flight_at_token: list[int] = []
    for ev in agent.stream(question):
        if ev.kind == "token":
            in_flight_at_token.append(srv.in_flight)  # the server's own view: is that reply still being written?
        events.append((ev.kind, ev.data))
    assert len(srv.requests) == 1 and srv.requests[0]["json"]["tools"] and srv.requests[0]["json"]["stream"]
    assert in_flight_at_token[:2] == [1, 1]  # two tokens came before the server sent its last chunk
    kinds = [k for k, _ in events]
    assert "replace" not in kinds and kinds[-2:] == ["citations", "done"]
    done = events[-1][1]
    assert standing(events) == "".join(d for k, d in events if k == "token") == done.text == answer
    assert done.llm_calls[0].purpose == "step" and done.llm_calls[0].tools_offered


@pytest.mark.parametrize("question,preamble,query,answer", [
    ("深圳最近三天适合露营吗？", "我先查一下深圳最近的天气预报。", "深圳 露营 天气",
     "深圳最近三天多云转晴，适合露营 [1]。"),
    ("When was SpaceX founded?", "Let me look that up before answering.", "SpaceX founded",
     "SpaceX was founded in 2002 [1]."),
])
def test_text_then_a_tool_call_is_retracted_then_searched_then_answered(
        bm25_index, srv: FakeOpenAIServer, question: str, preamble: str, query: str, answer: str) -> None:
    srv.push(Reply.tool_calls_of(("web_search", {"query": query}), text=preamble).streamed(chunk_delay_s=0.01),
             Reply.of(answer).streamed(chunk_delay_s=0.01))
    agent = agent_over(bm25_index, srv, agent_max_searches=2, agent_strict="off")
    events = [(ev.kind, ev.data) for ev in agent.stream(question)]
    kinds = [k for k, _ in events]
    r = kinds.index("replace")
    assert kinds.count("replace") == 1 and events[r][1] == ""  # one retraction, to nothing
    assert kinds[:r].count("token") >= 2 and "".join(d for k, d in events[:r] if k == "token") == preamble
    assert kinds[r + 1] == "search" and events[r + 1][1].query == query
    after = [d for k, d in events[r:] if k == "token"]
    done = events[-1][1]
    assert len(after) >= 2 and "".join(after) == standing(events) == done.text == answer
    assert preamble not in done.text and query not in standing(events)  # neither the preamble nor the query
    assert len(srv.requests) == 2 and all(q["json"]["stream"] for q in srv.requests)
    assert srv.requests[1]["json"]["messages"][-2]["content"] == preamble  # the model still sees what it wrote


def test_sse_from_the_live_server_carries_the_retraction(tmp_path, corpus, srv: FakeOpenAIServer) -> None:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("uvicorn")
    from convsearch.backends.local import LocalIndex
    from convsearch.testing.live_server import LiveServer, sse_events

    LocalIndex(tmp_path / "index", embedder=None).add(corpus)
    answer = "SpaceX was founded in 2002 [1]."
    srv.push(Reply.tool_calls_of(("web_search", {"query": "SpaceX founded"}), text="Checking the sources first."),
             Reply.of(answer).streamed(chunk_delay_s=0.01))
    env = {"CONVSEARCH_API_KEYS": "acme:key-acme", "CONVSEARCH_LLM_BASE_URL": srv.base_url,
           "CONVSEARCH_LLM_MODEL": "fake", "CONVSEARCH_AGENT_MAX_SEARCHES": "2", "CONVSEARCH_AGENT_STRICT": "off"}
    events: list[tuple[str | None, Any]] = []
    with LiveServer(tmp_path, env=env) as live:
        with httpx.stream("POST", live.url + "/v1/answer", headers={"Authorization": "Bearer key-acme"}, timeout=30,
                          json={"query": "When was SpaceX founded?", "stream": True}) as r:
            assert r.status_code == 200
            events += sse_events(r)
    kinds = [k for k, _ in events]
    i = kinds.index("replace")
    assert events[i][1] == {"text": ""} and "token" in kinds[:i] and kinds[i + 1] == "search"
    assert kinds.count("replace") == 1 and kinds[-2:] == ["citations", "done"]
    shown = standing([(k, d["text"]) if k in ("token", "replace") else (k, d) for k, d in events])
    assert shown == events[-1][1]["text"] == answer


def test_cli_ask_writes_only_the_answer_that_stands_to_a_pipe(tmp_path, corpus, run_cli,
                                                              srv: FakeOpenAIServer) -> None:
    from convsearch.backends.local import LocalIndex

    LocalIndex(tmp_path / ".convsearch" / "index", embedder=None).add(corpus)
    srv.push(Reply.tool_calls_of(("web_search", {"query": "AnySearch 价格"}), text="我先搜索一下价格。"),
             Reply.of("专业版每月 99 元 [1]。"))
    env = {"CONVSEARCH_LLM_BASE_URL": srv.base_url, "CONVSEARCH_LLM_MODEL": "fake", "CONVSEARCH_AGENT_STRICT": "off"}
    r = run_cli("ask", "AnySearch 专业版多少钱？", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("专业版每月 99 元 [1]。\n") and "我先搜索" not in r.stdout + r.stderr
    assert "[1] AnySearch 价格" in r.stdout and "searching: AnySearch 价格" in r.stderr
