"""Composing rewriters: one contract (``Rewriter``, ``rewrite.base``), and the parts that combine rewriters.

Every class here is a ``Rewriter`` (``rewrite(history, query, topic=, decision=) -> RewriteResult``, ``name``,
``close()``), and any rewriter can be one of their parts: the rules, an LLM, the learned rewriter, a plug-in's.
Among themselves the parts also answer the richer call ``enhance(request) -> Enhanced``: a request carries the
search filters in, a result carries each stage's verdict (``steps``) and HyDE's hypothetical answer
(``dense_query``) out, which a ``RewriteResult`` has no room for. That call is a method of these parts, not a second
contract: a part that has only ``rewrite`` is called through it (``enhance_with``), and ``Enhancer`` remains only as
another name for ``Rewriter``.

- ``Chain(a, b, ...)`` tries each in turn and keeps the first that did not fall back; if all fall back, the
  original query, with every reason. ``Chain(LLM(llm), Rules())`` is "LLM, then rules, then original".
- ``Gated(inner)`` runs the rule gate first: a turn it judges standalone never reaches ``inner``.
- ``RulesWhenSure(inner)``: where the gate's Decision says the rules are sure, the rules answer alone.
- ``SkipFilterOnly(inner)``: an empty query with filters (a pure filter request) is passed through untouched.
- ``Logged(inner)``: logs every request and result, with its time (the debug decorator).
- ``HyDE(llm, inner=)``: adds a hypothetical answer for the dense side.

``Named`` (also ``EnhancerRewriter``) gives a composition the name and ``uncertain_below`` the pipeline reads;
``auto_rewriter`` builds the ``auto`` rewriter: gate → (the rules alone where the Decision says they are sure:
``RulesWhenSure``) → LLM (when configured) → guard → rules → original.

Example::

    rw = Gated(Chain(LLM(open_llm(settings), system_prompt=MY_PROMPT), Rules()))
    r = rw.rewrite([Message("user", "AnySearch 支持哪些检索方式？")], "价格呢？")
    r.rewritten, r.method, r.reason, r.fell_back
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..resolve.gate import needs_rewrite
from ..types import Decision, DecisionKind, LLMCall, Message, RewriteResult, Usage, total_usage
from .base import Passthrough, Rewriter

log = logging.getLogger("convsearch.enhance")


@dataclass(frozen=True, slots=True)
class EnhanceRequest:
    """One turn to enhance: the query, the (windowed) history, the session topic and any search filters."""

    query: str
    history: tuple[Message, ...] = ()
    topic: str | None = None
    filters: Mapping[str, Any] = field(default_factory=dict)
    decision: Decision | None = None  # the gate's verdict when the caller already has it (gate once)


@dataclass(frozen=True, slots=True)
class Enhanced:
    """What to search with. ``query`` goes to keyword search (BM25) and is the standalone query;
    ``dense_query`` (HyDE) replaces it on the dense side when set. ``steps`` records each stage's verdict,
    ``llm_calls`` every LLM call made on the way (a failed step's included), with its tokens."""

    original: str
    query: str
    method: str
    reason: str
    fell_back: bool = False
    dense_query: str | None = None
    skipped: bool = False
    steps: tuple[str, ...] = ()
    llm_calls: tuple[LLMCall, ...] = ()

    @property
    def usage(self) -> Usage:
        return total_usage(self.llm_calls)

    def as_rewrite(self) -> RewriteResult:
        return RewriteResult(self.original, self.query, self.method, self.reason, self.fell_back, self.llm_calls)


# the name of the composition contract before it was merged into ``Rewriter`` (kept for imports)
Enhancer = Rewriter


def from_rewrite(r: RewriteResult, step: str | None = None) -> Enhanced:
    return Enhanced(r.original, r.rewritten, r.method, r.reason, r.fell_back,
                    steps=(step or f"{r.method}: {r.reason}",), llm_calls=r.llm_calls)


def enhance_with(part: Any, request: EnhanceRequest) -> Enhanced:
    """``part``'s answer to ``request``: its ``enhance`` when it has one (the parts of this module), else its
    ``rewrite`` (any rewriter)."""
    enhance = getattr(part, "enhance", None)
    if enhance is not None:
        return enhance(request)  # type: ignore[no-any-return]
    return from_rewrite(part.rewrite(request.history, request.query, topic=request.topic, decision=request.decision))


class Composed:
    """What every part of this module shares: the ``Rewriter`` side of ``enhance`` (``rewrite`` returns its
    ``RewriteResult``). ``cost`` is ``"io"`` (a part may call an LLM); ``uncertain_below`` 0 unless set."""

    name = "composed"
    uncertain_below = 0.0
    cost = "io"

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        raise NotImplementedError

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None) -> RewriteResult:
        return self.enhance(EnhanceRequest(query, tuple(history), topic, decision=decision)).as_rewrite()

    def close(self) -> None:
        """Nothing to release (a decorator closes what it wraps)."""


