"""An OpenAI-compatible ``POST /v1/embeddings`` server on loopback (stdlib + numpy), for tests and benchmarks.

It checks requests as the real API does: a JSON body with ``model`` (a non-empty string) and ``input`` (a
non-empty string or a non-empty list of them, at most 2048), optional ``encoding_format`` (``float`` or
``base64``) and ``dimensions`` (a positive integer, at most the server's ``dim``); anything else is HTTP 400 with
OpenAI's error shape. It answers ``{object: "list", data: [{object: "embedding", index, embedding}], model,
usage: {prompt_tokens, total_tokens}}``; base64 vectors are little-endian float32. Vectors are a function of the
text alone (``vector_for``: seeded from its hash, not normalised), so a test can check what came back.

It records every request (``requests``: headers and body), counts requests in flight (``max_in_flight``), and
can be told to misbehave: ``push(Fault(status=429, retry_after=0.01), Fault(delay_s=2))`` answers the next
requests with those, in order; ``shuffle=True`` sends ``data`` in reverse order (clients must sort by ``index``).

    with EmbedServer(dim=64) as srv:
        e = OpenAIEmbedder("fake", base_url=srv.base_url)
        e.embed_passages(["a", "b"])
        srv.requests[0]["json"]["input"]      # ['a', 'b']

``python -m convsearch.testing.embed_server --dim 384`` serves until stdin closes, printing ``READY <base_url>``
(a benchmark runs it in its own process, so its work is not counted as the client's).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from ._loopback import LoopbackServer, QuietHandler, serve_until_stdin_closes

MAX_INPUTS = 2048


def vector_for(text: str, dim: int) -> np.ndarray:
    """The server's vector of ``text``: float32, seeded from the text's hash, deliberately not unit length."""
    seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
    return (np.random.default_rng(seed).standard_normal(dim) * 3.0).astype(np.float32)


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour: an HTTP ``status`` (with ``Retry-After`` seconds when set), and/or a delay
    before answering (``delay_s``; with status 200 the real answer follows the delay)."""

    status: int = 200
    delay_s: float = 0.0
    retry_after: float | None = None


@dataclass
class _State:
    faults: deque[Fault] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class BadRequest(ValueError):
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def check_request(body: Any, dim: int) -> tuple[list[str], str, str, int]:
    """(inputs, model, encoding_format, dimensions) of a request body; BadRequest as the API would refuse it."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("you must provide a model parameter", "model")
    raw = body.get("input")
    if isinstance(raw, str):
        inputs = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(t, str) for t in raw):
        inputs = list(raw)
    else:
        raise BadRequest("'input' must be a non-empty string or a non-empty array of strings", "input")
    if len(inputs) > MAX_INPUTS:
        raise BadRequest(f"'input' may hold at most {MAX_INPUTS} items", "input")
    if any(not t for t in inputs):
        raise BadRequest("'input' cannot contain an empty string", "input")
    fmt = body.get("encoding_format", "float")
    if fmt not in ("float", "base64"):
        raise BadRequest(f"'encoding_format' must be 'float' or 'base64', not {fmt!r}", "encoding_format")
    dims = body.get("dimensions", dim)
    if isinstance(dims, bool) or not isinstance(dims, int) or not 0 < dims <= dim:
        raise BadRequest(f"'dimensions' must be an integer from 1 to {dim}", "dimensions")
    extra = set(body) - {"model", "input", "encoding_format", "dimensions", "user"}
    if extra:
        raise BadRequest(f"unrecognized request argument supplied: {sorted(extra)[0]}", sorted(extra)[0])
    return inputs, model, fmt, dims


def answer(inputs: list[str], model: str, fmt: str, dims: int, *, dim: int, shuffle: bool = False) -> dict[str, Any]:
    """The API's answer for a checked request."""
    data = []
    for i, t in enumerate(inputs):
        v = vector_for(t, dim)[:dims]
        emb: Any = base64.b64encode(v.astype("<f4").tobytes()).decode("ascii") if fmt == "base64" else v.tolist()
        data.append({"object": "embedding", "index": i, "embedding": emb})
    if shuffle:
        data.reverse()
    tokens = sum(len(t.split()) or 1 for t in inputs)
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


