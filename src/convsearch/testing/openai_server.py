"""A scripted OpenAI-compatible chat-completions server on loopback (stdlib only).

For tests and benchmarks of the LLM path: it speaks just enough of the API for the official ``openai`` SDK
(``POST /v1/chat/completions``, ``GET /v1/models``), records every request it receives, counts requests in
flight, and answers from a script:

- a queue of ``Reply`` objects (first in, first out), then
- ``responder(request_json) -> Reply`` for everything else (default: echo the last user message).

``Reply`` covers what a real provider does on a bad day: text, tool calls (several in one reply, with or without
text, arguments that are not JSON), token usage (``with_usage``; ``None`` leaves the field out), delays past
the client's timeout, HTTP 429 / 500 (with ``Retry-After``), a malformed JSON body, and empty content.

A request with ``"stream": true`` is answered with server-sent events in the chat.completion.chunk shape: the
text in small deltas, each tool call as deltas (index, id and name first, the arguments split over chunks), the
finish reason, a usage chunk when ``stream_options.include_usage`` is set, then ``data: [DONE]``.
``Reply.streamed(chunk_delay_s=..., cut_after=N)`` spaces the chunks out and hangs up after N chunks (a server
that dies mid-answer).

Example::

    with FakeOpenAIServer() as srv:
        srv.push(Reply.of("AnySearch 的价格"), Reply.status(429, retry_after=0.05))
        client = OpenAILLM(LLMConfig(base_url=srv.base_url, model="fake"))
        ...
        srv.requests[0]["json"]["messages"]
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from ._loopback import LoopbackServer, QuietHandler, serve_until_stdin_closes


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``kind``: text | tool_call | status | malformed | empty."""

    kind: str = "text"
    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    tool_calls: tuple[tuple[str, str], ...] = ()  # (name, raw arguments) per call, in order
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    usage: tuple[int, int] | None = (1, 1)  # (prompt_tokens, completion_tokens); None: no usage field
    chunk_delay_s: float = 0.0  # streamed: the pause before every chunk
    cut_after: int | None = None  # streamed: hang up after this many chunks (no [DONE])

    @classmethod
    def of(cls, text: str, *, delay_s: float = 0.0) -> Reply:
        """A plain text answer."""
        return cls("text", text=text, delay_s=delay_s)

    @classmethod
    def json(cls, obj: Any, *, delay_s: float = 0.0) -> Reply:
        """Content that is the JSON encoding of ``obj`` (structured output)."""
        return cls("text", text=json.dumps(obj, ensure_ascii=False), delay_s=delay_s)

    @classmethod
    def tool_call(cls, name: str, args: Any, *, delay_s: float = 0.0, text: str = "") -> Reply:
        """One function call; ``args`` a JSON-able object, or a string sent as is (junk included)."""
        return cls.tool_calls_of((name, args), delay_s=delay_s, text=text)

    @classmethod
    def tool_calls_of(cls, *calls: tuple[str, Any], delay_s: float = 0.0, text: str = "") -> Reply:
        """Several function calls in one reply (parallel tool calls), with ``text`` as the content if given."""
        raw = tuple((name, a if isinstance(a, str) else json.dumps(a, ensure_ascii=False)) for name, a in calls)
        return cls("tool_call", text=text, tool_calls=raw, delay_s=delay_s)

    def with_usage(self, prompt_tokens: int | None, completion_tokens: int | None = None) -> Reply:
        """The same reply reporting these token counts (``None``: the server says nothing about usage)."""
        from dataclasses import replace

        if prompt_tokens is None:
            return replace(self, usage=None)
        return replace(self, usage=(prompt_tokens, completion_tokens or 0))

    @classmethod
    def error(cls, status: int, *, retry_after: float | None = None, message: str = "scripted error",
              delay_s: float = 0.0) -> Reply:
        headers = (("Retry-After", f"{retry_after:g}"),) if retry_after is not None else ()
        return cls("status", status=status, headers=headers, delay_s=delay_s,
                   body=json.dumps({"error": {"message": message, "type": "scripted", "code": status}}))

    @classmethod
    def malformed(cls, *, delay_s: float = 0.0) -> Reply:
        return cls("malformed", body='{"id": "chatcmpl-x", "choices": [{"message": {"content": "unterminated',
                   delay_s=delay_s)

    @classmethod
    def empty(cls, *, delay_s: float = 0.0) -> Reply:
        return cls("empty", delay_s=delay_s)

    def streamed(self, *, chunk_delay_s: float = 0.0, cut_after: int | None = None) -> Reply:
        """The same reply, when streamed, with ``chunk_delay_s`` before every chunk and cut after ``cut_after``."""
        from dataclasses import replace

        return replace(self, chunk_delay_s=chunk_delay_s, cut_after=cut_after)

    def after(self, delay_s: float) -> Reply:
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


def answer_by_query(answers: dict[str, str]) -> Callable[[dict[str, Any]], Reply]:
    """A responder that maps the last user message to a scripted rewrite (unknown ones are echoed)."""

    def respond(request: dict[str, Any]) -> Reply:
        last = echo_last_user(request)
        return Reply.of(answers.get(last.text, last.text))

    return respond


