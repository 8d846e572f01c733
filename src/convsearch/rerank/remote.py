"""Remote rerankers: the ``cohere`` and ``tei`` rows, over httpx (the ``web`` extra).

Two wire shapes cover the servers people run:

- ``cohere``: ``POST {BASE_URL}/rerank`` ``{"model", "query", "documents": [text, …], "top_n"}`` →
  ``{"results": [{"index", "relevance_score"}, …]}``, best first. vLLM, Infinity, Xinference, Jina and Cohere
  itself speak it; their base URLs end in ``/v1`` (Cohere's current API in ``/v2``), so a vLLM at port 8000 is
  ``CONVSEARCH_RERANK_BASE_URL=http://localhost:8000/v1``. ``model`` is sent when ``CONVSEARCH_RERANK_MODEL`` is
  set; ``top_n`` is the number of documents sent (the whole order comes back).
- ``tei``: Text Embeddings Inference's ``POST {BASE_URL}/rerank`` ``{"query", "texts", "raw_scores": false,
  "truncate": true}`` → ``[{"index", "score"}, …]``; its base URL is the server's root (``http://localhost:8080``).

A base URL that already ends in ``/rerank`` is used as it is. ``CONVSEARCH_RERANK_API_KEY`` travels as
``Authorization: Bearer …``. What is sent: the standalone question and the head of the heuristic order,
``CONVSEARCH_RERANK_CANDIDATES`` hits, each as its title and text cut to ``base.DOC_CHARS`` characters. What comes
back reorders those hits (``base.apply_order``): the server's order and scores, then any hit it left out and the
rest of the list in the heuristic order.

One call, no retry (the heuristic order is already there), with ``CONVSEARCH_RERANK_TIMEOUT_S`` cut to the budget
the caller passes (what is left of the turn's deadline). Every failure is one ``RerankError`` with a short
reason: ``HTTP 500: …``, ``no answer within 2 s``, ``cannot reach the server (ConnectError)``, ``malformed reply:
…``; the key never appears in it. The process keeps one sync client per endpoint and one async client per endpoint
and event loop, shared by every reranker of that endpoint (each Pipeline holds a handle; the last ``close()``
closes them).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, RerankError
from ..infra.deadline import MIN_ATTEMPT_S
from ..secret import Secret
from ..types import Hit
from .base import apply_order, document

if TYPE_CHECKING:
    import httpx

SHAPES = ("cohere", "tei")


def rerank_url(base_url: str) -> str:
    """The endpoint for a base URL: ``{base}/rerank``, or the URL itself when it ends in ``/rerank``.

    >>> rerank_url("http://localhost:8000/v1/"), rerank_url("http://tei:8080/rerank")
    ('http://localhost:8000/v1/rerank', 'http://tei:8080/rerank')
    """
    base = base_url.strip().rstrip("/")
    return base if base.endswith("/rerank") else f"{base}/rerank"


@dataclass(frozen=True, slots=True)
class RemoteConfig:
    """Everything a remote reranker needs: its wire ``shape`` ("cohere" or "tei") and endpoint ``url``."""

    shape: str
    url: str
    model: str = ""
    api_key: Secret | None = None
    candidates: int = 30
    timeout_s: float = 2.0

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ConfigError(f"unknown rerank shape {self.shape!r}; known: {', '.join(SHAPES)}")


def request_body(shape: str, question: str, docs: Sequence[str], model: str = "") -> dict[str, Any]:
    """The JSON a server of ``shape`` expects for one question and its documents."""
    if shape == "tei":
        return {"query": question, "texts": list(docs), "raw_scores": False, "truncate": True}
    body: dict[str, Any] = {"model": model} if model else {}
    body.update(query=question, documents=list(docs), top_n=len(docs))
    return body


def parse_reply(shape: str, payload: Any, n: int) -> list[tuple[int, float]]:
    """(index, score) in the server's order, from a reply to ``n`` documents; ValueError saying what is wrong."""
    if shape == "tei":
        items, score_key = payload, "score"
        if not isinstance(items, list):
            raise ValueError("expected a JSON list of {index, score}")
    else:
        items = payload.get("results") if isinstance(payload, dict) else None
        score_key = "relevance_score"
        if not isinstance(items, list):
            raise ValueError("no 'results' list")
    out: list[tuple[int, float]] = []
    for item in items:
        i = item.get("index") if isinstance(item, dict) else None
        score = item.get(score_key) if isinstance(item, dict) else None
        if not isinstance(i, int) or isinstance(i, bool) or not isinstance(score, (int, float)) \
                or isinstance(score, bool):
            raise ValueError(f"an item without an integer index and a numeric {score_key}")
        if not 0 <= i < n:
            raise ValueError(f"index {i} out of range for {n} documents")
        out.append((i, float(score)))
    return out


