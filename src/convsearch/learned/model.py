"""L2-regularised logistic regression in numpy, fitted by Newton's method: deterministic (no random start, no
shuffling, no threads of its own), a few iterations on a few dozen features, and a model that is a JSON dict.

Features are standardised with the training mean and deviation (kept in the model); the loss is the summed log
loss plus ``l2 / 2 * |w|^2`` over the weights (the bias is not penalised). Each Newton step solves the regularised
Hessian and is halved until the loss goes down, so a separable set converges to finite weights instead of running
off.

>>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
>>> m = fit_logistic(X, y, l2=0.1)
>>> (m.proba(X) > 0.5).astype(int).tolist()
[0, 0, 1, 1]
>>> Logistic.from_dict(m.to_dict()).proba(X).round(6).tolist() == m.proba(X).round(6).tolist()
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-z), without overflow for large |z|."""
    out = np.empty_like(z, dtype=np.float64)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    e = np.exp(z[~pos])
    out[~pos] = e / (1.0 + e)
    return out


@dataclass(frozen=True)
class Logistic:
    """A fitted model: ``proba(X)`` = sigmoid(((X - mean) / scale) @ weights + bias)."""

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    l2: float
    iterations: int

    def decision(self, X: np.ndarray) -> np.ndarray:
        return ((np.asarray(X, dtype=np.float64) - self.mean) / self.scale) @ self.weights + self.bias

    def proba(self, X: np.ndarray) -> np.ndarray:
        """The probability of the positive class for each row of ``X``."""
        return sigmoid(self.decision(X))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "logistic", "names": list(self.names), "mean": self.mean.tolist(),
                "scale": self.scale.tolist(), "weights": self.weights.tolist(), "bias": self.bias, "l2": self.l2,
                "iterations": self.iterations}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Logistic:
        return cls(tuple(d["names"]), np.asarray(d["mean"], dtype=np.float64),
                   np.asarray(d["scale"], dtype=np.float64), np.asarray(d["weights"], dtype=np.float64),
                   float(d["bias"]), float(d["l2"]), int(d["iterations"]))


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