_RESULT_RE = re.compile(r"^\[(\d+)\] (.+?)(?: \([^()]*\))?$", re.MULTILINE)


def search_then_cite(*, first: int = 2, chunk_delay_s: float = 0.0,
                     usage: tuple[int, int] = (50, 10)) -> Callable[[dict[str, Any]], Reply]:
    """A tool-calling model for tests and benchmarks of the agent, stateless (safe under concurrency): while no
    tool result is in the conversation and the tool is offered, it calls ``web_search`` with the question as
    typed (the last user message: a follow-up such as "价格呢？" stays one, for convsearch to resolve); then it
    answers citing its ``first`` first results by title, ``"title [n]."`` each, streamed in small pieces with
    ``chunk_delay_s`` between them. Every reply reports ``usage`` (prompt, completion tokens)."""

    def respond(request: dict[str, Any]) -> Reply:
        msgs = request.get("messages", [])
        tools = [m for m in msgs if m.get("role") == "tool"]
        if request.get("tools") and not tools:
            question = next((str(m.get("content") or "") for m in reversed(msgs) if m.get("role") == "user"), "")
            return Reply.tool_call("web_search", {"query": question}).with_usage(*usage)
        found = [m for t in tools for m in _RESULT_RE.finditer(str(t.get("content") or ""))]
        seen: dict[str, str] = {}
        for mt in found:
            seen.setdefault(mt.group(1), mt.group(2))
        text = " ".join(f"{title} [{n}]." for n, title in list(seen.items())[:first]) or "Nothing found."
        return Reply.of(text).with_usage(*usage).streamed(chunk_delay_s=chunk_delay_s)

    return respond


@dataclass
class _State:
    queue: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    generation: int = 0  # bumped by reset(): requests from before (a delayed reply nobody waits for) don't count
    in_flight: dict[int, int] = field(default_factory=dict)
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeOpenAIServer(LoopbackServer):
    """The server; start/stop with ``with`` (or ``start()`` / ``close()``)."""

    def __init__(self, responder: Callable[[dict[str, Any]], Reply] = echo_last_user, *, latency_s: float = 0.0,
                 api_key: str | None = None, host: str = "127.0.0.1") -> None:
        self.responder = responder
        self.latency_s = latency_s  # added to every reply's own delay
        self.api_key = api_key      # when set, other keys get 401
        self._state = _State()
        # a backlog of 256: 50 clients connecting at once must not overflow it
        super().__init__(_handler_class(self), name="fake-openai", host=host, backlog=256)

    # --- script and records ---
    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def push(self, *replies: Reply) -> None:
        with self._state.lock:
            self._state.queue.extend(replies)

    def reset(self) -> None:
        with self._state.lock:
            self._state.queue.clear()
            self._state.requests.clear()
            self._state.generation += 1
            self._state.max_in_flight = 0

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat-completions request received: ``{"path", "headers", "json", "t"}``, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def in_flight(self) -> int:
        """Requests being answered right now (a streamed reply counts until its last chunk is written)."""
        with self._state.lock:
            return self._state.in_flight.get(self._state.generation, 0)

    @property
    def max_in_flight(self) -> int:
        """The most requests in flight at once since the last ``reset()``."""
        return self._state.max_in_flight

    def messages(self, i: int = -1) -> list[dict[str, Any]]:
        """The ``messages`` of request ``i``."""
        msgs: list[dict[str, Any]] = self.requests[i]["json"]["messages"]
        return msgs

    # --- used by the handler ---
    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._state.lock:
            if self._state.queue:
                return self._state.queue.popleft()
        return self.responder(request)

    def _enter(self, record: dict[str, Any], gen: int) -> None:
        """Count a request in flight; record it unless its connection was accepted before the last reset()
        (a straggler of an earlier test is not this test's request)."""
        with self._state.lock:
            st = self._state
            st.in_flight[gen] = st.in_flight.get(gen, 0) + 1
            if gen == st.generation:
                st.requests.append(record)
                st.max_in_flight = max(st.max_in_flight, st.in_flight[gen])

    def _leave(self, gen: int) -> None:
        with self._state.lock:
            self._state.in_flight[gen] -= 1


