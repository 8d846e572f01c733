"""Two alternatives to the logistic regression, compared out of fold (``learned.experiments``), numpy only at fit and
inference time: gradient-boosted trees and a small MLP. Both deterministic (no random start for the trees; a seeded
generator for the MLP's start and batches) and both a JSON dict, like ``model.Logistic``.

- ``fit_gbdt``: second-order gradient boosting of the log loss (XGBoost-style leaf weights ``-G / (H + lambda)``)
  over features cut into at most 32 quantile bins of the training rows; depth-limited trees grown level by level,
  the split with the largest gain per node, a minimum hessian per leaf.
- ``fit_mlp``: one hidden layer (tanh), sigmoid output, log loss + L2, Adam on mini-batches, standardised inputs.

>>> X = np.array([[0.0], [1.0], [2.0], [3.0]] * 10); y = np.array([0, 0, 1, 1] * 10)
>>> (fit_gbdt(X, y, trees=20, min_hess=0.1).proba(X[:4]) > 0.5).astype(int).tolist()
[0, 0, 1, 1]
>>> (fit_mlp(X, y, epochs=200).proba(X[:4]) > 0.5).astype(int).tolist()
[0, 0, 1, 1]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .model import Logistic, sigmoid

BINS = 32


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


def _edges(X: np.ndarray, bins: int) -> list[np.ndarray]:
    """Per feature, the distinct quantile cut points of the training rows (at most ``bins - 1``)."""
    qs = np.linspace(0, 1, bins + 1)[1:-1]
    return [np.unique(np.quantile(X[:, j], qs)) for j in range(X.shape[1])]


def fit_gbdt(X: np.ndarray, y: np.ndarray, *, trees: int = 150, depth: int = 4, rate: float = 0.1, lam: float = 1.0,
             min_hess: float = 1.0, names: Sequence[str] = (), bins: int = BINS,
             weight: np.ndarray | None = None) -> Trees:
    """Boost ``trees`` trees of depth ``depth`` on rows ``X``, labels ``y`` (0/1), optional row weights."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=np.float64)
    n, d = X.shape
    edges = _edges(X, bins)
    B = bins
    binned = np.empty((n, d), dtype=np.int64)
    for j in range(d):
        binned[:, j] = np.searchsorted(edges[j], X[:, j], side="left")
    flat = binned + np.arange(d) * B  # one histogram slot per (feature, bin)
    prior = float(np.clip(np.average(y, weights=w), 1e-6, 1 - 1e-6))
    base = float(np.log(prior / (1 - prior)))
    z = np.full(n, base)
    out = []
    for _ in range(trees):
        p = sigmoid(z)
        g, h = w * (p - y), w * np.maximum(p * (1 - p), 1e-12)
        feat, thr, left, right, value = [-1], [0.0], [-1], [-1], [0.0]
        frontier = [(0, np.arange(n))]
        for _level in range(depth):
            nxt = []
            for node, rows in frontier:
                G, H = g[rows].sum(), h[rows].sum()
                hg = np.bincount(flat[rows].ravel(), weights=np.repeat(g[rows], d), minlength=d * B).reshape(d, B)
                hh = np.bincount(flat[rows].ravel(), weights=np.repeat(h[rows], d), minlength=d * B).reshape(d, B)
                GL, HL = np.cumsum(hg, axis=1)[:, :-1], np.cumsum(hh, axis=1)[:, :-1]
                GR, HR = G - GL, H - HL
                ok = (HL >= min_hess) & (HR >= min_hess)
                gain = np.where(ok, GL ** 2 / (HL + lam) + GR ** 2 / (HR + lam) - G ** 2 / (H + lam), -np.inf)
                j, b = np.unravel_index(int(np.argmax(gain)), gain.shape)
                if not np.isfinite(gain[j, b]) or gain[j, b] <= 1e-9 or b >= len(edges[j]):
                    continue
                go = binned[rows, j] <= b
                feat[node], thr[node] = int(j), float(edges[j][b])
                for side, sel in (("l", rows[go]), ("r", rows[~go])):
                    feat.append(-1)
                    thr.append(0.0)
                    left.append(-1)
                    right.append(-1)
                    value.append(float(-g[sel].sum() / (h[sel].sum() + lam)) * rate)
                    if side == "l":
                        left[node] = len(feat) - 1
                    else:
                        right[node] = len(feat) - 1
                    nxt.append((len(feat) - 1, sel))
            frontier = nxt
        tree = (np.array(feat, dtype=np.int64), np.array(thr), np.array(left, dtype=np.int64),
                np.array(right, dtype=np.int64), np.array(value))
        # an inner node's value is not used (only leaves add); the leaf values were set with the tree
        out.append(tree)
        z += Trees((), 0.0, (tree,)).decision(X)
    return Trees(tuple(names), base, tuple(out))


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


def fit_mlp(X: np.ndarray, y: np.ndarray, *, hidden: int = 32, epochs: int = 30, batch: int = 256, lr: float = 3e-3,
            l2: float = 1e-4, seed: int = 0, names: Sequence[str] = (), weight: np.ndarray | None = None) -> MLP:
    """Fit one tanh hidden layer by Adam on mini-batches (a seeded generator: the same fit on every run)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=np.float64)
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-12] = 1.0
    A = (X - mean) / scale
    n, d = A.shape
    rng = np.random.default_rng(seed)
    params = [rng.normal(0, 1 / np.sqrt(d), (d, hidden)), np.zeros(hidden), rng.normal(0, 1 / np.sqrt(hidden), hidden),
              np.zeros(1)]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    step = 0
    for _ in range(epochs):
        order = rng.permutation(n)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            a, t, wt = A[idx], y[idx], w[idx]
            hdn = np.tanh(a @ params[0] + params[1])
            p = sigmoid(hdn @ params[2] + params[3][0])
            dz = wt * (p - t) / wt.sum()
            g2 = hdn.T @ dz + l2 * params[2]
            gb2 = np.array([dz.sum()])
            dh = np.outer(dz, params[2]) * (1 - hdn ** 2)
            g1 = a.T @ dh + l2 * params[0]
            gb1 = dh.sum(axis=0)
            step += 1
            for k, grad in enumerate((g1, gb1, g2, gb2)):
                m1[k] = 0.9 * m1[k] + 0.1 * grad
                m2[k] = 0.999 * m2[k] + 0.001 * grad ** 2
                params[k] -= lr * (m1[k] / (1 - 0.9 ** step)) / (np.sqrt(m2[k] / (1 - 0.999 ** step)) + 1e-8)
    return MLP(tuple(names), mean, scale, params[0], params[1], params[2], float(params[3][0]))


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