def _detail(body: bytes, key: Secret | None) -> str:
    """A short reason from an error body (Cohere's ``message``, TEI's ``error``, FastAPI's ``detail``, vLLM's
    ``error.message``), the key masked; empty when there is none."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    text: Any = ""
    if isinstance(data, dict):
        text = data.get("message") or data.get("error") or data.get("detail") or ""
        if isinstance(text, dict):
            text = text.get("message", "")
    out = str(text).replace("\n", " ").strip()
    if key is not None:
        out = key.scrub(out)
    return out[:160] + ("…" if len(out) > 160 else "")


# --- the process's clients, one set per endpoint ----------------------------------------------------------------

class _Clients:
    """One endpoint's clients: a sync client, and one async client per event loop (closed with its loop)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._aclients: dict[int, tuple[Any, httpx.AsyncClient, Any]] = {}

    def sync(self) -> httpx.Client:
        import httpx

        from ..backends.web._http import ssl_context

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(follow_redirects=False, verify=ssl_context(),
                                            headers={"Accept": "application/json"})
            return self._client

    async def aclient(self) -> httpx.AsyncClient:
        import httpx

        from ..backends.web._http import loop_client, ssl_context

        return await loop_client(self._aclients, self._lock, lambda: httpx.AsyncClient(
            follow_redirects=False, verify=ssl_context(), headers={"Accept": "application/json"}))

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
            self._aclients.clear()  # each closes with its loop
        if client is not None:
            client.close()


_SHARED: dict[str, list[Any]] = {}  # endpoint URL → [clients, handles open]
_SHARED_LOCK = threading.Lock()


def _acquire(url: str) -> _Clients:
    with _SHARED_LOCK:
        entry = _SHARED.get(url)
        if entry is None:
            entry = _SHARED[url] = [_Clients(), 0]
        entry[1] += 1
        clients: _Clients = entry[0]
        return clients


def _release(url: str, clients: _Clients) -> None:
    with _SHARED_LOCK:
        entry = _SHARED.get(url)
        if entry is None or entry[0] is not clients:
            return
        entry[1] -= 1
        if entry[1] > 0:
            return
        del _SHARED[url]
    clients.close()


# --- the reranker ----------------------------------------------------------------------------------------------