def _completion(model: str, *, content: str | None, tools: tuple[tuple[str, str], ...] = (),
                usage: tuple[int, int] | None = (1, 1)) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = "stop"
    if tools:
        message["tool_calls"] = [
            {"id": f"call_{i + 1}", "type": "function", "function": {"name": name, "arguments": args}}
            for i, (name, args) in enumerate(tools)]
        finish = "tool_calls"
    out = {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
           "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]}
    if usage is not None:
        out["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return out


def _pieces(text: str, size: int = 3) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def _chunks(model: str, reply: Reply, *, include_usage: bool) -> list[dict[str, Any]]:
    """The chat.completion.chunk objects of a streamed reply, in order."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    out = [chunk({"role": "assistant", "content": ""})]
    text = "" if reply.kind == "empty" else reply.text
    out += [chunk({"content": p}) for p in _pieces(text)]
    for i, (name, args) in enumerate(reply.tool_calls if reply.kind == "tool_call" else ()):
        out.append(chunk({"tool_calls": [{"index": i, "id": f"call_{i + 1}", "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}) for p in _pieces(args, 5)]
    out.append(chunk({}, "tool_calls" if reply.kind == "tool_call" and reply.tool_calls else "stop"))
    if include_usage and reply.usage is not None:
        u = reply.usage
        out.append(base | {"choices": [], "usage": {"prompt_tokens": u[0], "completion_tokens": u[1],
                                                    "total_tokens": sum(u)}})
    return out


def _handler_class(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _stream(self, model: str, reply: Reply, payload: dict[str, Any]) -> None:
            """Server-sent events; the connection closes at the end (no Content-Length)."""
            opts = payload.get("stream_options") or {}
            chunks = _chunks(model, reply, include_usage=bool(opts.get("include_usage")))
            self.close_connection = True
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.flush()
                for n, c in enumerate(chunks):
                    if reply.cut_after is not None and n >= reply.cut_after:
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if reply.chunk_delay_s and not self._wait(reply.chunk_delay_s):
                        return
                    self.wfile.write(f"data: {json.dumps(c, ensure_ascii=False)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass  # the client gave up

        def setup(self) -> None:
            super().setup()
            self.generation = server._state.generation  # stamped when the connection is accepted

        def _client_gone(self) -> bool:
            try:
                ready, _, _ = select.select([self.connection], [], [], 0)
                return bool(ready) and not self.connection.recv(1, socket.MSG_PEEK)
            except OSError:
                return True

        def _wait(self, seconds: float) -> bool:
            """Sleep through a scripted delay; False when the server is closing or the client hung up (as a
            real server stops generating when its client goes away)."""
            end = time.perf_counter() + seconds
            while (left := end - time.perf_counter()) > 0:
                if server._stop.is_set():
                    return False
                try:
                    # wakes at once when the client hangs up (readable at EOF), else after the wait
                    ready, _, _ = select.select([self.connection], [], [], min(left, 0.05))
                    if ready and not self.connection.recv(1, socket.MSG_PEEK):
                        return False
                except OSError:
                    return False
            return not server._stop.is_set()

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            if self.path.rstrip("/").endswith("/models"):
                self.respond(200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}))
            else:
                self.respond(404, json.dumps({"error": {"message": "not found"}}))

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            raw = self.read_body()
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.respond(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            try:
                payload = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self.respond(400, json.dumps({"error": {"message": "request body is not JSON"}}))
                return
            if self._client_gone():
                return  # the client gave up before we read its request: it never arrived, as far as it knows
            record = {"path": self.path, "headers": dict(self.headers.items()), "json": payload,
                      "t": time.perf_counter()}
            gen = self.generation
            server._enter(record, gen)
            try:
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    # echoes the header it got, as some providers do: clients must scrub it from errors
                    got = self.headers.get("Authorization", "")
                    self.respond(401, json.dumps({"error": {"message": f"invalid key in header {got!r}"}}))
                    return
                reply = server._next_reply(payload)
                if not self._wait(server.latency_s + reply.delay_s):
                    record["abandoned"] = True
                    return
                model = str(payload.get("model", "fake"))
                if payload.get("stream") and reply.kind in ("text", "tool_call", "empty"):
                    self._stream(model, reply, payload)
                elif payload.get("stream") and reply.kind == "malformed":
                    self.respond(200, 'data: {"choices": [{"delta": \n\n')
                elif reply.kind == "status":
                    self.respond(reply.status, reply.body or "{}", reply.headers)
                elif reply.kind == "malformed":
                    self.respond(200, reply.body or "{", reply.headers)
                elif reply.kind == "empty":
                    self.respond(200, json.dumps(_completion(model, content="", usage=reply.usage)), reply.headers)
                elif reply.kind == "tool_call":
                    body = _completion(model, content=reply.text or None, tools=reply.tool_calls, usage=reply.usage)
                    self.respond(200, json.dumps(body, ensure_ascii=False), reply.headers)
                else:
                    body = _completion(model, content=reply.text, usage=reply.usage)
                    self.respond(200, json.dumps(body, ensure_ascii=False), reply.headers)
            finally:
                server._leave(gen)

    return Handler


def main(argv: list[str] | None = None) -> None:
    """``python -m convsearch.testing.openai_server [--latency S] [--fail-status CODE]``: serve until stdin
    closes (or Ctrl-C); prints ``READY <base_url>`` once listening. Every request is echoed (the last user
    message), after ``--latency`` seconds, or answered with HTTP ``--fail-status``."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--fail-status", type=int, default=0)
    args = ap.parse_args(argv)
    responder = (lambda req: Reply.error(args.fail_status)) if args.fail_status else echo_last_user
    serve_until_stdin_closes(FakeOpenAIServer(responder, latency_s=args.latency))


__all__ = ["FakeOpenAIServer", "Reply", "answer_by_query", "echo_last_user", "main", "search_then_cite"]


if __name__ == "__main__":
    main()