class Rules(Composed):
    """The offline rule rewriter (``RuleRewriter``), or ``rewriter`` (any rewriter) as a part."""

    name = "rules"

    def __init__(self, rewriter: Any = None) -> None:
        if rewriter is None:
            from ..resolve.rules import RuleRewriter

            rewriter = RuleRewriter()
        self.rewriter = rewriter

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        return enhance_with(self.rewriter, request)

    def close(self) -> None:
        self.rewriter.close()


class LLM(Composed):
    """The LLM rewriter without its own gate (put ``Gated`` around the chain instead). ``system_prompt``
    replaces our zh/en prompts; other keyword arguments go to ``LLMRewriter``."""

    name = "llm"

    def __init__(self, llm: Any, *, system_prompt: str | dict[str, str] | None = None, **kw: Any) -> None:
        from .llm import LLMRewriter

        self.rewriter = LLMRewriter(llm, system_prompt=system_prompt, gate=False, **kw)

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        q = request.query
        if not q.strip():
            return Enhanced(q, q, "llm", "llm: nothing to rewrite (empty query)", fell_back=True)
        return from_rewrite(self.rewriter.rewrite(request.history, q, topic=request.topic))

    def close(self) -> None:
        self.rewriter.close()


def _join(reasons: Sequence[str]) -> str:
    return "; ".join(r for r in reasons if r)


class Chain(Composed):
    """Try each part (any rewriter) in order; the first result that did not fall back wins. A fallback result says
    which steps failed and why (``fell_back=True`` whenever any step before the winner failed)."""

    def __init__(self, *enhancers: Rewriter) -> None:
        if not enhancers:
            raise ValueError("Chain needs at least one part")
        self.enhancers = enhancers
        self.name = "chain(" + ",".join(e.name for e in enhancers) + ")"

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        failed: list[str] = []
        steps: list[str] = []
        calls: list[LLMCall] = []  # a step that fell back still spent its tokens
        for e in self.enhancers:
            r = enhance_with(e, request)
            steps.extend(r.steps or (f"{r.method}: {r.reason}",))
            calls.extend(r.llm_calls)
            if not r.fell_back:
                if not failed:
                    return replace(r, steps=tuple(steps), llm_calls=tuple(calls))
                return replace(r, reason=_join([*failed, f"{r.method}: {r.reason}"]), fell_back=True,
                               steps=tuple(steps), llm_calls=tuple(calls))
            failed.append(r.reason)
        q = request.query
        return Enhanced(q, q, "original", _join(failed) + "; kept the original", True, steps=tuple(steps),
                        llm_calls=tuple(calls))

    def close(self) -> None:
        for e in self.enhancers:
            e.close()


class Gated(Composed):
    """The rule gate first: a turn it judges standalone is returned as typed, with no call to ``inner``.
    With ``uncertain_below`` > 0, a standalone verdict less sure than that still goes to ``inner``."""

    def __init__(self, inner: Rewriter, *, uncertain_below: float = 0.0) -> None:
        self.inner = inner
        self.uncertain_below = uncertain_below
        self.name = f"gated({inner.name})"

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        d = request.decision or needs_rewrite(request.history, request.query, topic=request.topic)
        if not d.needed and d.confidence >= self.uncertain_below:
            return Enhanced(request.query, request.query, "gate", f"standalone: {d.reason}",
                            steps=(f"gate: {d.reason}",))
        return enhance_with(self.inner, request)

    def close(self) -> None:
        self.inner.close()


# The gate's verdicts the rules resolve with certainty: a positional reference into the list the latest answer
# gave, a yes to the information it offered. The rules take the item or the offer as written; an LLM adds nothing.
RULES_SURE = frozenset({DecisionKind.ORDINAL, DecisionKind.OFFER})


class RulesWhenSure(Composed):
    """Where the turn's Decision says the rules are sure (``RULES_SURE``), the rules answer and ``inner`` (the LLM
    chain) is not called; a rule answer that falls back still goes on to ``inner``."""

    def __init__(self, inner: Rewriter, rules: Rewriter | None = None) -> None:
        self.inner = inner
        self.rules = rules if rules is not None else Rules()
        self.name = f"rules_when_sure({inner.name})"

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        d = request.decision or needs_rewrite(request.history, request.query, topic=request.topic)
        if d.kind in RULES_SURE:
            done = enhance_with(self.rules, replace(request, decision=d))
            if not done.fell_back:
                return replace(done, steps=(f"rules sure ({d.kind.value}): no LLM call", *done.steps))
        return enhance_with(self.inner, request)

    def close(self) -> None:
        self.inner.close()
        self.rules.close()


