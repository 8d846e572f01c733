"""The MCP server (official ``mcp`` SDK): tools ``search``, ``rewrite`` and ``answer`` (the search agent), the
session id as an argument.

Two transports:

- **stdio**: ``convsearch mcp`` (for desktop agents that start the server themselves); it acts for the tenant
  ``CONVSEARCH_MCP_TENANT`` (default ``local``), no key needed: whoever can start the process owns it.
- **streamable HTTP**: ``/mcp`` on the HTTP API (``convsearch serve``); every request carries an API key
  (``Authorization: Bearer KEY`` or ``X-API-Key``) and the tools act for that key's tenant, with the same
  rate limit, caches and history as the REST API.

Tool failures come back as ``is_error`` results whose text names the problem (``invalid_request: query: …``),
never a traceback.
"""

# No ``from __future__ import annotations``: the SDK reads these signatures' real types (Context injection).

import logging
from collections.abc import Callable
from typing import Literal

from pydantic import ValidationError

from ..errors import ConvsearchError
from . import models as m
from .auth import Tenant
from .errors import CODES, plain_problem, server_message
from .service import Service

log = logging.getLogger("convsearch.server")

INSTRUCTIONS = (
    "Search that understands follow-ups. Pass the user's latest message as typed (e.g. '价格呢？', 'When did it "
    "launch?') with a session_id: the conversation stored under that id (or the messages you pass) turns it "
    "into a standalone query. Results are numbered [n] and the context string is ready to quote.")


def plain_log_lines() -> None:
    """When stderr is not a terminal (a file, journald, a container log), log records are written one per
    line, never wrapped: the MCP SDK otherwise installs rich's handler on the root logger, which wraps at 80
    columns when it cannot measure a terminal. On a terminal the SDK's handler stays."""
    import sys

    root = logging.getLogger()
    if root.handlers or sys.stderr.isatty():
        return
    h = logging.StreamHandler()
    h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(h)
    root.setLevel(logging.WARNING)


def _tool_error(exc: Exception) -> Exception:
    from mcp.server.mcpserver.exceptions import ToolError

    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first.get("loc", ())) or "arguments"
        return ToolError(f"invalid_request: {field}: {plain_problem(first)}")
    if isinstance(exc, ConvsearchError):
        status = int(exc.http_status)
        text = str(exc) if status < 500 else server_message(exc, status)
        return ToolError(f"{CODES.get(status, 'error')}: {text}")
    log.error("MCP tool failed", exc_info=(type(exc), exc, exc.__traceback__))
    return ToolError("internal: internal error")


def build_mcp(service: Service, *, transport: Literal["stdio", "http"] = "stdio",
              tenant_of: Callable[[object], Tenant] | None = None):
    """An ``MCPServer`` with the ``search`` and ``rewrite`` tools over ``service``.

    ``transport`` picks how a call finds its tenant: stdio → ``CONVSEARCH_MCP_TENANT``; http → the API key in
    the request headers. ``tenant_of(ctx)`` overrides both (tests).
    """
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context

    if tenant_of is None:
        if transport == "stdio":
            fixed = Tenant(service.server.mcp_tenant)

            def tenant_of(ctx: object) -> Tenant:
                return fixed
        else:
            def tenant_of(ctx: object) -> Tenant:
                return service.keys.resolve_headers(getattr(ctx, "headers", None) or {})

    plain_log_lines()  # before the SDK's basicConfig, which then leaves the root logger as it is
    server = MCPServer("convsearch", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING")
    calls = service.metrics.mcp_calls

    @server.tool(name="search", structured_output=True)
    async def search(query: m.Query, ctx: Context, session_id: m.SessionId | None = None,
                     messages: list[m.MessageIn] | None = None, topic: m.Topic | None = None, top_k: int = 5,
                     recency: m.Recency | None = None, lang: Literal["zh", "en"] | None = None,
                     backends: list[m.BackendName] | None = None) -> m.SearchOut:
        """Search with conversational context: rewrite the user's latest message into a standalone query
        (from the session's stored history or the given messages), search, and return numbered, deduplicated
        results with a ready-to-quote context string. The turn is recorded in the session. recency not given:
        a time-sensitive question searched on web backends gets a default window; backends: only these of the
        server's backends."""
        try:
            t = tenant_of(ctx)
            given = {k: v for k, v in (("recency", recency), ("backends", backends)) if v is not None}
            req = m.SearchRequest(query=query, session_id=session_id, messages=messages or [], topic=topic,
                                  top_k=top_k, lang=lang, **given)
            out = await service.asearch(t, req)
        except Exception as exc:
            calls.labels("search", "error").inc()
            raise _tool_error(exc) from None
        calls.labels("search", "ok").inc()
        return out

    @server.tool(name="rewrite", structured_output=True)
    async def rewrite(query: m.Query, ctx: Context, session_id: m.SessionId | None = None,
                      messages: list[m.MessageIn] | None = None, topic: m.Topic | None = None) -> m.RewriteOut:
        """Rewrite the user's latest message into a standalone search query, from the session's stored
        history or the given messages; says how and why (method, reason, fell_back). Nothing is stored."""
        try:
            t = tenant_of(ctx)
            req = m.RewriteRequest(query=query, session_id=session_id, messages=messages or [], topic=topic)
            out = await service.arewrite(t, req)
        except Exception as exc:
            calls.labels("rewrite", "error").inc()
            raise _tool_error(exc) from None
        calls.labels("rewrite", "ok").inc()
        return out

    from .answer import AnswerOut, AnswerRequest, answer_out, answer_request

    @server.tool(name="answer", structured_output=True)
    async def answer(query: m.Query, ctx: Context, session_id: m.SessionId | None = None,
                     messages: list[m.MessageIn] | None = None) -> AnswerOut:
        """Ask the search agent: it searches (several searches at once when the question has parts), reads the
        numbered results and answers citing them as [n]; with session_id the stored conversation is the context
        and the answer is recorded. Without a working LLM the answer is the best results as a numbered list."""
        try:
            t = tenant_of(ctx)
            req = AnswerRequest(query=query, session_id=session_id, messages=messages or [])
            out = answer_out(await answer_request(service, t, req), session_id)
        except Exception as exc:
            calls.labels("answer", "error").inc()
            raise _tool_error(exc) from None
        calls.labels("answer", "ok").inc()
        return out

    return server


def _version() -> str:
    from .. import __version__

    return __version__


def run_stdio(service: Service) -> None:
    """Serve the MCP tools over stdin/stdout until the client closes them."""
    build_mcp(service, transport="stdio").run("stdio")


__all__ = ["INSTRUCTIONS", "build_mcp", "run_stdio"]
