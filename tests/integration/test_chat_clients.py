"""Real chat clients against ``convsearch serve`` (a real process on loopback): the official ``openai`` SDK (sync,
async, streaming, errors), the ``llm`` CLI with convsearch as an extra OpenAI-compatible model (a two-turn
conversation continued with ``llm -c``), LangChain's ``ChatOpenAI``; and a burst of 20 concurrent streaming
chats over two tenants. convsearch's own upstream is the loopback OpenAI-compatible server with a scripted
tool-calling model (``search_then_cite``); its search provider is the Tavily replay server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip("openai")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from convsearch.testing.chat_stream import read_stream  # noqa: E402
from convsearch.testing.closing import close_later  # noqa: E402
from convsearch.testing.live_server import LiveServer  # noqa: E402
from convsearch.testing.openai_server import FakeOpenAIServer, Reply, search_then_cite  # noqa: E402
from convsearch.testing.web_replay import WebReplayServer  # noqa: E402

pytestmark = pytest.mark.integration

KEYS = {"acme": "sk-acme-1", "beta": "sk-beta-1"}
TAG_RE = re.compile(r"T-[a-z]+-\d+")


def tagging(inner: Any) -> Any:
    """``inner``, with every tag ``T-tenant-i`` seen in the conversation's user and assistant messages put in
    front of the answer: a tag of another chat in an answer means its conversation leaked into this one."""

    def respond(req: dict[str, Any]) -> Reply:
        reply: Reply = inner(req)
        if reply.kind != "text":
            return reply
        from dataclasses import replace

        tags = sorted({t for m in req.get("messages", []) if m.get("role") in ("user", "assistant")
                       for t in TAG_RE.findall(str(m.get("content") or ""))})
        return replace(reply, text=(" ".join(tags) + ": " if tags else "") + reply.text)

    return respond


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The upstream model, the Tavily replay server and ``convsearch serve`` over them, for the module."""
    data = tmp_path_factory.mktemp("chat-serve")
    with FakeOpenAIServer(tagging(search_then_cite(chunk_delay_s=0.002))) as upstream, \
            WebReplayServer("tavily", keys=["tv-1"]) as tavily:
        env = {"CONVSEARCH_API_KEYS": ",".join(f"{t}:{k}" for t, k in KEYS.items()),
               "CONVSEARCH_LLM_BASE_URL": upstream.base_url, "CONVSEARCH_LLM_MODEL": "fake",
               "CONVSEARCH_LLM_API_KEY": "sk-upstream", "CONVSEARCH_BACKENDS": "tavily",
               "CONVSEARCH_TAVILY_API_KEYS": "tv-1", "CONVSEARCH_TAVILY_BASE_URL": tavily.base_url,
               "CONVSEARCH_TAVILY_RATE": "off", "CONVSEARCH_CHAT_PROFILES": "support-bot",
               "CONVSEARCH_REWRITER": "rules", "CONVSEARCH_RATE_LIMIT": "0"}
        with LiveServer(data, env=env) as srv:
            yield {"url": srv.url, "base": srv.url + "/v1", "upstream": upstream, "tavily": tavily, "server": srv}


def client(stack: dict[str, Any], tenant: str = "acme", **kw: Any) -> Any:
    c = openai.OpenAI(base_url=stack["base"], api_key=KEYS[tenant], max_retries=0, timeout=30, **kw)
    close_later(c)
    return c


# --- the openai SDK ---------------------------------------------------------------------------------------------
def test_openai_sdk_sync_answer_with_citations(stack: dict[str, Any]) -> None:
    r = client(stack).chat.completions.create(
        model="convsearch", messages=[{"role": "system", "content": "You are helpful."},
                                      {"role": "user", "content": "When did SpaceX first launch a rocket?"}])
    text = r.choices[0].message.content
    assert "Falcon 1: SpaceX's first rocket [1]." in text and r.choices[0].finish_reason == "stop"
    extra = r.model_extra
    assert extra["citations"][0] == "https://www.spacex-history.example/falcon-1"
    assert extra["search_results"][0]["domain"] == "spacex-history.example" and extra["search_results"][0]["snippet"]
    assert extra["searches"][0]["query"] == "When did SpaceX first launch a rocket?"
    assert r.usage is not None and r.usage.prompt_tokens == 100 and r.usage.completion_tokens == 20  # 2 calls
    assert not extra["convsearch"]["flags"]["degraded"]


