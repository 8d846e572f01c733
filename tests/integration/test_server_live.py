"""The server as a real process (``convsearch serve`` on a free loopback port, SQLite history in its data
dir): REST over HTTP, per-tenant limits from a keys file, and MCP driven by the SDK's own client over
streamable HTTP and over stdio (``convsearch mcp``)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
import httpx  # noqa: E402

from convsearch.backends.local import LocalIndex  # noqa: E402
from convsearch.testing.live_server import LiveServer  # noqa: E402

pytestmark = pytest.mark.integration

KEYS_TOML = """
[tenants.acme]
keys = ["key-acme"]

[tenants.beta]
keys = ["key-beta"]

[tenants.slow]
keys = ["key-slow"]
rate = 0.05
burst = 2
"""
A = {"Authorization": "Bearer key-acme"}
B = {"X-API-Key": "key-beta"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, corpus) -> Path:
    d = tmp_path_factory.mktemp("served")
    LocalIndex(d / "index", embedder=None).add(corpus)
    (d / "keys.toml").write_text(KEYS_TOML, encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def server(data_dir: Path) -> Iterator[LiveServer]:
    with LiveServer(data_dir, env={"CONVSEARCH_API_KEYS_FILE": str(data_dir / "keys.toml"),
                                   "CONVSEARCH_RATE_LIMIT": "0"}) as srv:
        yield srv


def test_search_and_sessions_over_http(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        c.post("/v1/search", json={"query": "Who founded SpaceX?", "session_id": "live-1"}, headers=A)
        r = c.post("/v1/search", json={"query": "When did it first launch a rocket?", "session_id": "live-1"},
                   headers=A)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["standalone_query"] == "When did SpaceX first launch a rocket?"
        assert body["results"][0]["id"] == "en-spacex-launch"
        assert r.headers["x-request-id"]
        msgs = c.get("/v1/sessions/live-1/messages", headers=A).json()["messages"]
        assert [m["content"] for m in msgs] == ["Who founded SpaceX?", "When did it first launch a rocket?"]
        assert c.get("/v1/sessions/live-1/messages", headers=B).json()["messages"] == []
        assert c.post("/v1/search", json={"query": "x"}).status_code == 401
        assert "convsearch_http_requests_total" in c.get("/metrics").text
        assert c.get("/openapi.json").json()["info"]["title"] == "convsearch"


def test_per_tenant_rate_from_the_keys_file(server: LiveServer) -> None:
    slow = {"Authorization": "Bearer key-slow"}
    with httpx.Client(base_url=server.url, timeout=30) as c:
        codes = [c.post("/v1/rewrite", json={"query": "hi"}, headers=slow).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        r = c.post("/v1/rewrite", json={"query": "hi"}, headers=slow)
        assert r.status_code == 429 and 1 <= int(r.headers["retry-after"]) <= 20
        assert r.json()["error"]["code"] == "rate_limited"
        assert c.post("/v1/rewrite", json={"query": "hi"}, headers=A).status_code == 200  # others unaffected


def _mcp_http(url: str, headers: dict[str, str], calls: list[tuple[str, dict]]) -> list[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def go() -> list[Any]:
        async with httpx2.AsyncClient(headers=headers, timeout=30) as hc:
            async with Client(streamable_http_client(url + "/mcp", http_client=hc)) as c:
                out = [await c.list_tools()]
                for name, args in calls:
                    out.append(await c.call_tool(name, args))
                return out

    return asyncio.run(go())


def test_mcp_over_streamable_http_acts_for_the_keys_tenant(server: LiveServer) -> None:
    calls = [("search", {"query": "深圳最近三天适合露营吗？", "session_id": "mcp-1"}),
             ("search", {"query": "那番禺呢？", "session_id": "mcp-1"})]
    tools, first, second = _mcp_http(server.url, A, calls)
    assert {t.name for t in tools.tools} == {"search", "rewrite", "answer"}
    assert not first.is_error and not second.is_error
    assert second.structured_content["standalone_query"] == "番禺最近三天适合露营吗"
    with httpx.Client(base_url=server.url, timeout=30) as c:
        assert len(c.get("/v1/sessions/mcp-1/messages", headers=A).json()["messages"]) == 2
        assert c.get("/v1/sessions/mcp-1/messages", headers=B).json()["messages"] == []
    # beta, same session id over MCP: its own empty conversation, so no rewrite from acme's turns
    (_, beta) = _mcp_http(server.url, B, [("rewrite", {"query": "那番禺呢？", "session_id": "mcp-1"})])
    assert beta.structured_content["standalone_query"] == "那番禺呢？"


def test_mcp_over_http_needs_a_key(server: LiveServer) -> None:
    r = httpx.post(server.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"


def test_mcp_over_stdio_with_the_cli(data_dir: Path) -> None:
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    env.update(CONVSEARCH_DENSE="off", PYTHONUTF8="1")
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "convsearch.cli", "mcp", "--data-dir", str(data_dir),
                                         "--tenant", "desk"])

    async def go() -> tuple[Any, Any, Any]:
        async with Client(params) as c:
            tools = await c.list_tools()
            await c.call_tool("search", {"query": "AnySearch 支持哪些检索方式？", "session_id": "stdio-1"})
            r = await c.call_tool("search", {"query": "价格呢？", "session_id": "stdio-1"})
            bad = await c.call_tool("rewrite", {"query": ""})
            return tools, r, bad

    tools, r, bad = asyncio.run(go())
    assert {t.name for t in tools.tools} == {"search", "rewrite", "answer"}
    assert r.structured_content["standalone_query"] == "AnySearch 的价格"
    assert r.structured_content["results"][0]["id"] == "zh-any-price"
    assert bad.is_error and "Traceback" not in bad.content[0].text
    # the stdio server acted for tenant "desk": its turns are in the same SQLite store, under that tenant
    from convsearch.config import Settings
    from convsearch.history import Scope, open_store

    store = open_store(Settings.from_env({}, data_dir=data_dir))
    try:
        assert len(store.messages(Scope("desk", "default", "stdio-1"))) == 2
        assert store.messages(Scope("acme", "default", "stdio-1")) == []
    finally:
        store.close()
