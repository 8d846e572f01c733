"""How the agent searches: one ``Searcher`` contract over a ``Pipeline`` or a bare backend, plus the agent's
result cache, scoped tenant → agent.

A tool query goes through the conversational pipeline with the history window: the gate leaves a standalone
query (the usual case: the model writes keywords) as it is, and a query that still leans on the conversation
("那番禺呢") is rewritten. Query variants are off for agent searches: the model already writes keywords, and
every variant would be one more (possibly paid) backend call.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from typing import Any, Protocol, runtime_checkable

from ..backends.base import Recency, SearchBackend
from ..backends.compose import asearch_applied
from ..config import Settings
from ..pipeline import finish_turn, plan_queries
from ..rewrite import default_rewriter
from ..rewrite.base import Passthrough, Rewriter
from ..rewrite.cache import LRUCache
from ..rewrite.rules import RuleRewriter
from ..types import Message, SearchResponse, Trace


@runtime_checkable
class Searcher(Protocol):
    """One conversational search: ``query`` with the conversation ``history``, a recency window, ``top_k``."""

    async def asearch(self, query: str, *, history: Sequence[Message], recency: Recency,
                      top_k: int) -> SearchResponse: ...


def _no_variants(query: str, *, max_variants: int = 0) -> list[str]:
    return []


class BackendSearcher:
    """The pipeline's stages over one backend (gate → rewrite → search with recency → fuse → dedup → rerank →
    cite), async. ``today`` fixes the date recency and staleness are counted from."""

    def __init__(self, backend: SearchBackend, settings: Settings | None = None, *, rewriter: Rewriter | None = None,
                 today: date | None = None) -> None:
        self.backend = backend
        self.settings = replace(settings or Settings(), max_variants=0, mode="rewrite")
        self.rewriter = rewriter or default_rewriter(self.settings)
        self.today = today

    async def asearch(self, query: str, *, history: Sequence[Message], recency: Recency, top_k: int) -> SearchResponse:
        s = self.settings
        if isinstance(self.rewriter, (RuleRewriter, Passthrough)):
            decision, rw, _, queries = plan_queries(query, history, rewriter=self.rewriter, settings=s,
                                                    variant_maker=_no_variants)
        else:  # an LLM rewriter blocks: keep it off the event loop
            decision, rw, _, queries = await asyncio.to_thread(
                plan_queries, query, history, rewriter=self.rewriter, settings=s, variant_maker=_no_variants)
        depth = max(top_k * 2, 10)
        applied = await asyncio.gather(*(asearch_applied(self.backend, q, top_k=depth, recency=recency,
                                                         today=self.today) for q in queries))
        ranked, stats, cites, ctx = finish_turn(query, rw, [list(a.hits) for a in applied], settings=s, top_k=top_k,
                                                today=self.today)
        notes = tuple(n for a in applied for n in a.notes)
        trace = Trace(decision=decision, rewrite=rw, variants=(), queries=tuple(queries), timings_ms={},
                      hits_before_dedup=stats.before, hits_after_dedup=stats.after, window_size=len(history),
                      fusion=s.fusion, notes=notes)
        return SearchResponse(query=query, standalone_query=rw.rewritten, rewrite=rw, variants=(), hits=tuple(ranked),
                              citations=tuple(cites), context=ctx, trace=trace)


class PipelineSearcher:
    """A ``convsearch.Pipeline`` (its ``asearch``) as the agent's Searcher."""

    def __init__(self, pipeline: Any) -> None:
        self.pipeline = pipeline

    async def asearch(self, query: str, *, history: Sequence[Message], recency: Recency, top_k: int) -> SearchResponse:
        return await self.pipeline.asearch(query, list(history), recency=recency, top_k=top_k)


def as_searcher(obj: Any, settings: Settings | None = None, *, today: date | None = None) -> Searcher:
    """A Searcher from a Searcher made here, a SearchBackend (wrapped in BackendSearcher) or a Pipeline (anything
    else with ``asearch(query, messages, *, recency, top_k)``)."""
    if isinstance(obj, (BackendSearcher, PipelineSearcher)):
        return obj
    if isinstance(obj, SearchBackend):
        return BackendSearcher(obj, settings, today=today)
    if hasattr(obj, "asearch"):
        return PipelineSearcher(obj)
    raise TypeError(f"cannot search with {type(obj).__name__}: give a Pipeline, a SearchBackend or a Searcher")


class ResultCache:
    """Search responses remembered per (tenant, agent): another agent never sees them. Keyed by what decides a
    response (the query, the history it leaned on, recency, top_k, the day)."""

    def __init__(self, size: int, ttl_s: float) -> None:
        self._lru = LRUCache(size, ttl_s=ttl_s) if size > 0 else None

    @staticmethod
    def key(ns: tuple[str, str], query: str, history: Sequence[Message], recency: Recency, top_k: int,
            today: date | None) -> str:
        turns = [(m.role, m.content) for m in history[-4:]]
        return json.dumps([list(ns), query, turns, recency.value, top_k, (today or date.today()).isoformat()],
                          ensure_ascii=False, separators=(",", ":"))

    def get(self, key: str) -> SearchResponse | None:
        return self._lru.get(key) if self._lru is not None else None

    def put(self, key: str, value: SearchResponse) -> None:
        if self._lru is not None:
            self._lru.put(key, value)


__all__ = ["BackendSearcher", "PipelineSearcher", "ResultCache", "Searcher", "as_searcher"]
