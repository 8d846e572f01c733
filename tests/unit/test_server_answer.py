"""POST /v1/answer in process: JSON and SSE, the degraded answer without an LLM, sessions, tenant scoping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from convsearch.agent.testing import last_tool_numbers, search_call, search_calls  # noqa: E402
from convsearch.config import Settings  # noqa: E402
from convsearch.history import InMemoryStore  # noqa: E402
from convsearch.llm import ScriptedLLM  # noqa: E402
from convsearch.server.app import create_app  # noqa: E402

A = {"Authorization": "Bearer key-acme"}
B = {"Authorization": "Bearer key-beta"}


@pytest.fixture
def client(bm25_index) -> Iterator[TestClient]:
    s = Settings.from_env({}, api_keys="acme:key-acme,beta:key-beta", dense="off", rate_limit=0)
    with TestClient(create_app(s, backend=bm25_index, store=InMemoryStore(), mcp=False),
                    raise_server_exceptions=False) as c:
        yield c


def cite_all(msgs: list[dict[str, Any]], tools: Any) -> str:
    return " ".join(f"Fact {n} [{n}]." for n in last_tool_numbers(msgs)) or "Nothing found."


def sse(text: str) -> list[tuple[str, Any]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_answer_json(client: TestClient) -> None:
    client.app.state.answer_llm = ScriptedLLM([search_call("SpaceX founded"), "SpaceX was founded in 2002 [1]."],
                                              usage=None)
    r = client.post("/v1/answer", json={"query": "When was SpaceX founded?"}, headers=A)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["text"] == "SpaceX was founded in 2002 [1]." and body["citations"][0]["domain"] == "history.example"
    assert body["searches"][0]["query"] == "SpaceX founded" and body["usage"]["total_tokens"] > 0
    assert body["flags"]["degraded"] is False


def test_answer_sse_events(client: TestClient) -> None:
    client.app.state.answer_llm = ScriptedLLM([search_calls(["深圳 露营 天气", "番禺 露营 天气"]), cite_all])
    body = {"query": "深圳和番禺最近适合露营吗？", "stream": True}
    with client.stream("POST", "/v1/answer", json=body, headers=A) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = sse(r.read().decode("utf-8"))
    kinds = [k for k, _ in events]
    assert kinds[:2] == ["search", "search"] and kinds[-2:] == ["citations", "done"] and "token" in kinds
    text = "".join(d["text"] for k, d in events if k == "token")
    assert text == events[-1][1]["text"] and {c["n"] for c in events[-2][1]} >= {1}


def test_answer_without_an_llm_says_so_and_lists_the_sources_once(client: TestClient) -> None:
    r = client.post("/v1/answer", json={"query": "AnySearch 专业版多少钱？"}, headers=A)
    assert r.status_code == 200
    body = r.json()
    assert body["flags"]["degraded"] and body["flags"]["no_llm"]
    assert body["text"] == "未配置 LLM：以下是最相关的来源"  # the sources are the citations, not a second list
    assert body["llm_calls"] == [] and body["usage"]["total_tokens"] == 0 and body["citations"]
    assert any("no LLM configured" in t for t in body["trace"])
    with client.stream("POST", "/v1/answer", json={"query": "When was SpaceX founded?", "stream": True},
                       headers=A) as s:
        events = sse(s.read().decode("utf-8"))
    done = events[-1][1]
    assert done["text"] == "no LLM configured: showing the most relevant sources" and done["llm_calls"] == []
    assert [k for k, _ in events][-2:] == ["citations", "done"] and events[-2][1]


def test_answer_bad_input_is_400(client: TestClient) -> None:
    r = client.post("/v1/answer", json={"query": ""}, headers=A)
    assert r.status_code == 400 and r.json()["error"]["field"]
    assert client.post("/v1/answer", json={"query": "x"}).status_code == 401


def test_answer_session_is_recorded_and_scoped_by_tenant(client: TestClient) -> None:
    client.app.state.answer_llm = ScriptedLLM([search_call("AnySearch 价格"), "专业版每月 99 元 [1]。"])
    r = client.post("/v1/answer", json={"query": "AnySearch 专业版多少钱？", "session_id": "s1"}, headers=A)
    assert r.status_code == 200
    msgs = client.get("/v1/sessions/s1/messages", headers=A).json()["messages"]
    assert [x["role"] for x in msgs] == ["user", "assistant"]
    assert client.get("/v1/sessions/s1/messages", headers=B).json()["messages"] == []
    seen: list[str] = []

    def record(msgs: list[dict[str, Any]], tools: Any) -> str:
        seen.append(json.dumps(msgs, ensure_ascii=False))
        return "不知道。"

    client.app.state.answer_llm = ScriptedLLM([record])
    client.post("/v1/answer", json={"query": "那免费版呢？", "session_id": "s1"}, headers=B)
    assert "99" not in seen[0]  # tenant beta never sees acme's session


def test_mcp_answer_tool(bm25_index) -> None:
    import asyncio
    from types import SimpleNamespace

    pytest.importorskip("mcp")
    from mcp import Client

    from convsearch.server.answer import answers_for
    from convsearch.server.mcp import build_mcp
    from convsearch.server.service import Service

    service = Service(Settings.from_env({}, dense="off", rate_limit=0), backend=bm25_index, store=InMemoryStore())
    answers_for(service).state = SimpleNamespace(
        answer_llm=ScriptedLLM([search_call("深圳 露营 天气"), "深圳最近三天多云转晴，适合露营 [1]。"]))

    async def go() -> Any:
        async with Client(build_mcp(service)) as c:
            return await c.call_tool("answer", {"query": "深圳最近三天适合露营吗？", "session_id": "m1"})

    res = asyncio.run(go())
    assert not res.is_error, res
    out = res.structured_content
    assert out["text"].endswith("[1]。") and out["citations"][0]["url"] == "https://weather.example/shenzhen"
    assert out["session_id"] == "m1"


def test_compare_raw_and_rewritten(client: TestClient) -> None:
    r = client.post("/v1/compare", json={"original": "价格呢？", "rewritten": "AnySearch 的价格"}, headers=A)
    assert r.status_code == 200, r.text
    c = r.json()
    assert c["rewritten_ids"][0] == "zh-any-price"
    assert c["keyword_hit_gain"] == c["rewritten_keyword_hits"] - c["original_keyword_hits"]
    assert c["keyword_hit_gain"] > 0
    assert client.post("/v1/compare", json={"original": "", "rewritten": "x"}, headers=A).status_code == 400
