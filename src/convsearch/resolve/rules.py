"""The offline rule rewriter (zh + en).

Given the windowed history, it finds the conversation's focus (``entities.find_focus``) and applies the
first operation that fits the query:

1. **entity swap** — an ellipsis whose new entity has the same kind as one in the previous question's frame
   puts it there ("深圳最近三天适合露营吗？" + "那番禺呢？" → "番禺最近三天适合露营吗"; "what about NovaDB?");
2. **ellipsis completion** — otherwise the ellipsis is attached to the focus ("价格呢？" → "AnySearch 的价格");
3. **pronoun → entity** — the first pronoun or demonstrative standing for the focus is replaced
   (possessives get "'s" in English);
4. **frame completion** — a query that names nothing gets the focus as its subject
   ("那审批需要多久？" after 入职流程 → "入职流程的审批需要多久").

The operations are ordered lists of small named steps per language (``lang.zh.steps.REWRITE_STEPS``,
``lang.en.steps.REWRITE_STEPS``, gathered in ``rewrite.steps``), run by ``compose.first``: the first step
returning an ``Outcome`` ends the rewrite. This module is the runner; what the steps write with is ``compose``.

The gate runs first: a standalone query comes back exactly as typed. The output may only add words found
in the history, the query or the topic; if not, the original is returned with ``fell_back=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .gate import needs_rewrite
from .analysis import Analysis
from .shapes import asked_form, with_courtesy
from ..lang import detect
from ..types import Decision, Message, RewriteResult
from .compose import (Outcome)
from .entities import mentions
from .focus import Focus
from .guard import fluency_problem, fluency_repair, unfaithful_words
from .stated import carry_constraints
from . import similar
from .scoring import Resolution, RuleTurn
from .steps import FALLBACK, RESOLVE, REWRITE_STEPS, RULE_STEPS

__all__ = ["Outcome", "RuleRewriter"]



class RuleScorer:
    """The rule half of the decision: the language's ``RULE_STEPS`` in order (the first that decides wins; some
    annotate the focus for the later ones), then its rewrite steps (``RESOLVE``); the result is a ``Resolution``
    the rewriter carries out."""

    def decide(self, t: RuleTurn) -> Resolution:
        for step in RULE_STEPS.get(t.lang) or RULE_STEPS[FALLBACK]:
            done = step(t)
            if done is not None:
                return done
        resolve = RESOLVE.get(t.lang) or RESOLVE[FALLBACK]
        out, op = resolve(t.query, t.focus, t.history, t.topic, REWRITE_STEPS.get(t.lang) or REWRITE_STEPS[FALLBACK])
        if out is None or not out.strip():
            return Resolution(None, t.why(op), "keep", checked=False)
        return Resolution(out, t.why(op), "steps")


class RuleRewriter:
    """Offline rewriter for Chinese and English follow-ups; pure and cheap (no I/O; the embedder is asked only to
    break a tie the lexicons leave, see ``rewrite.similar``)."""

    name = "rules"
    uncertain_below = 0.0  # the gate decides alone: a standalone verdict is never second-guessed

    def __init__(self) -> None:
        self.scorer = RuleScorer()

    @property
    def cost(self) -> str:
        """``"compute"`` where the shipped embedder is installed (a tie the lexicons leave is broken by embedding,
        the first time loading the model: ``rewrite.similar``), else ``"pure"``."""
        return "compute" if similar.available() else "pure"

    def close(self) -> None:
        """Nothing to release."""

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None) -> RewriteResult:
        lang = detect(query).code
        asked = asked_form(query, lang)
        if asked == query:
            return self._rewrite(history, query, topic, decision, lang)
        # "and on Windows" is read as "and on Windows?", "请问那广州呢" as "那广州呢"; the result keeps what was typed
        done = self._rewrite(history, asked, topic, decision, lang)
        out = query if done.rewritten == asked else with_courtesy(query, done.rewritten, lang)
        return replace(done, original=query, rewritten=out)

    def _rewrite(self, history: Sequence[Message], query: str, topic: str | None, decision: Decision | None,
                 lang: str) -> RewriteResult:
        decision = decision or needs_rewrite(history, query, topic=topic, lang=lang)
        a = decision.analysis
        if a is None or not a.matches(tuple(history), query, topic):  # a Decision of another turn: read this one
            a = Analysis(tuple(history), query, topic, lang)
        turn = RuleTurn(a, decision, query, history, topic, lambda f: self._resolve_frame(history, f, topic))
        done = self.scorer.decide(turn)
        if done.out is None or not done.checked:
            return RewriteResult(query, query, "rules", done.reason, False)
        return self._checked(query, done.out, history, topic, done.reason, carry=done.carry)

    @staticmethod
    def _checked(query: str, out: str, history: Sequence[Message], topic: str | None, how: str, *,
                 carry: bool = True) -> RewriteResult:
        """The rewrite (with what the user stated about themselves and it lacks, unless ``carry`` is off: it was
        added already) if it only adds words found in the history, the query or the topic; else the query."""
        if carry and (carried := carry_constraints(query, out, history, detect(query).code)):
            out, how = carried[0], f"{how}; {carried[1]}"
        bad = unfaithful_words(out, query, history, topic)
        if bad:
            return RewriteResult(query, query, "rules", f"unfaithful rewrite rejected ({', '.join(sorted(bad))})", True)
        out = fluency_repair(out, query)
        why = fluency_problem(out, query)
        if why:
            return RewriteResult(query, query, "rules", f"{how}; not fluent, rejected: {why}", True)
        return RewriteResult(query, out, "rules", how, False)


    def _resolve_frame(self, history: Sequence[Message], focus: Focus, topic: str | None) -> Focus:
        """Use the previous question as it was meant: "那么杭州呢？" after "那番禺呢？" fills the frame
        "番禺最近三天适合露营吗", not "那番禺呢". One level deep (that rewrite sees its own resolved frame)."""
        idx = max((i for i, m in enumerate(history) if m.role == "user" and m.content == focus.frame), default=None)
        if idx is None or idx == 0:
            return focus
        prev = history[idx]
        resolved = self.rewrite(history[:idx], prev.content, topic=topic)
        if not resolved.changed or resolved.fell_back:
            return focus
        return replace(focus, frame=resolved.rewritten,
                       frame_mentions=tuple(mentions(resolved.rewritten)))
