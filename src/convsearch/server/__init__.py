"""Serve convsearch to agents: the HTTP API (``create_app``), the MCP server and the web playground.

Needs the ``[server]`` extra (FastAPI, uvicorn, the MCP SDK, prometheus_client); ``require()`` says so plainly
when it is missing.
"""

from __future__ import annotations

import os
from typing import Any

from ..config import Settings
from ..errors import ConfigError
from .settings import ServerSettings


def require() -> None:
    """ConfigError naming the extra to install when the server's dependencies are missing."""
    for mod in ("fastapi", "uvicorn", "mcp", "prometheus_client"):
        try:
            __import__(mod)
        except ImportError as exc:
            raise ConfigError(f"the server needs the [server] extra ({mod} is missing): "
                              "pip install 'convsearch[server]'") from exc


def serve(settings: Settings, *, workers: int = 1, log_level: str = "info") -> None:
    """Run the HTTP API with uvicorn on CONVSEARCH_SERVER_HOST:PORT until interrupted.

    With ``workers > 1`` each worker process builds its own app from the environment, which is given every one of
    ``settings`` first (flags and settings made in code included: ``Settings.to_env``); rate limits and caches are
    then per process."""
    require()
    import uvicorn

    from .app import check_bind, create_app
    from .service import Service

    service = Service(settings)
    check_bind(settings, service)
    conf = ServerSettings.of(settings)
    kw: dict[str, Any] = dict(host=conf.host, port=conf.port, log_level=log_level,
                              proxy_headers=False, server_header=False)
    if workers > 1:
        service.close()
        os.environ.update(settings.to_env())  # the workers read Settings.from_env(): every setting reaches them
        uvicorn.run("convsearch.server.app:create_served_app", factory=True, workers=workers, **kw)
    else:
        uvicorn.run(create_app(settings, service=service, warm=True), **kw)


def serve_mcp_stdio(settings: Settings) -> None:
    """The MCP tools over stdin/stdout (``convsearch mcp``)."""
    require()
    from ..warmup import freeze_heap, warm_up
    from .mcp import run_stdio
    from .service import Service

    service = Service(settings)
    # the rule path only: a client starts this process per session and waits for the handshake, and a search of
    # the backend here could be a paid web query on every launch
    warm_up(settings)
    freeze_heap()
    run_stdio(service)


__all__ = ["require", "serve", "serve_mcp_stdio"]
