"""How the agent searches: one ``Searcher`` contract over a ``Pipeline`` (or a bare backend in a Pipeline of its
own), plus the agent's result cache, scoped tenant → agent.

A tool query goes through the conversational pipeline with the history window: the gate leaves a standalone
query (the usual case: the model writes keywords) as it is, and a query that still leans on the conversation
("那番禺呢") is rewritten. Query variants are off for agent searches: the model already writes keywords, and
every variant would be one more (possibly paid) backend call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from typing import Any, Protocol, runtime_checkable

from ..backends.base import Recency, SearchBackend
from ..config import Settings
from ..rewrite.base import Rewriter
from ..rewrite.cache import LRUCache
from ..types import Message, SearchResponse


@runtime_checkable
class Searcher(Protocol):
    """One conversational search: ``query`` with the conversation ``history``, a recency window, ``top_k``."""

    async def asearch(self, query: str, *, history: Sequence[Message], recency: Recency,
                      top_k: int) -> SearchResponse: ...


class PipelineSearcher:
    """A ``convsearch.Pipeline`` as the agent's Searcher: its ``asearch`` with the history, the recency window and
    ``top_k``, no query variants; ``today`` fixes the date recency and staleness count from."""

    def __init__(self, pipeline: Any, *, today: date | None = None) -> None:
        self.pipeline = pipeline
        self.today = today

    async def asearch(self, query: str, *, history: Sequence[Message], recency: Recency,
                      top_k: int) -> SearchResponse:
        return await self.pipeline.asearch(query, list(history), recency=recency, top_k=top_k, today=self.today,
                                           max_variants=0)


class BackendSearcher(PipelineSearcher):
    """A Pipeline of its own over ``backend``, with ``rewriter`` (default: the rule rewriter)."""

    def __init__(self, backend: SearchBackend, settings: Settings | None = None, *, rewriter: Rewriter | None = None,
                 today: date | None = None) -> None:
        from ..pipeline import Pipeline

        super().__init__(Pipeline(backend, settings=settings or Settings(), rewriter=rewriter), today=today)
        self.backend = backend


def as_searcher(obj: Any, settings: Settings | None = None, *, today: date | None = None) -> Searcher:
    """A Searcher from a Searcher made here, a SearchBackend (in a Pipeline of its own) or a Pipeline (anything
    else with ``asearch(query, messages, *, recency, top_k, today, max_variants)``)."""
    if isinstance(obj, PipelineSearcher):
        return obj
    if isinstance(obj, SearchBackend):
        return BackendSearcher(obj, settings, today=today)
    if hasattr(obj, "asearch"):
        return PipelineSearcher(obj, today=today)
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
