"""The other two model kinds a model file may hold, at inference: gradient-boosted trees (``Trees``: the shipped
gate) and a small MLP (``MLP``), each a JSON dict like ``model.Logistic``; ``load_model`` reads any of the three by
its ``"kind"``. Predict only: numpy, no fitting code here (``research/learned/fit.py`` fits them: ``fit_gbdt``,
``fit_mlp``).

>>> t = Trees(("x",), 0.0, ((np.array([0, -1, -1]), np.array([1.5, 0, 0]), np.array([1, -1, -1]),
...                          np.array([2, -1, -1]), np.array([0.0, -2.0, 2.0])),))
>>> (t.proba(np.array([[0.0], [1.0], [2.0], [3.0]])) > 0.5).astype(int).tolist()
[0, 0, 1, 1]
>>> load_model(t.to_dict()).proba(np.array([[3.0]])).round(3).tolist()
[0.881]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .model import Logistic, sigmoid


@dataclass(frozen=True)
class Trees:
    """Boosted trees: each tree is flat arrays (feature, threshold, left, right, value; a leaf has feature -1)."""

    names: tuple[str, ...]
    base: float
    trees: tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], ...]

    @cached_property
    def _packed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
        """Every tree in one (trees × nodes) array per field, a leaf pointing to itself, and the deepest path: all
        trees walk together, one numpy step per level (a turn's gate costs a few numpy calls, not one per node)."""
        T = len(self.trees)
        M = max((len(t[0]) for t in self.trees), default=1)
        feat = np.full((T, M), -1, dtype=np.int64)
        thr = np.zeros((T, M))
        left = np.tile(np.arange(M), (T, 1))
        right = left.copy()
        value = np.zeros((T, M))
        for i, (f, th, lo, hi, v) in enumerate(self.trees):
            n = len(f)
            feat[i, :n], thr[i, :n], value[i, :n] = f, th, v
            inner = f >= 0
            left[i, :n] = np.where(inner, lo, np.arange(n))
            right[i, :n] = np.where(inner, hi, np.arange(n))
        return feat, thr, left, right, value, _depth(self.trees)

    def decision(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        feat, thr, left, right, value, depth = self._packed
        T = len(self.trees)
        out = np.full(len(X), self.base)
        if not T or not len(X):
            return out
        tree = np.arange(T)[None, :]
        node = np.zeros((len(X), T), dtype=np.int64)
        rows = np.arange(len(X))[:, None]
        for _ in range(depth):
            f = feat[tree, node]
            x = X[rows, np.maximum(f, 0)]
            node = np.where(f < 0, node, np.where(x <= thr[tree, node], left[tree, node], right[tree, node]))
        leaf = value[tree, node]
        for t in range(T):  # tree by tree, in order: the same sums as adding one tree at a time
            out += leaf[:, t]
        return out

    def proba(self, X: np.ndarray) -> np.ndarray:
        return sigmoid(self.decision(X))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "gbdt", "names": list(self.names), "base": self.base,
                "trees": [[a.tolist() for a in t] for t in self.trees]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trees:
        trees = tuple((np.asarray(t[0], dtype=np.int64), np.asarray(t[1], dtype=np.float64),
                       np.asarray(t[2], dtype=np.int64), np.asarray(t[3], dtype=np.int64),
                       np.asarray(t[4], dtype=np.float64)) for t in d["trees"])
        return cls(tuple(d["names"]), float(d["base"]), trees)


def _depth(trees: Sequence[tuple[np.ndarray, ...]]) -> int:
    """The longest root-to-leaf path over ``trees`` (edges)."""
    best = 0
    for feat, _, left, right, _ in trees:
        stack = [(0, 0)]
        while stack:
            n, d = stack.pop()
            if feat[n] < 0:
                best = max(best, d)
            else:
                stack += [(int(left[n]), d + 1), (int(right[n]), d + 1)]
    return best


@dataclass(frozen=True)
class MLP:
    """``proba(X)`` = sigmoid(tanh(((X - mean) / scale) @ W1 + b1) @ w2 + b2)."""

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    W1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: float

    def proba(self, X: np.ndarray) -> np.ndarray:
        A = (np.asarray(X, dtype=np.float64) - self.mean) / self.scale
        return sigmoid(np.tanh(A @ self.W1 + self.b1) @ self.w2 + self.b2)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "mlp", "names": list(self.names), "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "W1": self.W1.tolist(), "b1": self.b1.tolist(), "w2": self.w2.tolist(), "b2": self.b2}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MLP:
        a = {k: np.asarray(d[k], dtype=np.float64) for k in ("mean", "scale", "W1", "b1", "w2")}
        return cls(tuple(d["names"]), a["mean"], a["scale"], a["W1"], a["b1"], a["w2"], float(d["b2"]))


Model = Any  # model.Logistic, Trees or MLP: each has names, proba(X) and to_dict()


def load_model(d: Mapping[str, Any]) -> Model:
    """A fitted model from its dict (``to_dict``), whichever kind it is (``"kind"``: logistic, gbdt, mlp)."""
    kind = d.get("kind", "logistic")
    if kind == "logistic":
        return Logistic.from_dict(d)
    if kind == "gbdt":
        return Trees.from_dict(d)
    if kind == "mlp":
        return MLP.from_dict(d)
    raise ValueError(f"unknown model kind {kind!r}")


__all__ = ["MLP", "Model", "Trees", "load_model"]