def test_openai_sdk_async_streaming(stack: dict[str, Any]) -> None:
    async def go() -> tuple[str, list[Any], float, float]:
        c = openai.AsyncOpenAI(base_url=stack["base"], api_key=KEYS["beta"], max_retries=0, timeout=30)
        t0 = time.perf_counter()
        first = 0.0
        chunks = []
        text = ""
        s = await c.chat.completions.create(model="convsearch", stream=True, stream_options={"include_usage": True},
                                            messages=[{"role": "user", "content": "深圳今天天气怎么样？"}])
        async for ch in s:
            chunks.append(ch)
            if ch.choices and ch.choices[0].delta.content:
                first = first or time.perf_counter() - t0
                text += ch.choices[0].delta.content
        await c.close()
        return text, chunks, first, time.perf_counter() - t0

    text, chunks, first, total = asyncio.run(go())
    assert "深圳今天天气" in text and "[1]." in text
    final = next(ch for ch in chunks if ch.choices and ch.choices[0].finish_reason)
    assert final.model_extra["citations"][0].startswith("https://www.weather.example.cn/shenzhen/today")
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 120
    assert len([ch for ch in chunks if ch.choices and ch.choices[0].delta.content]) > 3  # pieces, not one blob
    assert first < total  # the first token came before the end


def test_openai_sdk_sync_stream_and_models(stack: dict[str, Any]) -> None:
    c = client(stack)
    assert [m.id for m in c.models.list()] == ["convsearch", "convsearch/support-bot"]
    assert c.models.retrieve("convsearch/support-bot").id == "convsearch/support-bot"
    with c.chat.completions.create(model="convsearch/support-bot", stream=True,
                                   messages=[{"role": "user", "content": "What is hybrid search?"}]) as s:
        parts = [ch.choices[0].delta.content or "" for ch in s if ch.choices]
    assert "Hybrid search, explained [" in "".join(parts)


def test_openai_sdk_errors(stack: dict[str, Any]) -> None:
    with pytest.raises(openai.AuthenticationError) as e401:
        with openai.OpenAI(base_url=stack["base"], api_key="sk-wrong", max_retries=0) as wrong:
            wrong.models.list()
    assert e401.value.status_code == 401 and e401.value.type == "authentication_error"
    c = client(stack)
    with pytest.raises(openai.NotFoundError) as e404:
        c.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert e404.value.code == "model_not_found" and e404.value.param == "model"
    with pytest.raises(openai.BadRequestError) as e400:
        c.chat.completions.create(model="convsearch", messages=[{"role": "system", "content": "only a system"}])
    assert e400.value.param == "messages" and "user message" in e400.value.message
    with pytest.raises(openai.BadRequestError) as bad_n:
        c.chat.completions.create(model="convsearch", n=3, messages=[{"role": "user", "content": "hi"}])
    assert bad_n.value.param == "n"


def test_x_session_id_resolves_a_follow_up_sent_alone(stack: dict[str, Any]) -> None:
    c = client(stack)
    h = {"X-Session-Id": "sdk-session-1"}
    c.chat.completions.create(model="convsearch", extra_headers=h,
                              messages=[{"role": "user", "content": "AnySearch 支持哪些检索方式？"}])
    r = c.chat.completions.create(model="convsearch", extra_headers=h,
                                  messages=[{"role": "user", "content": "价格呢？"}])
    step = r.model_extra["searches"][0]
    assert step["query"] == "价格呢？" and step["searched"] == "AnySearch 的价格"
    assert "AnySearch 价格与套餐 [1]." in r.choices[0].message.content
    assert r.model_extra["citations"][0] == "https://docs.anysearch.example/zh/pricing"


# --- the llm CLI ------------------------------------------------------------------------------------------------
def test_llm_cli_two_turn_conversation(stack: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("llm")
    home = tmp_path / "llm-home"
    home.mkdir()
    (home / "extra-openai-models.yaml").write_text(
        f"- model_id: convsearch\n  model_name: convsearch\n  api_base: \"{stack['base']}\"\n"
        "  api_key_name: convsearch\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONVSEARCH_", "OPENAI_"))}
    env |= {"LLM_USER_PATH": str(home), "PYTHONUTF8": "1", "HOME": str(tmp_path)}

    def llm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "llm", *args], env=env, capture_output=True, text=True,
                              encoding="utf-8", timeout=60, stdin=subprocess.DEVNULL)

    assert llm("keys", "set", "convsearch", "--value", KEYS["acme"]).returncode == 0
    first = llm("-m", "convsearch", "AnySearch 支持哪些检索方式？")
    assert first.returncode == 0, first.stderr
    assert "[1]." in first.stdout
    second = llm("-c", "价格呢？")  # continues the conversation: llm sends both turns
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip().startswith("AnySearch 价格与套餐 [1].")  # the follow-up was resolved
    logs = json.loads(llm("logs", "--json", "-n", "2").stdout)
    assert [x["prompt"] for x in logs] == ["AnySearch 支持哪些检索方式？", "价格呢？"]
    assert logs[0]["conversation_id"] == logs[1]["conversation_id"]
    # llm streamed and asked for usage: it logged the upstream's tokens for the whole task (two calls of 50 + 10)
    assert (logs[1]["input_tokens"], logs[1]["output_tokens"]) == (100, 20)
    # the upstream saw the first turn in the second task's prompt, as conversation
    second_task = [r["json"]["messages"] for r in stack["upstream"].requests
                   if any(m.get("content") == "价格呢？" for m in r["json"]["messages"])]
    assert second_task and any(m.get("content") == "AnySearch 支持哪些检索方式？" for m in second_task[0])


