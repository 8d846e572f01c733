"""The one rewriter contract (``Rewriter``) and the trivial rewriters (``Passthrough``, ``Scripted``).

Every rewriter the pipeline can hold meets it: the rules, the learned rewriter, the LLM rewriters, the compositions
of ``rewrite.enhance`` (``Chain``, ``Gated``, ``auto`` …, whose parts are rewriters too) and a plug-in's
(``convsearch.plugins``). ``convsearch.testing.rewriters.RewriterContract`` is the pytest suite that checks one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..types import Decision, Message, RewriteResult


@runtime_checkable
class Rewriter(Protocol):
    """Turns the last user query into a standalone one, given the (already windowed) history.

    ``decision`` is the gate's verdict on this turn when the caller already has it (the pipeline gates once
    and hands it on); a rewriter given none asks the gate itself. ``uncertain_below``: the pipeline also asks
    about standalone verdicts less sure than this (the LLM path; 0.0 for the rest). ``close()`` releases what
    the rewriter holds (an LLM client), a no-op for the offline ones.

    ``cost`` says what a call may wait on, read once by whoever schedules the turn: ``"pure"`` (CPU work of about
    a millisecond: the server may run it on its event loop), ``"compute"`` (may load or run a model in this
    process: the embedder), ``"io"`` (may wait on the network: an LLM; batch runners call it from several
    threads). A rewriter that does not say is taken as ``"io"``."""

    name: str
    uncertain_below: float

    @property
    def cost(self) -> str: ...

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None) -> RewriteResult: ...

    def close(self) -> None: ...


class Passthrough:
    """Returns the query unchanged: the copy baseline (``CONVSEARCH_REWRITER=passthrough``), the as-typed part of a
    composition (``rewrite.enhance``), and the test double."""

    name = "passthrough"
    uncertain_below = 0.0
    cost = "pure"

    def close(self) -> None:
        """Nothing to release."""

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None) -> RewriteResult:
        return RewriteResult(query, query, "passthrough", "passthrough rewriter", False)


class Scripted:
    """Test double: returns scripted rewrites by query text, the original otherwise."""

    name = "scripted"
    uncertain_below = 0.0
    cost = "pure"

    def close(self) -> None:
        """Nothing to release."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = dict(answers)
        self.calls: list[tuple[tuple[Message, ...], str]] = []

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None) -> RewriteResult:
        self.calls.append((tuple(history), query))
        if query in self.answers:
            return RewriteResult(query, self.answers[query], "scripted", "scripted answer", False)
        return RewriteResult(query, query, "scripted", "no scripted answer", True)
