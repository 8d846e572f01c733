"""The ``learned`` rewriter (``--rewriter learned``): the trained gate and term selector, composed through the
language pack, checked by the guard, combined with the rules where the rules are surer.

How a turn goes (``LearnedRewriter.rewrite``); every threshold is a constructor parameter, the defaults are the
combination chosen out of fold and vetoed on the evaluation-only sets (docs/LEARNED.md, "Precision first"):

1. The rules' ``Decision`` (``gate.needs_rewrite``, cached per turn; the pipeline hands it on). Where it says the
   rules are certain (``rewrite.enhance.RULES_SURE``: an ordinal into a listed answer, an accepted offer) the rule
   rewriter answers, as ``auto`` lets it answer without the LLM; a rule answer that falls back goes on to step 2.
2. The gate. In the languages of ``LEARNED_GATE`` (English) the learned gate may override the rules' verdict, but
   asymmetrically and only when very sure: a turn the rules call standalone is rewritten at learned probability
   ``rewrite_at`` or above, a turn the rules would rewrite is left alone below ``standalone_below``. The defaults
   (``REWRITE_AT`` = ``NEVER``, ``STANDALONE_BELOW`` = 0) mean the learned gate never overrides: no threshold of the
   grid kept exact match on every training set (the learned gate's overrides cost EM on CANARD, CAsT 2019, CamRest
   and iKAT 2024 at every threshold tried). Elsewhere (Chinese) the rules' verdict stands (phase 1: the learned
   gate is far below the rules on the evaluation-only Chinese sets).
3. Where the turn needs a rewrite and the rules' gate says so too, the rule rewriter's output. When it holds none
   of the terms the selector chose and the surest has probability ``rules_append_min`` or more (a number, or one
   per language), that term is appended; default ``NEVER``: appending cost the search follow-ups 4 cases (86.5% →
   82.3%) in English and exact match on Su 2019 and Restoration-200K in Chinese. Where the rules' gate says rewrite
   but their steps placed nothing (``fill_rule_gaps``), English only: the learned composition (``learned.compose``),
   kept only when its placement is one of ``placements`` (default: substitution of a pronoun or demonstrative;
   insertion and plain appending added words the humans did not). In Chinese a rule rewrite that placed nothing
   stays the question as typed. Anything else: the question as typed.
4. The guard: the output may only add words of the history, the question or the topic (``unfaithful_words``) and
   must read as fluent (``fluency_repair`` / ``fluency_problem``); if not, the question as typed, ``fell_back``.

``keep_named`` (off by default; it matters only when the learned gate may override): a question with a proper name
of its own and no pronoun keeps the rules' "standalone".

Precision first: a turn the gate lets through unchanged, or no candidate reaching the term threshold, leaves the
question as typed. ``cost`` is ``"compute"``, not ``"pure"``: the arithmetic is small (boosted trees for the gate on
50 turn features, a logistic regression on 84 candidate features, numpy), but the first call reads the model file
(about 70 ms) and a turn reads the Analysis a second time for the features (bench: p50 1.0 ms, p99 9 ms on a loaded
2-core machine), past the millisecond the server's event loop may spend on a "pure" rewriter (``Rewriter.cost``).

Out of fold: ``out_of_fold(path)`` (the evaluation calls it with its data file) makes every record of a training
file scored by the fold model that never saw its dialog (``learned.oof``: the fold models are read from
``research/learned/folds.json.gz`` of the checkout, not from the shipped file); the reason of each turn names the fold.
A search never calls it: ``get_rewriter("learned")`` answers every turn with the full model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..lang import detect, reading
from ..resolve.entities import mentions
from ..resolve.gate import needs_rewrite
from ..resolve.guard import fluency_problem, fluency_repair, unfaithful_words
from ..resolve.rules import RuleRewriter
from ..resolve.shapes import asked_form, with_courtesy
from ..rewrite.enhance import RULES_SURE
from ..types import Decision, Message, RewriteResult
from .compose import How, append_terms
from .oof import FoldMap, fold_map, with_folds
from .resolver import Resolved, Resolver, Scores

LEARNED_GATE = frozenset({"en"})  # languages whose gate decision is the learned gate's (the rest: the rules')
LEARNED_TERMS = frozenset({"en", "zh"})  # languages whose rewrite uses the learned term selector
APPEND_MIN = 0.5  # a term with no fluent place is appended only at this selection probability or above
NEVER = 1.01  # a probability threshold no turn reaches
# How the learned parts combine with the rules: chosen on the training sets out of fold, then vetoed on the
# evaluation-only sets (docs/LEARNED.md, "Precision first"; research/learned/combine_grid.py).
REWRITE_AT = NEVER  # learned gate: rewrite a turn the rules call standalone only at this probability or above
STANDALONE_BELOW = 0.0  # learned gate: leave a turn the rules would rewrite only below this probability
RULES_APPEND_MIN = NEVER  # the surest term appended to the rules' own rewrite only at this probability
ALL_PLACEMENTS = frozenset({How.SUBSTITUTION, How.SLOT_SWAP, How.INSERTION, How.APPENDED})
PLACEMENTS = frozenset({How.SUBSTITUTION})  # how a learned composition may put its terms in (others: as typed)
FILL_RULE_GAPS = False  # the rules' gate says rewrite, their steps placed nothing: compose (off: MuDoCo veto)

class LearnedRewriter:
    """The trained resolver behind the ``Rewriter`` contract (see the module docstring for how it combines with the
    rules). ``path``: a model file (default: the shipped ``convsearch/models/learned.json``)."""

    name = "learned"
    uncertain_below = 0.0

    def __init__(self, path: Path | str | None = None, *, learned_gate: frozenset[str] = LEARNED_GATE,
                 learned_terms: frozenset[str] = LEARNED_TERMS, rewrite_at: float = REWRITE_AT,
                 standalone_below: float = STANDALONE_BELOW, append_min: float = APPEND_MIN,
                 rules_append_min: float | Mapping[str, float] = RULES_APPEND_MIN,
                 placements: frozenset[How] = PLACEMENTS, keep_named: bool = False,
                 fill_rule_gaps: bool = FILL_RULE_GAPS) -> None:
        self.resolver = Resolver(path)
        self.rules = RuleRewriter()
        self.learned_gate = learned_gate
        self.learned_terms = learned_terms
        self.rewrite_at = rewrite_at  # (the learned gate's languages) override the rules' "standalone" at p >= this
        self.standalone_below = standalone_below  # ... and the rules' "rewrite" at p < this
        self.append_min = append_min  # learned composition with no fluent place: append only at p >= this
        self.rules_append_min = rules_append_min  # the surest term after the rules' rewrite: at p >= this (per lang)
        self.placements = placements  # the placements a learned composition may use
        self.keep_named = keep_named  # a question with its own proper name and no pronoun: the rules' standalone holds
        self.fill_rule_gaps = fill_rule_gaps  # the rules' gate says rewrite but their steps placed nothing: compose
        self.folds: FoldMap | None = None

    def _rules_append_min(self, lang: str) -> float:
        m = self.rules_append_min
        return m.get(lang, NEVER) if isinstance(m, Mapping) else m

    cost = "compute"  # loads a model on first use and takes several ms at p99: see the module docstring

    def close(self) -> None:
        """Nothing to release (the model file stays loaded for the process)."""

    def out_of_fold(self, data: Path | str, folds: Path | str | None = None) -> str | None:
        """Score the records of ``data`` out of fold when it is a training file of the model (returns its set's
        name), else use the full model (returns None). ``folds``: the fold-models file (default
        ``learned.oof.FOLD_MODELS``)."""
        self.resolver.use(None)
        self.folds = fold_map(data, self.resolver.models)
        if self.folds:
            self.resolver.use(with_folds(self.resolver.models, folds))
        return self.folds.dataset if self.folds else None

    def resolve(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                needed: bool | None = None, scored: Scores | None = None) -> Resolved:
        """The learned resolver's answer on this turn (the fold model when out of fold applies; ``needed``: the
        gate verdict to compose on, when it is not the learned gate's; ``scored``: ``Resolver.score`` of this turn
        with that fold model, when the caller has it)."""
        fold = self.folds.fold(history, query) if self.folds else None
        return self.resolver.resolve(history, query, topic, fold=fold, needed=needed, scored=scored)

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None, scored: Scores | None = None) -> RewriteResult:
        lang = detect(query).code
        asked = asked_form(query, lang)
        decision = decision or needs_rewrite(history, asked, topic=topic, lang=lang)
        if decision.kind in RULES_SURE:
            done = self.rules.rewrite(history, query, topic=topic, decision=decision)
            if not done.fell_back:
                return replace(done, method=self.name, reason=f"rules sure ({decision.kind.value}): {done.reason}")
        gate_learned = lang in self.learned_gate
        # the learned gate's languages: scores and a composition whatever the gate says (the verdict is ours below)
        r = self.resolve(history, query, topic=topic, needed=True if gate_learned else decision.needed, scored=scored)
        tag = f"[{'fold ' + str(r.fold) if r.fold is not None else 'full model'}]"
        if gate_learned:
            need = r.gate >= (self.standalone_below if decision.needed else self.rewrite_at)
            if need and not decision.needed and self.keep_named and _named_and_complete(query, lang):
                return RewriteResult(query, query, self.name, f"rules' gate: standalone ({decision.reason}); the "
                                     f"question names its own subject: learned gate {r.gate:.2f} not followed {tag}",
                                     False)
            if not need:
                why = (f"learned gate {r.gate:.2f} < {self.standalone_below:.2f}: standalone, over the rules' "
                       "rewrite" if decision.needed else f"rules' gate: standalone ({decision.reason}); learned gate "
                       f"{r.gate:.2f} < {self.rewrite_at:.2f}")
                return RewriteResult(query, query, self.name, f"{why} {tag}", False)
        elif not decision.needed:
            return RewriteResult(query, query, self.name, f"rules' gate: standalone ({decision.reason}); learned "
                                 f"gate {r.gate:.2f} {tag}", False)
        terms = lang in self.learned_terms
        if decision.needed:
            done = self.rules.rewrite(history, query, topic=topic, decision=decision)
            if done.changed and not done.fell_back:
                out = done.rewritten
                top = next((c for c in r.candidates if c.selected), None)
                if terms and top is not None and top.prob >= self._rules_append_min(lang) \
                        and not any(c.selected and c.text.lower() in out.lower() for c in r.candidates):
                    # the rules placed none of the terms the selector is sure of: add the surest after their rewrite
                    return self._checked(query, append_terms(out, [top.text]), history, topic,
                                         f"rules' rewrite ({done.reason}) + appended {top.text!r} "
                                         f"(p={top.prob:.2f}) {tag}")
                return replace(done, method=self.name, reason=f"rules' rewrite: {done.reason}; {r.reason} {tag}")
            if not self.fill_rule_gaps:
                return RewriteResult(query, query, self.name, f"the rules placed nothing ({done.reason}): left as "
                                     f"typed; {r.reason} {tag}", done.fell_back)
        if terms and gate_learned and r.changed:  # (Chinese: the rules' own no-rewrite stands, measured on CrossWOZ)
            if r.how not in self.placements:
                return RewriteResult(query, query, self.name, f"{r.reason}; placement {r.how.value!r} not used: "
                                     f"left as typed {tag}", False)
            if r.how is How.APPENDED and r.candidates[0].prob < self.append_min:
                return RewriteResult(query, query, self.name, f"{r.reason}; no fluent place and p < "
                                     f"{self.append_min}: left as typed {tag}", False)
            out = r.rewrite if asked == query else with_courtesy(query, r.rewrite, lang)
            return self._checked(query, out, history, topic, f"{r.reason} {tag}")
        return RewriteResult(query, query, self.name, f"{r.reason}; no rewrite placed {tag}", False)

    def _checked(self, query: str, out: str, history: Sequence[Message], topic: str | None,
                 how: str) -> RewriteResult:
        bad = unfaithful_words(out, query, history, topic)
        if bad:
            return RewriteResult(query, query, self.name, f"unfaithful rewrite rejected ({', '.join(sorted(bad))}); "
                                 f"{how}", True)
        out = fluency_repair(out, query)
        why = fluency_problem(out, query)
        if why:
            return RewriteResult(query, query, self.name, f"{how}; not fluent, rejected: {why}", True)
        return RewriteResult(query, out, self.name, how, False)


def _named_and_complete(query: str, lang: str) -> bool:
    """The question holds a proper name of its own and no pronoun (a complete question about a named subject)."""
    return not reading(lang).has_pronoun(query) and any(m.proper for m in mentions(query, lang))


__all__ = ["ALL_PLACEMENTS", "LEARNED_GATE", "LEARNED_TERMS", "NEVER", "PLACEMENTS", "LearnedRewriter"]