# --- LangChain ------------------------------------------------------------------------------------------------
def test_langchain_chat_openai(stack: dict[str, Any]) -> None:
    lc = pytest.importorskip("langchain_openai")
    chat = lc.ChatOpenAI(base_url=stack["base"], api_key=KEYS["acme"], model="convsearch", max_retries=0,
                         timeout=30)
    msg = chat.invoke([("human", "Who founded SpaceX?"), ("ai", "Elon Musk [1]."),
                       ("human", "When did it first launch a rocket?")])
    assert "Falcon 1: SpaceX's first rocket [1]." in msg.content
    assert msg.usage_metadata is not None and msg.usage_metadata["total_tokens"] == 120
    streamed = "".join(str(ch.content) for ch in chat.stream("What is hybrid search?"))
    assert "Hybrid search, explained [" in streamed


# --- a burst of streaming chats over two tenants ------------------------------------------------------------------
def test_burst_of_20_concurrent_streams_over_two_tenants(stack: dict[str, Any]) -> None:
    questions = ["What is hybrid search?", "When did SpaceX first launch a rocket?", "AnySearch 价格", "深圳今天天气",
                 "London weather today"]

    async def chat(ac: httpx.AsyncClient, tenant: str, i: int) -> tuple[str, int, Any]:
        tag = f"T-{tenant}-{i}"
        body = {"model": "convsearch", "stream": True, "stream_options": {"include_usage": True},
                "messages": [{"role": "user", "content": f"{questions[i % len(questions)]} ({tag})"}]}
        # the same session ids in both tenants: each tenant's session is its own
        headers = {"Authorization": f"Bearer {KEYS[tenant]}", "X-Session-Id": f"burst-{i % 5}"}
        async with ac.stream("POST", stack["base"] + "/chat/completions", json=body, headers=headers) as r:
            assert r.status_code == 200, await r.aread()
            lines = [line async for line in r.aiter_lines()]
        return tenant, i, read_stream(lines)  # every chunk checked

    async def burst() -> list[tuple[str, int, Any]]:
        async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=20)) as ac:
            return list(await asyncio.wait_for(asyncio.gather(
                *(chat(ac, t, i) for t in KEYS for i in range(10))), timeout=60))

    stack["upstream"].reset()
    t0 = time.perf_counter()
    done = asyncio.run(burst())
    assert len(done) == 20 and time.perf_counter() - t0 < 60
    assert stack["upstream"].max_in_flight >= 4  # the chats overlapped upstream too
    for tenant, i, s in done:
        tags = set(TAG_RE.findall(s.content))
        own = f"T-{tenant}-{i}"
        assert own in tags, (own, s.content)
        # earlier turns of the same tenant's session may show; another tenant's never
        assert all(t.startswith(f"T-{tenant}-") for t in tags), (own, s.content)
        assert s.final["citations"] and s.usage and s.usage["total_tokens"] > 0
        assert not s.final["convsearch"]["flags"]["degraded"]


def test_tokens_reach_the_client_as_the_upstream_writes_them(stack: dict[str, Any]) -> None:
    upstream = stack["upstream"]
    before = upstream.responder
    upstream.responder = search_then_cite(chunk_delay_s=0.03)  # the answer in 3-character chunks, 30 ms apart
    try:
        with httpx.stream("POST", stack["base"] + "/chat/completions", timeout=30,
                          headers={"Authorization": f"Bearer {KEYS['acme']}"},
                          json={"model": "convsearch", "stream": True,
                                "messages": [{"role": "user", "content": "What is hybrid search?"}]}) as r:
            seen: list[tuple[float, str]] = []
            lines = []
            for line in r.iter_lines():
                lines.append(line)
                if line.startswith("data: {") and '"content": "' in line and '"content": ""' not in line:
                    seen.append((time.perf_counter(), line))
    finally:
        upstream.responder = before
    s = read_stream(lines)
    assert len(seen) >= 8 and "Hybrid search, explained [" in s.content
    # the first piece was on the client ~30 ms × the remaining chunks before the last one
    assert seen[-1][0] - seen[0][0] >= 0.15, [round(t - seen[0][0], 3) for t, _ in seen]
