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

The operations are ordered lists of small named steps per language (``Language.rules`` and ``Language.rewrite``:
``lang/zh/steps.py``, ``lang/en/steps.py``), run by the ``RuleScorer`` (``resolve.scoring``): the first step
that decides ends the rewrite. This module carries the scorer's Resolution out: composition, the guard, the
``RewriteResult``; what the steps write with is ``compose``.

The gate runs first: a standalone query comes back exactly as typed. The output may only add words found
in the history, the query or the topic; if not, the original is returned with ``fell_back=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..types import Decision, Message, RewriteResult
from . import similar
from .analysis import Analysis, analyse
from .compose import Outcome
from .entities import mentions
from .focus import Focus
from .gate import decide
from .language import detect
from .guard import fluency_problem, fluency_repair, unfaithful_words
from .scoring import RuleScorer, Scorer
from .shapes import with_courtesy
from .stated import carry_constraints

__all__ = ["Outcome", "RuleRewriter", "RuleScorer"]


class RuleRewriter:
    """Offline rewriter for Chinese and English follow-ups; pure and cheap (no I/O; the embedder is asked only to
    break a tie the lexicons leave, see ``resolve.similar``). ``scorer`` decides (default: the rules); this class
    composes and guards what it decided."""

    name = "rules"
    uncertain_below = 0.0  # the gate decides alone: a standalone verdict is never second-guessed

    def __init__(self, scorer: Scorer | None = None) -> None:
        self.scorer = scorer if scorer is not None else RuleScorer(self._resolve_frame)

    @property
    def cost(self) -> str:
        """``"compute"`` where the shipped embedder is installed (a tie the lexicons leave is broken by embedding,
        the first time loading the model: ``resolve.similar``), else ``"pure"``."""
        return "compute" if similar.available() else "pure"

    def close(self) -> None:
        """Nothing to release."""

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None, analysis: Analysis | None = None) -> RewriteResult:
        """``analysis`` is the turn's (``analysis.analyse``), when the caller built it already; ``decision`` the
        gate's verdict on it."""
        a = analysis if analysis is not None and analysis.matches(history, query, topic) else None
        if a is None:
            a = analyse(history, query, topic)
            if analysis is not None:
                decision = None  # the decision went with an analysis of another turn
        done = self._rewrite(a, decision or decide(a))
        if a.query == query:
            return done
        # "and on Windows" is read as "and on Windows?", "请问那广州呢" as "那广州呢"; the result keeps what was typed
        out = query if done.rewritten == a.query else with_courtesy(query, done.rewritten, a.lang)
        return replace(done, original=query, rewritten=out)

    def _rewrite(self, a: Analysis, decision: Decision) -> RewriteResult:
        done = self.scorer.decide(a, decision)
        if done.out is None or not done.checked:
            return RewriteResult(a.query, a.query, "rules", done.reason, False)
        return self._checked(a.query, done.out, a.history, a.topic, done.reason, carry=done.carry, lang=a.lang)

    @staticmethod
    def _checked(query: str, out: str, history: Sequence[Message], topic: str | None, how: str, *,
                 carry: bool = True, lang: str | None = None) -> RewriteResult:
        """The rewrite (with what the user stated about themselves and it lacks, unless ``carry`` is off: it was
        added already) if it only adds words found in the history, the query or the topic; else the query."""
        if carry and (carried := carry_constraints(query, out, history, lang or detect(query).code)):
            out, how = carried[0], f"{how}; {carried[1]}"
        bad = unfaithful_words(out, query, history, topic)
        if bad:
            return RewriteResult(query, query, "rules", f"unfaithful rewrite rejected ({', '.join(sorted(bad))})", True)
        out = fluency_repair(out, query)
        why = fluency_problem(out, query)
        if why:
            return RewriteResult(query, query, "rules", f"{how}; not fluent, rejected: {why}", True)
        return RewriteResult(query, out, "rules", how, False)


    def _resolve_frame(self, a: Analysis, focus: Focus) -> Focus:
        """Use the previous question as it was meant: "那么杭州呢？" after "那番禺呢？" fills the frame
        "番禺最近三天适合露营吗", not "那番禺呢". One level deep (that rewrite sees its own resolved frame)."""
        history = a.history
        idx = max((i for i, m in enumerate(history) if m.role == "user" and m.content == focus.frame), default=None)
        if idx is None or idx == 0:
            return focus
        prev = history[idx]
        resolved = self.rewrite(history[:idx], prev.content, topic=a.topic)
        if not resolved.changed or resolved.fell_back:
            return focus
        return replace(focus, frame=resolved.rewritten,
                       frame_mentions=tuple(mentions(resolved.rewritten)))