class EmbedServer(LoopbackServer):
    """The server; start/stop with ``with`` (or ``start()`` / ``close()``)."""

    def __init__(self, *, dim: int = 64, latency_s: float = 0.0, api_key: str | None = None, shuffle: bool = False,
                 host: str = "127.0.0.1") -> None:
        self.dim = dim
        self.latency_s = latency_s  # before every answer
        self.api_key = api_key  # when set, other keys get 401
        self.shuffle = shuffle
        self._state = _State()
        super().__init__(_handler_class(self), name="embed-server", host=host, backlog=256)

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def push(self, *faults: Fault) -> None:
        """Answer the next requests with these faults, in order."""
        with self._state.lock:
            self._state.faults.extend(faults)

    def reset(self) -> None:
        with self._state.lock:
            self._state.faults.clear()
            self._state.requests.clear()
            self._state.max_in_flight = 0

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every embeddings request received: ``{"path", "headers", "json", "t"}``, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def max_in_flight(self) -> int:
        """The most requests answered at once since the last ``reset()``."""
        return self._state.max_in_flight

    def _enter(self, record: dict[str, Any]) -> Fault | None:
        with self._state.lock:
            st = self._state
            st.requests.append(record)
            st.in_flight += 1
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
            return st.faults.popleft() if st.faults else None

    def _leave(self) -> None:
        with self._state.lock:
            self._state.in_flight -= 1


def _error(message: str, kind: str = "invalid_request_error", param: str | None = None) -> str:
    return json.dumps({"error": {"message": message, "type": kind, "param": param, "code": None}})


def _handler_class(server: EmbedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            if self.path.rstrip("/").endswith("/models"):
                self.respond(200, json.dumps({"object": "list", "data": [{"id": "fake-embed", "object": "model"}]}))
            else:
                self.respond(404, _error(f"no route {self.path}"))

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            raw = self.read_body()
            if not self.path.rstrip("/").endswith("/embeddings"):
                self.respond(404, _error(f"no route {self.path}"))
                return
            try:
                body = json.loads(raw or b"null")
            except (json.JSONDecodeError, UnicodeDecodeError):
                self.respond(400, _error("the request body is not JSON"))
                return
            record = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "json": body,
                      "t": time.perf_counter()}
            fault = server._enter(record)
            try:
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self.respond(401, _error("incorrect API key provided", "invalid_api_key"))
                    return
                delay = server.latency_s + (fault.delay_s if fault else 0.0)
                if delay and server._stop.wait(delay):
                    return
                if fault is not None and fault.status != 200:
                    headers = (("Retry-After", f"{fault.retry_after:g}"),) if fault.retry_after is not None else ()
                    kind = "rate_limit_exceeded" if fault.status == 429 else "server_error"
                    self.respond(fault.status, _error(f"scripted HTTP {fault.status}", kind), headers)
                    return
                try:
                    inputs, model, fmt, dims = check_request(body, server.dim)
                except BadRequest as exc:
                    self.respond(400, _error(str(exc), param=exc.param))
                    return
                self.respond(200, json.dumps(answer(inputs, model, fmt, dims, dim=server.dim, shuffle=server.shuffle)))
            finally:
                server._leave()

    return Handler


def main(argv: list[str] | None = None) -> None:
    """``python -m convsearch.testing.embed_server [--dim N] [--latency S]``: serve until stdin closes (or
    Ctrl-C); prints ``READY <base_url>`` once listening."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args(argv)
    serve_until_stdin_closes(EmbedServer(dim=args.dim, latency_s=args.latency))


__all__ = ["EmbedServer", "Fault", "answer", "check_request", "main", "vector_for"]


if __name__ == "__main__":
    main()
