"""A disk cache of the shipped embedder's vectors for training (never committed: it lives under ``/tmp`` or
``.convsearch/``): text → L2-normalised float32 vector of ``E5Embedder.embed_passages``, kept as ``texts.json`` +
``vectors.npy`` in one folder, filled in batches and saved as it goes (an interrupted run keeps what it embedded).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np


class EmbeddingCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.index: dict[str, int] = {}
        self.vectors = np.zeros((0, 384), dtype=np.float32)
        t, v = folder / "texts.json", folder / "vectors.npy"
        if t.exists() and v.exists():
            texts = json.loads(t.read_text(encoding="utf-8"))
            self.vectors = np.load(v)
            self.index = {s: i for i, s in enumerate(texts[: len(self.vectors)])}

    def missing(self, texts: Iterable[str]) -> list[str]:
        return [t for t in dict.fromkeys(texts) if t not in self.index]

    def fill(self, texts: Sequence[str], batch: int = 32, save_every: int = 50) -> float:
        """Embed the texts not cached yet; returns the seconds spent in the model."""
        from convsearch.embed import default_embedder

        todo = self.missing(texts)
        if not todo:
            return 0.0
        m = default_embedder()
        spent = 0.0
        new: list[np.ndarray] = []
        done: list[str] = []
        for b, i in enumerate(range(0, len(todo), batch)):
            chunk = todo[i:i + batch]
            t0 = time.perf_counter()
            new.append(m.embed_passages(chunk))
            spent += time.perf_counter() - t0
            done.extend(chunk)
            if (b + 1) % save_every == 0 or i + batch >= len(todo):
                self._add(done, np.vstack(new))
                done, new = [], []
                print(f"embedded {i + len(chunk)}/{len(todo)} ({spent:.0f} s in the model)", file=sys.stderr,
                      flush=True)
        return spent

    def _add(self, texts: list[str], vecs: np.ndarray) -> None:
        base = len(self.vectors)
        self.vectors = np.vstack([self.vectors, vecs.astype(np.float32)])
        for j, t in enumerate(texts):
            self.index[t] = base + j
        self.folder.mkdir(parents=True, exist_ok=True)
        ordered = sorted(self.index, key=self.index.__getitem__)
        np.save(self.folder / "vectors.npy", self.vectors)
        (self.folder / "texts.json").write_text(json.dumps(ordered, ensure_ascii=False), encoding="utf-8")

    def get(self, texts: Sequence[str]) -> np.ndarray:
        return self.vectors[[self.index[t] for t in texts]]
