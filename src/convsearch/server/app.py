"""The HTTP API: ``create_app(settings)`` builds a FastAPI app over a :class:`~convsearch.server.service.Service`.

    POST /v1/search                      one turn: standalone query (+ why), variants, cited results, context, trace
    POST /v1/rewrite                     the standalone query only
    POST /v1/sessions/{id}/messages      append messages (an assistant reply citing [n] marks those results cited)
    GET  /v1/sessions/{id}/messages      a session's stored messages and summary
    GET  /v1/tools                       OpenAI function-calling schema (``web_search``)
    POST /v1/answer                      the search agent: an answer citing [n], sources, searches (JSON or SSE)
    POST /v1/chat/completions            the search agent behind the OpenAI chat protocol (``server/chat.py``)
    GET  /v1/models                      the agent profiles as OpenAI models
    GET  /healthz   GET /metrics   GET /openapi.json   GET / (playground)   /mcp (MCP, streamable HTTP)

Every ``/v1`` and ``/mcp`` request needs an API key (see ``convsearch.server.auth``) unless the server runs
open; errors are mapped in ``convsearch.server.errors``.

>>> app = create_app(Settings.from_env())          # uvicorn.run(app) or `convsearch serve`
"""


import contextlib
import ipaddress
import itertools
import secrets
import time
from collections.abc import AsyncIterator
from pathlib import Path as FsPath
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from .. import __version__
from ..config import AutoSwitch, Settings
from ..errors import BodyTooLarge, ConfigError, ConvsearchError
from ..warmup import freeze_heap
from . import errors as errmap
from . import models as m
from .auth import Tenant
from .service import Service
from .settings import ServerSettings
from .tools import openai_tools

STATIC = FsPath(__file__).parent / "static"
# The playground builds its DOM with textContent only; this policy forbids inline script and any other origin.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
       "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_ERR = {"model": m.ErrorBody}
_COMMON = {400: {**_ERR, "description": "Bad input; `field` names the request field at fault"},
           401: {**_ERR, "description": "Missing or unknown API key"},
           404: {**_ERR, "description": "No index yet, or no such route"},
           413: {**_ERR, "description": "Request body over CONVSEARCH_MAX_BODY_BYTES, or a message over the store's limit"},
           429: {**_ERR, "description": "Over the tenant's request rate; see Retry-After",
                 "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds"}}},
           500: {**_ERR, "description": "Server misconfigured or a bug (the body carries a request id, no details)"},
           502: {**_ERR, "description": "The search backend failed"},
           503: {**_ERR, "description": "The history store is unavailable"},
           504: {**_ERR, "description": "The request ran past CONVSEARCH_DEADLINE_S"}}
_SESSIONS = {**_COMMON, 409: {**_ERR, "description": "A client message (or turn) id reused for a different message"}}


SECURITY_SCHEMES = {
    "HTTPBearer": {"type": "http", "scheme": "bearer", "description": "API key as a bearer token"},
    "APIKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "API key"},
}


class _Edge:
    """Outermost ASGI layer: request id, request body limit (413), request metrics."""

    def __init__(self, app: Any, *, service: Service) -> None:
        self.app = app
        self.max_body = service.server.max_body_bytes
        self.metrics = service.metrics
        # request ids: a random per-process prefix and a counter (os.urandom per request costs ~0.6 ms on
        # some VMs; these ids only need to be unique, not secret)
        self.prefix = secrets.token_hex(4)
        self.counter = itertools.count(1)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = f"{self.prefix}{next(self.counter):08x}"
        scope.setdefault("state", {})["request_id"] = rid
        status = 500
        started = False
        t0 = time.perf_counter()
        self.metrics.in_flight.inc()

        async def send_wrapper(message: dict) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                status, started = message["status"], True
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"x-request-id" for k, _ in headers):
                    message["headers"] = [*headers, (b"x-request-id", rid.encode())]
            await send(message)

        received = 0

        async def limited_receive() -> dict:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise BodyTooLarge(f"request body is over {self.max_body:,} bytes (CONVSEARCH_MAX_BODY_BYTES)")
            return message

        try:
            declared = _content_length(scope)
            if declared is not None and declared > self.max_body:
                exc = BodyTooLarge(f"request body is {declared:,} bytes; the limit is {self.max_body:,} "
                                   "(CONVSEARCH_MAX_BODY_BYTES)")
                await errmap.error_response(exc, rid, openai=errmap.is_openai_path(scope.get("path", "")))(
                    scope, receive, send_wrapper)
                return
            try:
                await self.app(scope, limited_receive, send_wrapper)
            except BodyTooLarge as exc:  # raised from receive inside an app that did not handle it
                if started:
                    raise
                await errmap.error_response(exc, rid, openai=errmap.is_openai_path(scope.get("path", "")))(
                    scope, receive, send_wrapper)
        finally:
            self.metrics.in_flight.dec()
            route = getattr(scope.get("route"), "path", None) or ("/mcp" if scope.get("path") == "/mcp" else "unmatched")
            self.metrics.requests.labels(route, scope.get("method", ""), str(status)).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - t0)


