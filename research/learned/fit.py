"""Fitting the learned models (training only; the package holds what predicts: ``convsearch.learned.model``
and ``convsearch.learned.alt_models``). Numpy only, deterministic.

- ``fit_logistic``: L2-regularised logistic regression by Newton's method (no random start, no shuffling); features
  standardised with the training mean and deviation, the bias unpenalised, each step halved until the loss goes
  down (a separable set converges to finite weights);
- ``fit_gbdt``: second-order gradient boosting of the log loss (XGBoost-style leaf weights ``-G / (H + lambda)``)
  over features cut into at most 32 quantile bins of the training rows; depth-limited trees grown level by level,
  the split with the largest gain per node, a minimum hessian per leaf;
- ``fit_mlp``: one hidden layer (tanh), sigmoid output, log loss + L2, Adam on mini-batches from a seeded generator.

>>> X = np.array([[0.0], [1.0], [2.0], [3.0]] * 10); y = np.array([0, 0, 1, 1] * 10)
>>> (fit_logistic(X, y, l2=0.1).proba(X[:4]) > 0.5).astype(int).tolist()
[0, 0, 1, 1]
>>> (fit_gbdt(X, y, trees=20, min_hess=0.1).proba(X[:4]) > 0.5).astype(int).tolist()
[0, 0, 1, 1]
>>> (fit_mlp(X, y, epochs=200).proba(X[:4]) > 0.5).astype(int).tolist()
[0, 0, 1, 1]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from convsearch.learned.alt_models import MLP, Trees
from convsearch.learned.model import Logistic, sigmoid

BINS = 32


def _loss(A: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> float:
    z = A @ w
    # log(1 + e^z) - y z, stable for both signs
    return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * float(w[:-1] @ w[:-1]))


def fit_logistic(X: np.ndarray, y: np.ndarray, *, l2: float = 1.0, names: Sequence[str] = (), max_iter: int = 100,
                 tol: float = 1e-8) -> Logistic:
    """Fit on rows ``X`` (n × d) and labels ``y`` (0/1); ``l2`` the penalty on the standardised weights."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or len(X) != len(y) or len(y) == 0:
        raise ValueError(f"need X (n × d) and y (n) with n > 0, got {X.shape} and {y.shape}")
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-12] = 1.0
    A = np.hstack([(X - mean) / scale, np.ones((len(X), 1))])
    d = A.shape[1]
    reg = np.full(d, l2)
    reg[-1] = 1e-9  # the bias: unpenalised (a whisker keeps the Hessian invertible on a one-class set)
    w = np.zeros(d)
    loss = _loss(A, y, w, l2)
    it = 0
    while it < max_iter:
        it += 1
        p = sigmoid(A @ w)
        grad = A.T @ (p - y) + reg * w
        hess = (A * (p * (1 - p))[:, None]).T @ A + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:
            w_new = w - t * step
            new = _loss(A, y, w_new, l2)
            if new <= loss or t < 1e-6:
                break
            t /= 2
        w, done = w_new, loss - new <= tol * max(1.0, abs(loss)) and float(np.max(np.abs(t * step))) < 1e-6
        loss = new
        if done:
            break
    return Logistic(tuple(names), mean, scale, w[:-1].copy(), float(w[-1]), l2, it)


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


__all__ = ["BINS", "fit_gbdt", "fit_logistic", "fit_mlp"]
