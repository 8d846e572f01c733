"""A rerank server on loopback (stdlib only) that speaks Cohere's shape or TEI's and checks requests as they do.

- ``shape="cohere"`` (vLLM, Infinity, Xinference, Jina, Cohere): ``POST /v1/rerank`` and ``POST /rerank``
  ``{"model"?, "query", "documents", "top_n"?}`` → ``{"id", "results": [{"index", "relevance_score"}], "meta"}``,
  best first, ``top_n`` of them. ``base_url`` ends in ``/v1``.
- ``shape="tei"`` (Text Embeddings Inference): ``POST /rerank`` ``{"query", "texts", "raw_scores"?, "truncate"?,
  "return_text"?}`` → ``[{"index", "score"}]``, best first. ``base_url`` is the root.

Checks, as the real servers make them: a JSON content type (else 415) and a JSON object body (else 400 / 422);
the required fields with their types (422); a non-empty query and a non-empty document list (422); ``top_n``
between 1 and the number of documents (422); more documents than ``max_documents`` (cohere: 422) or than
``max_batch`` (TEI's ``--max-client-batch-size``, 32 by default: 413); with ``api_key`` set, a missing or wrong
``Authorization: Bearer`` (401); with ``model`` set, a request naming another model (404) or none (422, cohere).
An error body is ``{"message": …}`` (cohere) or ``{"error": …, "error_type": …}`` (TEI).

Scores are the share of the query's words (Latin words, single CJK characters) in the document
(``convsearch.rerank.base.overlap_score``), so tests can predict the order. Every request is recorded
(``requests``: path, headers, JSON); ``push`` scripts what the next requests get instead: ``Fault.status(500)``,
``Fault.slow(3.0)`` (answers after that long: past a client's timeout), ``Fault.malformed()`` (a cut-off body).

>>> with RerankServer("tei") as srv:
...     import httpx
...     r = httpx.post(srv.base_url + "/rerank", json={"query": "cat food", "texts": ["dogs", "cat food"]})
>>> r.json(), srv.requests[0]["json"]["query"]
([{'index': 1, 'score': 1.0}, {'index': 0, 'score': 0.0}], 'cat food')
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..rerank.base import overlap_order
from ._loopback import LoopbackServer, QuietHandler


@dataclass(frozen=True, slots=True)
class Fault:
    """What one request gets instead of an answer: ``kind`` status | slow | malformed."""

    kind: str
    status: int = 500
    delay_s: float = 0.0

    @classmethod
    def error(cls, status: int = 500) -> Fault:
        return cls("status", status=status)

    @classmethod
    def slow(cls, delay_s: float) -> Fault:
        """The right answer, after ``delay_s``."""
        return cls("slow", delay_s=delay_s)

    @classmethod
    def malformed(cls) -> Fault:
        return cls("malformed")


class _Invalid(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class RerankServer(LoopbackServer):
    """The server; start and stop it with ``with`` (or ``start()`` / ``close()``)."""

    def __init__(self, shape: str = "cohere", *, api_key: str | None = None, model: str | None = None,
                 max_documents: int = 1000, max_batch: int = 32, host: str = "127.0.0.1") -> None:
        if shape not in ("cohere", "tei"):
            raise ValueError(f"shape must be cohere or tei, not {shape!r}")
        self.shape = shape
        self.api_key = api_key
        self.model = model
        self.max_documents = max_documents
        self.max_batch = max_batch
        self._faults: deque[Fault] = deque()
        self._requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        super().__init__(_handler_class(self), name=f"rerank-{shape}", host=host, backlog=128)

    # --- script and records ---
    @property
    def base_url(self) -> str:
        """What ``CONVSEARCH_RERANK_BASE_URL`` is set to: ``…/v1`` for the cohere shape, the root for TEI."""
        return self.root_url + ("/v1" if self.shape == "cohere" else "")

    def push(self, *faults: Fault) -> None:
        """The next requests get these, one each, in order (then the right answer again)."""
        with self._lock:
            self._faults.extend(faults)

    def reset(self) -> None:
        with self._lock:
            self._faults.clear()
            self._requests.clear()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request received: ``{"path", "headers", "json", "status"}`` (``json`` None when the body was not
        JSON; ``status`` what it was answered with), in arrival order."""
        with self._lock:
            return [dict(r) for r in self._requests]

    # --- used by the handler ---
    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _record(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(record)

    def answer(self, path: str, headers: Any, payload: Any) -> tuple[int, Any]:
        """(status, JSON body) for one request, checked the way the real server of this shape checks it."""
        try:
            if self.shape == "tei":
                if path != "/rerank":
                    raise _Invalid(404, f"no route {path}")
                return 200, self._tei(headers, payload)
            if path not in ("/rerank", "/v1/rerank"):
                raise _Invalid(404, f"no route {path}")
            return 200, self._cohere(headers, payload)
        except _Invalid as exc:
            if self.shape == "tei":
                return exc.status, {"error": str(exc), "error_type": "Validation"}
            return exc.status, {"message": str(exc)}

    def _check_auth(self, headers: Any) -> None:
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            raise _Invalid(401, "invalid api token")

    @staticmethod
    def _texts(payload: dict[str, Any], name: str) -> list[str]:
        docs = payload.get(name)
        if not isinstance(docs, list):
            raise _Invalid(422, f"missing field `{name}` (a list of strings)")
        out = []
        for d in docs:
            if isinstance(d, dict) and isinstance(d.get("text"), str):
                d = d["text"]  # Cohere also takes {"text": …} objects
            if not isinstance(d, str):
                raise _Invalid(422, f"`{name}` must hold strings, not {type(d).__name__}")
            out.append(d)
        if not out:
            raise _Invalid(422, f"`{name}` cannot be empty")
        return out

    @staticmethod
    def _query(payload: dict[str, Any]) -> str:
        q = payload.get("query")
        if not isinstance(q, str):
            raise _Invalid(422, "missing field `query` (a string)")
        if not q.strip():
            raise _Invalid(422, "`query` cannot be empty")
        return q

    def _cohere(self, headers: Any, payload: Any) -> dict[str, Any]:
        self._check_auth(headers)
        if not isinstance(payload, dict):
            raise _Invalid(422, "the body must be a JSON object")
        model = payload.get("model")
        if model is not None and not isinstance(model, str):
            raise _Invalid(422, "`model` must be a string")
        if self.model is not None:
            if model is None:
                raise _Invalid(422, "missing field `model`")
            if model != self.model:
                raise _Invalid(404, f"The model `{model}` does not exist.")
        query = self._query(payload)
        docs = self._texts(payload, "documents")
        if len(docs) > self.max_documents:
            raise _Invalid(422, f"too many documents: {len(docs)} > {self.max_documents}")
        top_n = payload.get("top_n", len(docs))
        if not isinstance(top_n, int) or isinstance(top_n, bool) or not 1 <= top_n <= len(docs):
            raise _Invalid(422, f"`top_n` must be an integer from 1 to {len(docs)}, not {top_n!r}")
        order = overlap_order(query, docs)[:top_n]
        return {"id": uuid.uuid4().hex, "results": [{"index": i, "relevance_score": s} for i, s in order],
                "meta": {"billed_units": {"search_units": 1}}}

    def _tei(self, headers: Any, payload: Any) -> list[dict[str, Any]]:
        self._check_auth(headers)
        if not isinstance(payload, dict):
            raise _Invalid(422, "the body must be a JSON object")
        query = self._query(payload)
        texts = self._texts(payload, "texts")
        for flag in ("raw_scores", "truncate", "return_text"):
            if flag in payload and not isinstance(payload[flag], bool):
                raise _Invalid(422, f"`{flag}` must be a boolean")
        if len(texts) > self.max_batch:
            raise _Invalid(413, f"batch size {len(texts)} > maximum allowed batch size {self.max_batch}")
        return [{"index": i, "score": s} for i, s in overlap_order(query, texts)]


def _handler_class(server: RerankServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            raw = self.read_body()
            record: dict[str, Any] = {"path": self.path, "headers": dict(self.headers.items()), "json": None}
            try:
                record["json"] = json.loads(raw)
            except ValueError:
                pass
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != "application/json":
                status, body = 415, {"message": "Content-Type must be application/json"}
            elif record["json"] is None:
                status, body = 400, {"message": "the body is not JSON"}
            else:
                status, body = server.answer(self.path, self.headers, record["json"])
            fault = server._next_fault()
            record["status"] = fault.status if fault is not None and fault.kind == "status" else status
            server._record(record)
            if fault is not None and fault.kind == "status":
                self.respond(fault.status, json.dumps({"message": "scripted failure", "error": "scripted failure"}))
                return
            if fault is not None and fault.kind == "slow" and server._stop.wait(fault.delay_s):
                return  # the server is closing
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            if fault is not None and fault.kind == "malformed":
                data = data[: max(1, len(data) // 2)]
            self.respond(status, data)

    return Handler


__all__ = ["Fault", "RerankServer"]