class RemoteReranker:
    """A rerank server of the ``cohere`` or ``tei`` shape (see the module docstring); a ``Reranker``."""

    remote = True

    def __init__(self, config: RemoteConfig) -> None:
        try:
            import httpx  # noqa: F401
        except ImportError as exc:
            raise ConfigError(f"CONVSEARCH_RERANKER={config.shape} needs httpx: pip install 'convsearch[web]'") \
                from exc
        from ..backends.web._http import ssl_context

        ssl_context()  # the process's one TLS context (20-70 ms to build): at open, not in the first turn
        self.config = config
        self.name = config.shape
        self.candidates = config.candidates
        self.closed = False
        self._clients = _acquire(config.url)

    def __repr__(self) -> str:
        return f"RemoteReranker({self.name}, {self.config.url})"

    def _plan(self, question: str, hits: Sequence[Hit],
              budget_s: float | None) -> tuple[int, dict[str, Any], dict[str, str], float]:
        """(documents sent, body, headers, timeout); RerankError when there is no time left or nothing to ask."""
        if self.closed:
            raise RerankError(self.name, "the reranker is closed")
        if not question.strip():
            raise RerankError(self.name, "the question is empty")
        timeout = self.config.timeout_s if budget_s is None else min(self.config.timeout_s, budget_s)
        if timeout <= MIN_ATTEMPT_S:
            raise RerankError(self.name, "no time left in the turn's deadline")
        sent = min(self.candidates, len(hits))
        docs = [document(h) for h in hits[:sent]]
        headers = {"Content-Type": "application/json"}
        if self.config.api_key is not None:
            headers["Authorization"] = f"Bearer {self.config.api_key.reveal()}"
        return sent, request_body(self.name, question, docs, self.config.model), headers, timeout

    def _read(self, status: int, body: bytes, hits: Sequence[Hit], sent: int, limit: int | None) -> list[Hit]:
        if status >= 400:
            detail = _detail(body, self.config.api_key)
            raise RerankError(self.name, f"HTTP {status}" + (f": {detail}" if detail else ""), status=status)
        try:
            order = parse_reply(self.name, json.loads(body), sent)
        except ValueError as exc:  # json.JSONDecodeError is one
            why = "not JSON" if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise RerankError(self.name, f"malformed reply: {why}", status=status) from exc
        return apply_order(hits, order, sent=sent, limit=limit)

    def _failed(self, exc: Exception, timeout: float) -> RerankError:
        import httpx

        if isinstance(exc, (httpx.TimeoutException, TimeoutError)):
            return RerankError(self.name, f"no answer within {timeout:.3g} s")
        return RerankError(self.name, f"cannot reach the server ({type(exc).__name__})")

    def rerank(self, question: str, hits: Sequence[Hit], *, limit: int | None = None,
               budget_s: float | None = None) -> list[Hit]:
        """``hits`` in the server's order (see the module docstring); RerankError when it fails."""
        if len(hits) < 2:
            return apply_order(hits, (), sent=0, limit=limit)
        sent, body, headers, timeout = self._plan(question, hits, budget_s)
        client = self._clients.sync()
        try:
            r = client.post(self.config.url, json=body, headers=headers, timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - every transport error becomes one RerankError
            raise self._failed(exc, timeout) from exc
        return self._read(r.status_code, r.content, hits, sent, limit)

    async def arerank(self, question: str, hits: Sequence[Hit], *, limit: int | None = None,
                      budget_s: float | None = None) -> list[Hit]:
        """The async twin of ``rerank``: the loop's own client, the whole call bounded by the timeout."""
        from ..backends.fanout import ON_TURN_LOOP

        if ON_TURN_LOOP.get():  # a sync turn's throwaway loop: its async client would outlive it
            return await asyncio.to_thread(self.rerank, question, hits, limit=limit, budget_s=budget_s)
        if len(hits) < 2:
            return apply_order(hits, (), sent=0, limit=limit)
        sent, body, headers, timeout = self._plan(question, hits, budget_s)
        client = await self._clients.aclient()
        try:
            r = await asyncio.wait_for(client.post(self.config.url, json=body, headers=headers, timeout=timeout),
                                       timeout)
        except Exception as exc:  # noqa: BLE001
            raise self._failed(exc, timeout) from exc
        return self._read(r.status_code, r.content, hits, sent, limit)

    def close(self) -> None:
        """Give this reranker's handle on the endpoint's clients back (the last one closes them). Idempotent."""
        if not self.closed:
            self.closed = True
            _release(self.config.url, self._clients)


def _config(settings: Any, shape: str) -> RemoteConfig:
    s = settings.section("rerank")
    if not s.base_url:
        raise ConfigError(f"CONVSEARCH_RERANKER={shape} needs CONVSEARCH_RERANK_BASE_URL")
    return RemoteConfig(shape, rerank_url(s.base_url), s.model if shape == "cohere" else "", s.api_key,
                        s.candidates, s.timeout_s)


def cohere_from_settings(settings: Any) -> RemoteReranker:
    """The ``cohere`` row."""
    return RemoteReranker(_config(settings, "cohere"))


def tei_from_settings(settings: Any) -> RemoteReranker:
    """The ``tei`` row."""
    return RemoteReranker(_config(settings, "tei"))


__all__ = ["RemoteConfig", "RemoteReranker", "SHAPES", "cohere_from_settings", "parse_reply", "request_body",
           "rerank_url", "tei_from_settings"]
