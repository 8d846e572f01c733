"""The plumbing the loopback test servers share (``embed_server``, ``rerank_server``, ``openai_server``,
``web_replay``): a threaded HTTP server on a free port that starts and stops cleanly, and a quiet request
handler that reads a request body and writes a reply with its length.

Each server keeps its own API, checks and error shapes; only what is the same in all of them lives here.

    class MyServer(LoopbackServer):
        def __init__(self) -> None:
            super().__init__(_handler_class(self), name="my-server")
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threaded server whose handler threads never hold up exit; ``backlog`` is the listen queue (many
    clients connecting at once must not overflow it)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler_class: type[BaseHTTPRequestHandler], *,
                 backlog: int = 256) -> None:
        self.request_queue_size = backlog  # read by server_activate(), which the base __init__ calls
        super().__init__(address, handler_class)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that gave up (its timeout) is not a server error
        super().handle_error(request, client_address)


class LoopbackServer:
    """Start and stop on a free loopback port: ``with`` (or ``start()`` / ``close()``). ``_stop`` is set on
    close, so handlers sleeping on a scripted delay wake up (``self._stop.wait(seconds)`` is True then)."""

    def __init__(self, handler_class: type[BaseHTTPRequestHandler], *, name: str, host: str = "127.0.0.1",
                 backlog: int = 256) -> None:
        self._stop = threading.Event()
        self._httpd = LoopbackHTTPServer((host, 0), handler_class, backlog=backlog)
        self._thread: threading.Thread | None = None
        self._thread_name = name

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=self._thread_name, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening (a client then gets connection refused). Idempotent."""
        if self._stop.is_set():
            return
        self._stop.set()  # wakes handlers sleeping on a delay
        if self._thread is not None:  # shutdown() waits for serve_forever, which never ran without start()
            self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def root_url(self) -> str:
        """``http://host:port``, no path."""
        host, port = self._httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{name}:{port}"

    @property
    def base_url(self) -> str:
        """What a client is pointed at (the root here; a server whose API lives under a path adds it)."""
        return self.root_url


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no access log (tests read the server's recorded requests instead)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: with Nagle on, delayed ACKs add ~40 ms

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def read_body(self) -> bytes:
        """The request body (``Content-Length`` bytes; none without it)."""
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def respond(self, status: int, body: bytes | str, headers: Iterable[tuple[str, str]] = (), *,
                content_type: str | None = "application/json") -> None:
        """One reply with its ``Content-Length`` (``content_type`` None: it is among ``headers``, or none is
        sent); a client that has hung up is not an error."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        try:
            self.send_response(status)
            if content_type is not None:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): nothing to do


def serve_until_stdin_closes(server: LoopbackServer) -> None:
    """Run ``server`` until stdin closes (or Ctrl-C), printing ``READY <base_url>`` once listening: how a
    benchmark runs a server in its own process, so the server's work is not counted as the client's."""
    with server:
        print(f"READY {server.base_url}", flush=True)
        try:
            sys.stdin.read()
        except KeyboardInterrupt:
            pass


__all__ = ["LoopbackHTTPServer", "LoopbackServer", "QuietHandler", "serve_until_stdin_closes"]
