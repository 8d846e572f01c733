"""The MCP tools driven in process by the SDK's own client (``mcp.Client(server)``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("mcp")
from mcp import Client  # noqa: E402

from convsearch.config import Settings  # noqa: E402
from convsearch.history import InMemoryStore  # noqa: E402
from convsearch.server.auth import Tenant  # noqa: E402
from convsearch.server.mcp import build_mcp  # noqa: E402
from convsearch.server.service import Service  # noqa: E402


@pytest.fixture
def service(bm25_index) -> Service:
    return Service(Settings.from_env({}, dense="off", rate_limit=0), backend=bm25_index, store=InMemoryStore())


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_lists_search_and_rewrite_with_schemas(service: Service) -> None:
    async def go() -> Any:
        async with Client(build_mcp(service)) as c:
            return (await c.list_tools()).tools

    tools = {t.name: t for t in run(go())}
    assert set(tools) == {"search", "rewrite", "answer"}
    props = tools["search"].input_schema["properties"]
    assert {"query", "session_id", "messages", "topic", "top_k", "recency"} <= set(props)
    assert tools["search"].input_schema["required"] == ["query"]
    assert "standalone_query" in tools["search"].output_schema["properties"]


def test_search_in_a_session_rewrites_the_follow_up(service: Service) -> None:
    async def go() -> tuple[Any, Any, Any]:
        async with Client(build_mcp(service)) as c:
            a = await c.call_tool("search", {"query": "深圳最近三天适合露营吗？", "session_id": "m1"})
            r = await c.call_tool("rewrite", {"query": "那番禺呢？", "session_id": "m1"})
            b = await c.call_tool("search", {"query": "那番禺呢？", "session_id": "m1"})
            return a, b, r

    a, b, r = run(go())
    assert not a.is_error and a.structured_content["rewrite"]["method"] == "gate"
    assert not b.is_error
    assert b.structured_content["standalone_query"] == "番禺最近三天适合露营吗"
    assert b.structured_content["results"][0]["id"] == "zh-camp-py"
    assert r.structured_content["standalone_query"] == "番禺最近三天适合露营吗"
    from convsearch.history import Scope

    stored = service.store().messages(Scope("local", "default", "m1"))
    assert [m.content for m in stored] == ["深圳最近三天适合露营吗？", "那番禺呢？"]  # rewrite stores nothing


def test_messages_argument_and_english(service: Service) -> None:
    async def go() -> Any:
        async with Client(build_mcp(service)) as c:
            return await c.call_tool("rewrite", {"query": "When did it first launch a rocket?", "messages": [
                {"role": "user", "content": "Who founded SpaceX?"}]})

    r = run(go())
    assert r.structured_content["standalone_query"] == "When did SpaceX first launch a rocket?"


@pytest.mark.parametrize("args,needle", [({"query": "   "}, "query"), ({}, "query"),
                                         ({"query": "x", "top_k": 0}, "top_k"),
                                         ({"query": "x", "recency": "hour"}, "recency")])
def test_bad_arguments_are_tool_errors_without_traceback(service: Service, args: dict, needle: str) -> None:
    async def go() -> Any:
        async with Client(build_mcp(service)) as c:
            return await c.call_tool("search", args)

    r = run(go())
    assert r.is_error
    text = r.content[0].text
    assert needle in text and "Traceback" not in text


def test_tenants_from_the_transport_are_isolated(service: Service) -> None:
    async def go() -> tuple[Any, Any]:
        acme = build_mcp(service, tenant_of=lambda ctx: Tenant("acme"))
        beta = build_mcp(service, tenant_of=lambda ctx: Tenant("beta"))
        async with Client(acme) as a, Client(beta) as b:
            await a.call_tool("search", {"query": "AnySearch 支持哪些检索方式？", "session_id": "s"})
            ra = await a.call_tool("rewrite", {"query": "价格呢？", "session_id": "s"})
            rb = await b.call_tool("rewrite", {"query": "价格呢？", "session_id": "s"})
            return ra, rb

    ra, rb = run(go())
    assert ra.structured_content["standalone_query"] == "AnySearch 的价格"
    assert rb.structured_content["standalone_query"] == "价格呢？"  # beta's session "s" is empty


def test_backend_failure_is_a_short_tool_error(bm25_index) -> None:
    from convsearch.backends.base import InMemoryBackend
    from convsearch.errors import BackendError

    class Broken(InMemoryBackend):
        def search(self, query: str, **kw: Any) -> list:
            raise BackendError("disk /secret/path on fire")

    svc = Service(Settings.from_env({}, dense="off"), backend=Broken(), store=InMemoryStore())

    async def go() -> Any:
        async with Client(build_mcp(svc)) as c:
            return await c.call_tool("search", {"query": "x"})

    r = run(go())
    assert r.is_error and "backend_error" in r.content[0].text and "/secret/path" not in r.content[0].text


def test_search_takes_backends_and_leaves_recency_to_the_default_window_when_not_given(corpus) -> None:
    """MCP used to send recency="no_limit" on every call, so a time-sensitive question never got the web
    default window there; and it could not name backends as /v1/search can."""
    from convsearch.backends.fanout import FanOut
    from convsearch.testing.backends import ScriptedBackend

    kb, web = ScriptedBackend("kb", corpus), ScriptedBackend("web", corpus, web=True)
    svc = Service(Settings.from_env({}, dense="off", rate_limit=0), backend=FanOut([kb, web]),
                  store=InMemoryStore())

    async def go(args: dict) -> Any:
        async with Client(build_mcp(svc)) as c:
            return await c.call_tool("search", args)

    r = run(go({"query": "AnySearch 现在的价格是多少？", "backends": ["web"]}))
    assert not r.is_error and [b["backend"] for b in r.structured_content["trace"]["backends"]] == ["web"]
    assert not kb.calls and web.calls and None not in {c.recency for c in web.calls}  # the default window
    web.calls.clear()
    r = run(go({"query": "AnySearch 现在的价格是多少？", "backends": ["web"], "recency": "no_limit"}))
    assert not r.is_error and {c.recency for c in web.calls} == {None}  # the caller's choice: no window
    r = run(go({"query": "SpaceX", "backends": ["nope"]}))
    assert r.is_error and "unknown backend(s) 'nope'" in r.content[0].text