def _content_length(scope: dict) -> int | None:
    for k, v in scope.get("headers", ()):
        if k == b"content-length":
            try:
                return int(v)
            except ValueError:
                return None
    return None


class _McpGate:
    """The API key check (401) and rate limit (429) in front of the MCP endpoint."""

    def __init__(self, app: Any, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        from starlette.datastructures import Headers

        try:
            t = self.service.keys.resolve_headers(Headers(scope=scope))
            self.service.admit(t)
        except ConvsearchError as exc:
            await errmap.error_response(exc, scope.get("state", {}).get("request_id", "-"))(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def create_app(settings: Settings | None = None, *, service: Service | None = None, mcp: bool = True,
               warm: bool = False, **service_kw: Any) -> FastAPI:
    """The FastAPI app for ``settings`` (default ``Settings.from_env()``).

    ``service`` (or ``service_kw`` for a new one: ``backend``, ``store``, ``keys``, ``limiter``,
    ``rewriter_factory``, ``today``) lets tests inject doubles; ``mcp=False`` leaves out ``/mcp``.
    ``warm=True`` (``convsearch serve``) loads the dictionaries and the index at startup, then freezes the
    garbage collector's view of them (``warmup.freeze_heap``: ``gc.freeze`` once per process), so full
    collections stop walking them (see ``convsearch.warmup``). Not for tests: frozen cyclic garbage is never freed.
    """
    settings = settings or Settings.from_env()
    service = service or Service(settings, **service_kw)
    mcp_server = _mcp_app(service) if mcp else None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if mcp_server is not None:
                await stack.enter_async_context(mcp_server.session_manager.run())
            if warm:
                await service.run(service.warm_up)
                freeze_heap()
            try:
                yield
            finally:
                service.close()

    app = FastAPI(title="convsearch", version=__version__, lifespan=lifespan,
                  summary="Search that works inside multi-turn conversations (zh + en).",
                  description="Rewrites conversational follow-ups into standalone search queries and searches; "
                              "every /v1 call needs an API key (Authorization: Bearer KEY, or X-API-Key).")
    app.state.service = service
    errmap.install(app)
    app.add_middleware(_Edge, service=service)

    async def tenant(request: Request) -> Tenant:
        # the key's two spellings are declared in the OpenAPI schema below (SECURITY), not as FastAPI security
        # dependencies: those cost two more dependency solves on every request for a header we read anyway
        t = service.keys.resolve_headers(request.headers)
        service.admit(t)
        return t

    TenantDep = Annotated[Tenant, Depends(tenant)]
    SessionPath = Annotated[str, Path(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$",
                                      description="Conversation id (scoped to your tenant and the agent)")]

    @app.post("/v1/search", response_model=m.SearchOut, responses=_SESSIONS, tags=["search"])
    async def search(req: m.SearchRequest, t: TenantDep) -> Response:
        """One conversational turn: the standalone query (and why), variants, numbered cited results, the
        context string and the trace. With ``session_id`` the stored conversation is the context and the turn
        is recorded in it."""
        return _json(await service.asearch(t, req))

    @app.post("/v1/rewrite", response_model=m.RewriteOut, responses=_COMMON, tags=["search"])
    async def rewrite(req: m.RewriteRequest, t: TenantDep) -> Response:
        """The standalone query for a follow-up, with method, reason and variants (nothing searched or stored)."""
        return _json(await service.arewrite(t, req))

    @app.post("/v1/sessions/{session_id}/messages", response_model=m.MessagesOut, responses=_SESSIONS,
              tags=["sessions"])
    async def add_messages(session_id: SessionPath, req: m.MessagesRequest, t: TenantDep) -> Response:
        """Append messages to a session (idempotent by message ``id``). An assistant reply that cites ``[n]``
        puts those results of the asker's latest turn on the session's task stack."""
        return _json(await service.run(service.add_messages, t, session_id, req))

    @app.get("/v1/sessions/{session_id}/messages", response_model=m.MessagesOut, responses=_SESSIONS,
             tags=["sessions"])
    async def get_messages(session_id: SessionPath, t: TenantDep,
                           agent: Annotated[str, Query(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$")] = "default",
                           limit: Annotated[int | None, Query(ge=1, le=1000)] = None) -> Response:
        """A session's stored messages, oldest first (the last ``limit``), and its rolling summary. An unknown
        session has no messages."""
        return _json(await service.run(service.get_messages, t, session_id, agent, limit))

    @app.get("/v1/tools", tags=["tools"], responses={400: _COMMON[400]})
    async def tools(strict: bool = False) -> list[dict[str, Any]]:
        """Tool definitions for OpenAI-style function calling (``web_search``), from the same models."""
        return openai_tools(strict=strict)

    from .answer import install as install_answer

    install_answer(app, service, tenant)  # POST /v1/answer: the search agent

    from .chat import install as install_chat

    install_chat(app, service, tenant)  # POST /v1/chat/completions, GET /v1/models: the agent for chat clients

    @app.get("/healthz", response_model=m.Health, tags=["ops"])
    async def healthz() -> m.Health:
        """Liveness and the index's state (``degraded`` while no index exists)."""
        return await service.run(service.health)

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        return Response(service.metrics.render(), media_type=service.metrics.content_type)

    @app.get("/", include_in_schema=False)
    async def playground() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers=_page_headers())

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    if mcp_server is not None:
        from starlette.routing import Route

        inner = mcp_server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True,
            max_request_body_size=service.server.max_body_bytes, transport_security=_mcp_security(service, settings),
            host=service.server.host)
        for r in inner.routes:
            if isinstance(r, Route) and r.path == "/mcp":
                app.router.routes.append(Route("/mcp", endpoint=_McpGate(r.app, service),
                                               methods=["GET", "POST", "DELETE"], include_in_schema=False))

    def openapi() -> dict[str, Any]:
        # 400 replaces FastAPI's 422 (one error shape for every failure; see server/errors.py)
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, summary=app.summary,
                                 description=app.description, routes=app.routes)
            for path, ops in schema.get("paths", {}).items():
                for op in ops.values():
                    op.get("responses", {}).pop("422", None)
                    if path.startswith("/v1/") and path != "/v1/tools":
                        op["security"] = [{"HTTPBearer": []}, {"APIKeyHeader": []}]
            schema.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
            for name in ("HTTPValidationError", "ValidationError"):
                schema.get("components", {}).get("schemas", {}).pop(name, None)
            # the backends a request may name are this server's: published as an enum
            backends = schema.get("components", {}).get("schemas", {}).get("SearchRequest", {}) \
                .get("properties", {}).get("backends", {})
            for alt in backends.get("anyOf", []):
                if alt.get("type") == "array":
                    alt["items"]["enum"] = service.backend_names()
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def create_served_app() -> FastAPI:
    """``create_app`` for a uvicorn worker process (``convsearch serve --workers N``): settings from the
    environment, warmed up."""
    return create_app(Settings.from_env(), warm=True)


def _json(model: Any) -> Response:
    """A model as a JSON response, serialised once by pydantic-core. (Returned as a Response, FastAPI does not
    validate and re-encode it against ``response_model``, which stays in the signature for OpenAPI: the
    service already built exactly that model.)"""
    return Response(model.model_dump_json(), media_type="application/json")


def _mcp_app(service: Service) -> Any:
    from .mcp import build_mcp

    return build_mcp(service, transport="http")


def _mcp_security(service: Service, settings: Settings) -> Any:
    """DNS-rebinding protection for an open server on loopback; with API keys the key is the protection."""
    from mcp.server.transport_security import TransportSecuritySettings

    if service.keys.open and _is_loopback(ServerSettings.of(settings).host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                                         allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
    return TransportSecuritySettings(enable_dns_rebinding_protection=False)


def _page_headers() -> dict[str, str]:
    return {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-cache"}


def check_bind(settings: Settings, service: Service) -> None:
    """An open server (no API key configured) listens on loopback only, unless CONVSEARCH_SERVER_AUTH=off."""
    conf = ServerSettings.of(settings)
    if service.keys.open and conf.auth is AutoSwitch.AUTO and not _is_loopback(conf.host):
        raise ConfigError(f"no API key is configured, so the server would be open to anyone at "
                          f"{conf.host}; set CONVSEARCH_API_KEYS or CONVSEARCH_API_KEYS_FILE, or "
                          "CONVSEARCH_SERVER_AUTH=off to serve without keys anyway")


__all__ = ["CSP", "check_bind", "create_app", "create_served_app"]
