"""The learned resolver as a ``Scorer`` (``resolve.scoring``): the second half of the decision, after the gate,
answered by the trained term selector instead of the rule steps.

``LearnedScorer().decide(analysis, decision)`` reads the turn the gate read (the window, the question in its asked
form, the topic, the language) and returns a ``Resolution``: the question with the selected terms composed in
(``learned.compose``: substitution, slot swap, insertion, appended), or no rewrite with the resolver's reason. The
rule rewriter carries it out as it carries out the rules' (stated constraints, the guard, the courtesy put back)::

    RuleRewriter(scorer=LearnedScorer())   # the rules' gate, the learned composition, the rules' guard

The gate's verdict decides whether to compose (``needed=decision.needed``: the learned gate's probability is in the
reason only). The shipped ``learned`` rewriter (``learned.rewriter``) is a policy over both resolvers; this class is
the learned one alone, behind the same protocol as ``RuleScorer``.
"""

from __future__ import annotations

from pathlib import Path

from ..resolve.analysis import Analysis
from ..resolve.scoring import Resolution
from ..types import Decision
from .compose import How
from .resolver import Resolver


class LearnedScorer:
    """``Scorer`` over the learned term selector (``path``: a model file; default: the shipped one)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.resolver = Resolver(path)

    def decide(self, a: Analysis, decision: Decision) -> Resolution:
        why = f"gate: {decision.reason}"
        if not decision.needed:
            return Resolution(None, why, "keep", checked=False)
        r = self.resolver.resolve(a.history, a.query, a.topic, a.lang, needed=True)
        if r.how is How.UNCHANGED or r.rewrite == a.query:
            return Resolution(None, f"{why}; {r.reason}", "keep", checked=False)
        return Resolution(r.rewrite, f"{why}; {r.reason}", f"learned {r.how.value}")


__all__ = ["LearnedScorer"]