class SkipFilterOnly(Composed):
    """An empty query that comes with filters is a filter-only request: nothing to rewrite, no LLM call."""

    def __init__(self, inner: Rewriter) -> None:
        self.inner = inner
        self.name = f"skip_filter_only({inner.name})"

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        if not request.query.strip() and request.filters:
            return Enhanced(request.query, request.query, "skip", "filter-only request: no query to rewrite",
                            skipped=True, steps=("skip: filter-only",))
        return enhance_with(self.inner, request)

    def close(self) -> None:
        self.inner.close()


class Logged(Composed):
    """Debug decorator: logs each request and its result (method, reason, fallback, time) on ``logger``."""

    def __init__(self, inner: Rewriter, *, logger: logging.Logger | None = None, level: int = logging.DEBUG) -> None:
        self.inner = inner
        self.logger = logger or log
        self.level = level
        self.name = inner.name

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        t0 = time.perf_counter()
        r = enhance_with(self.inner, request)
        if self.logger.isEnabledFor(self.level):
            self.logger.log(self.level, "enhance %s: %r → %r [%s: %s]%s %.1f ms", self.inner.name, request.query,
                            r.query, r.method, r.reason, " (fell back)" if r.fell_back else "",
                            (time.perf_counter() - t0) * 1000)
        return r

    def close(self) -> None:
        self.inner.close()


class HyDE(Composed):
    """A hypothetical answer for the dense side; keyword search keeps the (rewritten) query. ``inner``
    produces that query first (default: the query as typed). A failed generation leaves ``dense_query``
    unset and says why; the rewrite itself does not fall back."""

    def __init__(self, llm: Any, *, inner: Rewriter | None = None, max_chars: int = 400,
                 budget_s: float | None = None, prompts: dict[str, str] | None = None, cache: Any = None) -> None:
        self.llm = llm
        self.inner: Rewriter | None = inner  # None: the query as typed
        self.max_chars = max_chars
        self.budget_s = budget_s
        self.prompts = prompts
        self.cache = cache
        self.name = f"hyde({inner.name if inner is not None else 'passthrough'})"

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        from .llm import hypothetical_answer

        base = (enhance_with(self.inner, request) if self.inner is not None
                else Enhanced(request.query, request.query, "passthrough", "query as typed"))
        if base.skipped or not base.query.strip():
            return base
        calls: list[LLMCall] = []
        text, why = hypothetical_answer(self.llm, base.query, max_chars=self.max_chars, budget_s=self.budget_s,
                                        prompts=self.prompts, cache=self.cache, calls=calls)
        return replace(base, dense_query=text, reason=_join([base.reason, why]), steps=(*base.steps, why),
                       llm_calls=(*base.llm_calls, *calls))

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
        close = getattr(self.llm, "close", None)  # the LLM contract (llm.py) declares no close yet
        if close:
            close()


def hyde_search(backend: Any, enhanced: Enhanced, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Any]:
    """Search a backend the HyDE way: ``backend.search(query, dense_query=passage)`` when it declares a dense
    side (its keyword side searches the query, its dense side the passage, fused by the backend); backends
    without one (or no hypothetical answer) get one ordinary search."""
    caps = getattr(backend, "capabilities", None)
    if enhanced.dense_query and caps is not None and caps.dense:
        return backend.search(enhanced.query, top_k=top_k, filters=filters, dense_query=enhanced.dense_query)
    return backend.search(enhanced.query, top_k=top_k, filters=filters)


class Named(Composed):
    """``inner`` (any rewriter or part) under ``name``, with the ``uncertain_below`` the pipeline reads (it consults
    the rewriter on gate verdicts less sure than this): how ``auto`` is built. Also ``EnhancerRewriter``."""

    def __init__(self, enhancer: Any, *, name: str | None = None, uncertain_below: float = 0.0) -> None:
        self.enhancer = enhancer
        self.name = name or enhancer.name
        self.uncertain_below = uncertain_below

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        return enhance_with(self.enhancer, request)

    def close(self) -> None:
        self.enhancer.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class EnhancerRewriter(Named):
    """The name ``Named`` had when the parts here had a contract of their own."""


def auto_rewriter(llm: Any | None, *, uncertain_below: float = 0.0, **llm_kw: Any) -> Any:
    """``auto``: gate → LLM → guard → rules → original; without an LLM, the rule rewriter itself."""
    from ..resolve.rules import RuleRewriter

    if llm is None:
        return RuleRewriter()
    chain = Gated(RulesWhenSure(Chain(LLM(llm, **llm_kw), Rules())), uncertain_below=uncertain_below)
    rw = EnhancerRewriter(chain, name="auto", uncertain_below=uncertain_below)
    rw.llm = llm  # for stats and benchmarks
    return rw


__all__ = [
    "Chain", "Composed", "EnhanceRequest", "Enhanced", "Enhancer", "EnhancerRewriter", "Gated", "HyDE", "LLM",
    "Logged", "Named", "Passthrough", "RULES_SURE", "Rules", "RulesWhenSure", "SkipFilterOnly", "auto_rewriter",
    "enhance_with", "from_rewrite", "hyde_search",
]
