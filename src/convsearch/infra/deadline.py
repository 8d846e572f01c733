"""One Deadline for every step that waits on something: the LLM client, the pipeline's fan-out, the server.

A Deadline is a point in time (monotonic clock) and the budget it was made from. Steps take what is left
(``remaining()``), never their own fresh budget, so a turn's time is spent once; ``child(budget_s)`` gives a
sub-step the smaller of its own budget and what is left of the parent's.

>>> d = Deadline(2.0)
>>> 1.9 < d.remaining() <= 2.0
True
>>> d.child(0.5).remaining() <= 0.5
True
"""

from __future__ import annotations

import time

# Below this, starting another attempt (an HTTP call, a search) cannot finish in time: treat it as expired.
MIN_ATTEMPT_S = 0.005


class Deadline:
    """A point in time a step must finish by; ``remaining()`` is what is left of its budget (seconds)."""

    __slots__ = ("budget_s", "end")

    def __init__(self, budget_s: float, *, end: float | None = None) -> None:
        self.budget_s = budget_s
        self.end = time.perf_counter() + budget_s if end is None else end

    @classmethod
    def never(cls) -> Deadline:
        """A deadline that does not expire (a caller that set none)."""
        return cls(float("inf"), end=float("inf"))

    def remaining(self) -> float:
        return self.end - time.perf_counter()

    def expired(self, margin_s: float = MIN_ATTEMPT_S) -> bool:
        """True when less than ``margin_s`` is left: too little to start another attempt."""
        return self.remaining() <= margin_s

    def child(self, budget_s: float | None) -> Deadline:
        """A sub-step's deadline: its own budget, cut to what is left of this one."""
        if budget_s is None:
            return Deadline(self.budget_s, end=self.end)
        return Deadline(budget_s, end=min(self.end, time.perf_counter() + budget_s))

    def __repr__(self) -> str:
        return f"Deadline(remaining={self.remaining():.3f}s of {self.budget_s:g}s)"


__all__ = ["MIN_ATTEMPT_S", "Deadline"]
