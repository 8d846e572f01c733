"""``search_with_context``: wire the stages for one turn, build the trace, emit events."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from . import events
from .backends.base import SearchBackend
from .config import Settings
from .dedup import dedup
from .errors import InputError
from .format import citations, context
from .fuse import fuse
from .gate import needs_rewrite
from .rerank import rerank
from .rewrite import default_hyde, default_rewriter, default_variant_maker
from .rewrite.base import Rewriter
from .rewrite.guard import content_words
from .rewrite.rules import RuleRewriter
from .text import words
from .types import Hit, Message, QueryComparison, RewriteResult, SearchResponse, Trace
from .variants import make_variants
from .window import history_window, to_messages

if TYPE_CHECKING:
    from .history.session import Conversation

_DEFAULT_REWRITER = RuleRewriter()


def validate_query(query: str, *, max_chars: int) -> str:
    """The query stripped, or an InputError saying what is wrong with it."""
    if not isinstance(query, str):
        raise InputError("query must be a string")
    q = query.strip()
    if not q:
        raise InputError("query is empty")
    if len(q) > max_chars:
        raise InputError(f"query is {len(q):,} characters long; the limit is {max_chars:,}")
    return q


class _Clock:
    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.timings: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round((now - self.t) * 1000, 3)
        self.t = now


def plan_queries(query: str, history: Sequence[Message], *, rewriter: Rewriter, settings: Settings,
                 topic: str | None = None, clock: _Clock | None = None,
                 variant_maker: Callable[..., list[str]] | None = None) -> tuple[Any, RewriteResult, list[str], list[str]]:
    """Gate, rewrite and variants: the rule path of a turn, without I/O. Returns
    (decision, rewrite, variants, queries to run). A rewriter with ``uncertain_below`` (the LLM path) is
    also asked about standalone verdicts less sure than that; ``variant_maker`` replaces the heuristic table."""
    decision = needs_rewrite(history, query, topic=topic)
    if clock:
        clock.lap("gate")
    if decision.needed or decision.confidence < getattr(rewriter, "uncertain_below", 0.0):
        rw = rewriter.rewrite(history, query, topic=topic, decision=decision)
    else:
        rw = RewriteResult(query, query, "gate", f"standalone: {decision.reason}", False)
    if clock:
        clock.lap("rewrite")
    variants = (variant_maker or make_variants)(rw.rewritten, max_variants=settings.max_variants)
    queries = [rw.rewritten, *variants]
    if settings.mode == "dual" and rw.rewritten != query:
        queries.insert(1, query)
    if clock:
        clock.lap("variants")
    return decision, rw, variants, list(dict.fromkeys(queries))


def finish_turn(query: str, rw: RewriteResult, lists: Sequence[Sequence[Hit]], *, settings: Settings,
                top_k: int, today: date | None = None, clock: _Clock | None = None) -> tuple[list[Hit], Any, list[Any], str]:
    """Fuse, dedup, rerank with the original query, format: the pure tail of a turn."""
    # Only the head of the fused list can reach the top_k after reranking; dedup and rerank look at
    # max(4·top_k, 20) candidates rather than every hit of every query.
    fused = fuse(lists, settings.fusion, limit=max(4 * top_k, 20))
    if clock:
        clock.lap("fuse")
    deduped, stats = dedup(fused, max_bits=settings.near_dup_bits, min_jaccard=settings.near_dup_jaccard)
    if clock:
        clock.lap("dedup")
    ranked = rerank(deduped, query, rw.rewritten)[:top_k]
    if clock:
        clock.lap("rerank")
    cites = citations(ranked, snippet_tokens=settings.snippet_tokens, stale_days=settings.stale_days, today=today)
    ctx = context(cites)
    if clock:
        clock.lap("format")
    return ranked, stats, cites, ctx


def _hypothetical_answer(rw: RewriteResult, settings: Settings, clock: "_Clock",
                         backend: SearchBackend) -> tuple[str | None, tuple[str, ...]]:
    """HyDE (CONVSEARCH_HYDE=on with an LLM): a short passage that would answer the standalone query, for the
    dense side of the first search; None (and why, in the trace) when off, failed or out of budget. A backend
    without a dense side costs no call."""
    hyde = default_hyde(settings)
    if hyde is None or not rw.rewritten.strip():
        return None, ()
    if not (hasattr(backend, "search_bm25") and hasattr(backend, "search_dense")
            and getattr(backend, "embedder", None) is not None):
        return None, ("hyde skipped: the backend has no dense side",)
    text, why = hyde(rw.rewritten)
    clock.lap("hyde")
    return text, (why,)


def _search_first(backend: SearchBackend, query: str, dense: str | None, depth: int,
                  filters: dict[str, Any] | None) -> list[Hit]:
    """The standalone query's search: keyword side with the query, dense side with the hypothetical answer
    when there is one and the backend has both sides (``hyde_search``); otherwise an ordinary search."""
    if dense is None:
        return backend.search(query, top_k=depth, filters=filters)
    from .rewrite.enhance import Enhanced, hyde_search

    return hyde_search(backend, Enhanced(query, query, "hyde", "", dense_query=dense), top_k=depth, filters=filters)


def search_with_context(
    query: str,
    messages: Iterable[Message | dict[str, Any]] = (),
    *,
    backend: SearchBackend,
    rewriter: Rewriter | None = None,
    settings: Settings | None = None,
    topic: str | None = None,
    top_k: int | None = None,
    filters: dict[str, Any] | None = None,
    today: date | None = None,
    session: Conversation | None = None,
    variant_maker: Callable[..., list[str]] | None = None,
) -> SearchResponse:
    """Turn a follow-up into a standalone query, search, and return cited, deduplicated results.

    With ``session`` (a :class:`convsearch.history.Conversation`: store + scope) the history comes from the
    store (summary + window + task stack) and the turn is recorded there; ``messages`` are then only the
    fallback used, flagged in ``trace.notes``, when the store is locked or down.
    ``variant_maker`` replaces the configured one (the server gives each tenant its own, with its own cache).

    >>> r = search_with_context("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}],
    ...                         backend=InMemoryBackend(docs))
    >>> r.standalone_query
    'AnySearch 的价格'
    """
    settings = settings or Settings()
    rewriter = rewriter or default_rewriter(settings)
    top_k = top_k or settings.top_k
    clock = _Clock()
    q = validate_query(query, max_chars=settings.max_query_chars)
    history = history_window(to_messages(messages), settings.window)
    memory, history_notes = None, ()
    if session is not None:
        from .history.session import history_for_turn

        memory, history, history_notes = history_for_turn(session, history, settings)
    clock.lap("window")
    decision, rw, variants, queries = plan_queries(q, history, rewriter=rewriter, settings=settings,
                                                   topic=topic, clock=clock,
                                                   variant_maker=variant_maker or default_variant_maker(settings))
    events.emit("rewrite", original=rw.original, rewritten=rw.rewritten, method=rw.method, reason=rw.reason,
                fell_back=rw.fell_back, gate=decision.reason)
    depth = max(top_k * 2, 10)
    dense, hyde_notes = _hypothetical_answer(rw, settings, clock, backend)
    lists = [_search_first(backend, x, dense, depth, filters) if i == 0 else backend.search(x, top_k=depth, filters=filters)
             for i, x in enumerate(queries)]
    clock.lap("search")
    ranked, stats, cites, ctx = finish_turn(q, rw, lists, settings=settings, top_k=top_k, today=today, clock=clock)
    events.emit("dedup", before=stats.before, after=stats.after, by_url=stats.by_url, by_hash=stats.by_hash,
                by_near=stats.by_near)
    if session is not None and memory is not None:
        from .history.session import record_for_turn

        history_notes += record_for_turn(session, q, cites, settings)
        clock.lap("history")
    trace = Trace(decision=decision, rewrite=rw, variants=tuple(variants), queries=tuple(queries),
                  timings_ms=dict(clock.timings), hits_before_dedup=stats.before, hits_after_dedup=stats.after,
                  window_size=len(history), fusion=settings.fusion,
                  notes=_fallback_notes(rw) + hyde_notes + history_notes)
    return SearchResponse(query=q, standalone_query=rw.rewritten, rewrite=rw, variants=tuple(variants),
                          hits=tuple(ranked), citations=tuple(cites), context=ctx, trace=trace, memory=memory)


def _fallback_notes(rw: RewriteResult) -> tuple[str, ...]:
    """What the trace says about a fallback (the why is in ``rw.reason``)."""
    if not rw.fell_back:
        return ()
    return (f"rewrite fell back to {rw.method}",) if rw.changed else ("rewrite fell back to the original",)


def compare_queries(original: str, rewritten: str, *, backend: SearchBackend, top_k: int = 5) -> QueryComparison:
    """Run both queries and count, for each, the results containing at least one word the rewrite
    added (the keyword hits the rewrite is meant to win; all its content words if it added none)."""
    keys = (content_words(rewritten) - content_words(original)) or content_words(rewritten)
    a = backend.search(original, top_k=top_k)
    b = backend.search(rewritten, top_k=top_k)

    def kw_hits(hits: Sequence[Hit]) -> int:
        return sum(1 for h in hits if keys & set(words(f"{h.title} {h.text}")))

    ids_a, ids_b = tuple(h.id for h in a), tuple(h.id for h in b)
    return QueryComparison(original, rewritten, ids_a, ids_b, kw_hits(a), kw_hits(b),
                           tuple(i for i in ids_a if i not in ids_b), tuple(i for i in ids_b if i not in ids_a))


__all__ = ["compare_queries", "finish_turn", "plan_queries", "search_with_context", "validate_query"]
