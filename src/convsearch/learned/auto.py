"""``auto`` with the learned resolver: the offline answer first, the LLM only on turns it is unsure of (issue 26,
item 4).

``AskWhenUnsure(llm, learned, below)`` is the enhancer ``auto_rewriter`` builds when the learned model file is
present. Per turn (``assess``):

1. The rules' ``Decision`` (the pipeline hands it on; else the gate runs once here, on the question as
   ``LearnedRewriter`` reads it). Where it says the rules are certain (``RULES_SURE``: an ordinal into a listed
   answer, an accepted offer) and the rules answer without falling back, that answer stands: no LLM call, as in
   the rule-only ``auto``; so does a turn with nothing to ask about (``NOTHING_TO_ASK``: no history or topic, or a
   thanks or goodbye).
2. Otherwise the learned rewriter's answer is the offline answer, and the turn's **confidence** is the model
   file's learned doubt over that answer (``learned.ask``: two models read the turn with its offline answer and
   rank it among the training turns of its language by how likely an LLM answering like the annotator would
   retrieve better; 0.2 means 20% of such training turns looked more doubtful). A model file without that section
   falls back to the resolver's own confidence (``Resolved.confidence``, the smallest threshold margin of the gate
   and the selection; in a language whose gate is the rules', the smaller of it and ``Decision.confidence``).
   ``Assessed.source`` says which ("doubt" or "resolver"), ``Assessed.row`` holds the doubt's features.
3. ``confidence < below`` → the LLM is asked (``inner``: the LLM enhancer with its guard); its answer is used, and
   when it falls back (timeout, guard, error) the offline answer is (``fell_back`` set, the reasons joined, as in
   ``Chain``). ``confidence >= below`` → the offline answer, no LLM call.

Every result's reason (the trace's) and first step begin with which way the turn went and why: ``learned confidence
0.12 < 0.51: asked the LLM`` or ``learned confidence 0.62 >= 0.51: no LLM call``. ``below = 0`` never asks;
``below > 1`` asks on every turn the rules are not sure of. The threshold is a setting
(``CONVSEARCH_LLM_UNSURE_BELOW``, default ``UNSURE_BELOW``; negative: the rules' ``auto``, which asks on every turn
their gate sends on); ``UNSURE_BELOW`` is the value chosen on the folds of the training sets with an oracle
standing in for the LLM (``convsearch eval oracle``; docs/BENCHMARKS.md gives the curve, how it was chosen, and the
rules' ``auto`` beside it).

The pipeline consults this rewriter on every turn (``uncertain_below`` above any confidence): the learned gate,
not the rules' standalone verdict, decides whether an English turn needs anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..lang import detect
from ..resolve.gate import needs_rewrite
from ..resolve.shapes import asked_form
from ..rewrite.enhance import LLM, RULES_SURE, Enhanced, Enhancer, EnhanceRequest, EnhancerRewriter, from_rewrite
from ..types import Decision, DecisionKind
from .ask import ask_models, ask_row
from .rewriter import LearnedRewriter

UNSURE_BELOW = 0.51  # chosen on the folds of iKAT 2023 train + CANARD dev (docs/BENCHMARKS.md, "auto with an oracle")
ALWAYS = 2.0  # an ``uncertain_below`` above every confidence: the pipeline hands every turn to the rewriter
# no history or topic to resolve against, or nothing to search for (thanks, goodbyes): never worth an LLM call
NOTHING_TO_ASK = frozenset({DecisionKind.NO_CONTEXT, DecisionKind.SOCIAL})


@dataclass(frozen=True, slots=True)
class Assessed:
    """The offline side of one turn: the learned (or sure rules') answer, its confidence, and whether the LLM may
    be asked at all (False where the rules are sure)."""

    offline: Enhanced
    confidence: float
    askable: bool
    decision: Decision
    row: np.ndarray | None = field(default=None, compare=False, repr=False)  # ``learned.ask.ask_row`` (askable)
    source: str = "rules"  # what the confidence is: "doubt" (``learned.ask``), "resolver", or "rules" (sure)

    def asks(self, below: float) -> bool:
        """Whether ``auto`` with threshold ``below`` asks the LLM on this turn."""
        return self.askable and self.confidence < below


class AskWhenUnsure:
    """The learned rewriter's answer, and the LLM (``inner``) only where its confidence is below ``below`` (see the
    module docstring)."""

    def __init__(self, inner: Enhancer, learned: LearnedRewriter | None = None, *, below: float = UNSURE_BELOW) -> None:
        self.inner = inner
        self.learned = learned if learned is not None else LearnedRewriter()
        self.below = below
        self.name = f"ask_when_unsure({inner.name})"

    def assess(self, request: EnhanceRequest) -> Assessed:
        """The offline answer and its confidence (no LLM call). The turn is scored once (``Resolver.score``, by the
        fold model when out of fold applies) and that score serves the learned answer, the resolver's confidence
        and the doubt's row."""
        lr = self.learned
        q, history, topic = request.query, request.history, request.topic
        lang = detect(q).code
        d = request.decision or needs_rewrite(history, asked_form(q, lang), topic=topic, lang=lang)
        if d.kind in NOTHING_TO_ASK or d.kind in RULES_SURE:
            done = lr.rewrite(history, q, topic=topic, decision=d)
            if d.kind in NOTHING_TO_ASK or not done.fell_back:
                return Assessed(from_rewrite(done), 1.0, False, d)
        fold = lr.folds.fold(history, q) if lr.folds else None
        scored = lr.resolver.score(history, q, topic, lang, fold=fold)
        if d.kind not in RULES_SURE:  # (a sure turn whose rules fell back was answered above)
            done = lr.rewrite(history, q, topic=topic, decision=d, scored=scored)
        offline = from_rewrite(done)
        gate_learned = lang in lr.learned_gate
        r = lr.resolver.resolve(history, q, topic, lang, fold=fold, needed=None if gate_learned else d.needed,
                                scored=scored)
        conf = r.confidence if gate_learned else min(r.confidence, d.confidence)
        row = ask_row(*scored, offline.query, conf)
        doubt = ask_models(lr.resolver.models)
        if doubt is None:
            return Assessed(offline, conf, True, d, row, "resolver")
        return Assessed(offline, doubt.pick(fold).confidence(row), True, d, row, "doubt")

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        a = self.assess(request)
        off = a.offline
        if not a.askable:
            why = (f"nothing to ask ({a.decision.kind.value}): no LLM call" if a.decision.kind in NOTHING_TO_ASK
                   else f"rules sure ({a.decision.kind.value}): no LLM call")
        elif not a.asks(self.below):
            why = f"learned confidence {a.confidence:.2f} >= {self.below:.2f}: no LLM call"
        else:
            why = f"learned confidence {a.confidence:.2f} < {self.below:.2f}: asked the LLM"
            asked = self.inner.enhance(replace(request, decision=a.decision))
            if not asked.fell_back:
                return replace(asked, reason=f"{why}; {asked.reason}", steps=(why, *asked.steps))
            return replace(off, reason=f"{why}; {asked.reason}; {off.method}: {off.reason}", fell_back=True,
                           steps=(why, *asked.steps, *off.steps), llm_calls=(*asked.llm_calls, *off.llm_calls))
        return replace(off, reason=f"{why}; {off.reason}", steps=(why, *off.steps))

    def close(self) -> None:
        self.inner.close()
        self.learned.close()


def learned_auto(llm: Any, *, below: float = UNSURE_BELOW, path: Path | str | None = None, **llm_kw: Any) -> Any:
    """``auto`` on the learned rewriter: an ``EnhancerRewriter`` named ``auto`` over ``AskWhenUnsure`` (the LLM
    enhancer built with ``llm_kw``: window, cache, budget, guard limits), consulted by the pipeline on every turn;
    None when the model file is absent (the caller builds the rule-based ``auto``)."""
    if not learned_available(path):
        return None
    rw = EnhancerRewriter(AskWhenUnsure(LLM(llm, **llm_kw), LearnedRewriter(path), below=below), name="auto",
                          uncertain_below=ALWAYS)
    rw.llm = llm  # type: ignore[attr-defined]  # for stats and benchmarks, as auto_rewriter does
    return rw


def learned_available(path: Path | str | None = None) -> bool:
    """Whether the learned model file (default: the shipped one) is there to load."""
    from .resolver import MODEL_PATH

    return Path(path or MODEL_PATH).is_file()


__all__ = ["ALWAYS", "AskWhenUnsure", "Assessed", "NOTHING_TO_ASK", "UNSURE_BELOW", "learned_auto", "learned_available"]
