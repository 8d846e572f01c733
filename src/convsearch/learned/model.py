"""A fitted L2-regularised logistic regression at inference: ``proba(X)`` from the JSON dict the model file
stores. Predict only; the fit (Newton's method, numpy) is ``research/learned/fit.py``'s ``fit_logistic``.

>>> m = Logistic(("x",), np.zeros(1), np.ones(1), np.array([2.0]), -3.0, 0.1, 5)
>>> (m.proba(np.array([[0.0], [1.0], [2.0], [3.0]])) > 0.5).astype(int).tolist()
[0, 0, 1, 1]
>>> Logistic.from_dict(m.to_dict()).proba(np.array([[1.0]])).tolist() == m.proba(np.array([[1.0]])).tolist()
True
"""

from __future__ import annotations

from collections.abc import Mapping
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


__all__ = ["Logistic", "sigmoid"]
