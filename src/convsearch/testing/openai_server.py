"""A scripted OpenAI-compatible chat-completions server on loopback (stdlib only).

For tests and benchmarks of the LLM path: it speaks just enough of the API for the official ``openai`` SDK
(``POST /v1/chat/completions``, ``GET /v1/models``), records every request it receives, counts requests in
flight, and answers from a script:

- a queue of ``Reply`` objects (first in, first out), then
- ``responder(request_json) -> Reply`` for everything else (default: echo the last user message).

``Reply`` covers what a real provider does on a bad day: text, tool calls, delays past the client's timeout,
HTTP 429 / 500 (with ``Retry-After``), a malformed JSON body, and empty content.

Example::

    with FakeOpenAIServer() as srv:
        srv.push(Reply.of("AnySearch 的价格"), Reply.status(429, retry_after=0.05))
        client = OpenAILLM(LLMConfig(base_url=srv.base_url, model="fake"))
        ...
        srv.requests[0]["json"]["messages"]
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``kind``: text | tool_call | status | malformed | empty."""

    kind: str = "text"
    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    tool_name: str = ""
    tool_args: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None

    @classmethod
    def of(cls, text: str, *, delay_s: float = 0.0) -> "Reply":
        """A plain text answer."""
        return cls("text", text=text, delay_s=delay_s)

    @classmethod
    def json(cls, obj: Any, *, delay_s: float = 0.0) -> "Reply":
        """Content that is the JSON encoding of ``obj`` (structured output)."""
        return cls("text", text=json.dumps(obj, ensure_ascii=False), delay_s=delay_s)

    @classmethod
    def tool_call(cls, name: str, args: Any, *, delay_s: float = 0.0) -> "Reply":
        raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        return cls("tool_call", tool_name=name, tool_args=raw, delay_s=delay_s)

    @classmethod
    def error(cls, status: int, *, retry_after: float | None = None, message: str = "scripted error",
              delay_s: float = 0.0) -> "Reply":
        headers = (("Retry-After", f"{retry_after:g}"),) if retry_after is not None else ()
        return cls("status", status=status, headers=headers, delay_s=delay_s,
                   body=json.dumps({"error": {"message": message, "type": "scripted", "code": status}}))

    @classmethod
    def malformed(cls, *, delay_s: float = 0.0) -> "Reply":
        return cls("malformed", body='{"id": "chatcmpl-x", "choices": [{"message": {"content": "unterminated',
                   delay_s=delay_s)

    @classmethod
    def empty(cls, *, delay_s: float = 0.0) -> "Reply":
        return cls("empty", delay_s=delay_s)

    def after(self, delay_s: float) -> "Reply":
        """The same reply, sent ``delay_s`` seconds late."""
        from dataclasses import replace

        return replace(self, delay_s=delay_s)


def echo_last_user(request: dict[str, Any]) -> Reply:
    """Default responder: the last user message, unchanged (a model that finds every query standalone)."""
    for m in reversed(request.get("messages", [])):
        if m.get("role") == "user":
            content = m.get("content")
            return Reply.of(content if isinstance(content, str) else json.dumps(content))
    return Reply.of("")


@dataclass
class _State:
    queue: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeOpenAIServer:
    """The server; start/stop with ``with`` (or ``start()`` / ``close()``)."""

    def __init__(self, responder: Callable[[dict[str, Any]], Reply] = echo_last_user, *, latency_s: float = 0.0,
                 api_key: str | None = None, host: str = "127.0.0.1") -> None:
        self.responder = responder
        self.latency_s = latency_s  # added to every reply's own delay
        self.api_key = api_key      # when set, other keys get 401
        self._state = _State()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer((host, 0), _handler_class(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- lifecycle ---
    def start(self) -> "FakeOpenAIServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()  # wakes handlers sleeping on a scripted delay
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- script and records ---
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def push(self, *replies: Reply) -> None:
        with self._state.lock:
            self._state.queue.extend(replies)

    def reset(self) -> None:
        with self._state.lock:
            self._state.queue.clear()
            self._state.requests.clear()
            self._state.max_in_flight = self._state.in_flight

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat-completions request received: ``{"path", "headers", "json", "t"}``, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def max_in_flight(self) -> int:
        return self._state.max_in_flight

    def messages(self, i: int = -1) -> list[dict[str, Any]]:
        """The ``messages`` of request ``i``."""
        return self.requests[i]["json"]["messages"]

    # --- used by the handler ---
    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._state.lock:
            if self._state.queue:
                return self._state.queue.popleft()
        return self.responder(request)

    def _enter(self, record: dict[str, Any]) -> None:
        with self._state.lock:
            self._state.requests.append(record)
            self._state.in_flight += 1
            self._state.max_in_flight = max(self._state.max_in_flight, self._state.in_flight)

    def _leave(self) -> None:
        with self._state.lock:
            self._state.in_flight -= 1

    def _sleep(self, seconds: float) -> bool:
        """Sleep, unless the server is closing; True when the sleep ran its course."""
        return not self._stop.wait(seconds) if seconds > 0 else True


def _completion(model: str, *, content: str | None, tool: tuple[str, str] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = "stop"
    if tool is not None:
        message["tool_calls"] = [{"id": "call_1", "type": "function",
                                  "function": {"name": tool[0], "arguments": tool[1]}}]
        finish = "tool_calls"
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def _handler_class(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one reply = two writes; without this, delayed ACKs add 40 ms

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass  # quiet: tests read ``server.requests`` instead

        def _send(self, status: int, body: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
            data = body.encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to do

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}))
            else:
                self._send(404, json.dumps({"error": {"message": "not found"}}))

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            try:
                payload = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, json.dumps({"error": {"message": "request body is not JSON"}}))
                return
            record = {"path": self.path, "headers": dict(self.headers.items()), "json": payload,
                      "t": time.perf_counter()}
            server._enter(record)
            try:
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    # echoes the header it got, as some providers do: clients must scrub it from errors
                    got = self.headers.get("Authorization", "")
                    self._send(401, json.dumps({"error": {"message": f"invalid key in header {got!r}"}}))
                    return
                reply = server._next_reply(payload)
                if not server._sleep(server.latency_s + reply.delay_s):
                    return
                model = str(payload.get("model", "fake"))
                if reply.kind == "status":
                    self._send(reply.status, reply.body or "{}", reply.headers)
                elif reply.kind == "malformed":
                    self._send(200, reply.body or "{", reply.headers)
                elif reply.kind == "empty":
                    self._send(200, json.dumps(_completion(model, content="")), reply.headers)
                elif reply.kind == "tool_call":
                    self._send(200, json.dumps(_completion(model, content=None,
                                                           tool=(reply.tool_name, reply.tool_args))), reply.headers)
                else:
                    self._send(200, json.dumps(_completion(model, content=reply.text), ensure_ascii=False),
                               reply.headers)
            finally:
                server._leave()

    return Handler


__all__ = ["FakeOpenAIServer", "Reply", "echo_last_user"]
