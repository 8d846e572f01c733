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
from ..infra.deadline import Deadline
from ..rewrite.base import Rewriter
from ..types import Message, SearchResponse


@runtime_checkable
class Searcher(Protocol):
    """One conversational search: ``query`` with the conversation ``history``, a recency window (None: the
    pipeline's default, e.g. a window for a time-sensitive question on the web), ``top_k``."""

    async def asearch(self, query: str, *, history: Sequence[Message], recency: Recency | None, top_k: int,
                      deadline: Deadline | None = None) -> SearchResponse: ...


class PipelineSearcher:
    """A ``convsearch.Pipeline`` as the agent's Searcher: its ``asearch`` with the history, the recency window and
    ``top_k``, no query variants; ``today`` fixes the date recency and staleness count from; ``backends`` (names
    of the pipeline's backends) narrows every search to those."""

    def __init__(self, pipeline: Any, *, today: date | None = None, backends: Sequence[str] | None = None) -> None:
        self.pipeline = pipeline
        self.today = today
        self.backends = tuple(backends) if backends else None

    async def asearch(self, query: str, *, history: Sequence[Message], recency: Recency | None, top_k: int,
                      deadline: Deadline | None = None) -> SearchResponse:
        from ..pipeline import TurnRequest

        return await self.pipeline.asearch(TurnRequest(query, history, recency=recency, top_k=top_k, today=self.today,
                                                       max_variants=0, deadline=deadline, backends=self.backends))


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
    """Search responses an agent remembers, in a ``TTLCache`` (``infra.cache``; default an in-process
    ``MemoryCache`` of ``size`` entries) under the namespace ``tenant:agent:agent-search``: another agent, or
    another tenant, never sees them. Keyed by what decides a response (the query, the history it leaned on,
    recency, top_k, the day)."""

    KIND = "agent-search"

    def __init__(self, size: int = 512, ttl_s: float = 300.0, *, cache: Any = None) -> None:
        from ..infra.cache import MemoryCache, NullCache

        self.ttl_s = ttl_s
        self.cache = cache if cache is not None else (MemoryCache(size, ttl_s=ttl_s) if size > 0 else NullCache())

    @classmethod
    def namespace(cls, ns: tuple[str, str]) -> str:
        return f"{ns[0]}:{ns[1]}:{cls.KIND}"

    @staticmethod
    def key(query: str, history: Sequence[Message], recency: str, top_k: int, today: date | None) -> str:
        turns = [(m.role, m.content) for m in history[-4:]]
        return json.dumps([query, turns, recency, top_k, (today or date.today()).isoformat()],
                          ensure_ascii=False, separators=(",", ":"))

    def get(self, ns: tuple[str, str], key: str) -> SearchResponse | None:
        return self.cache.get(self.namespace(ns), key)

    def put(self, ns: tuple[str, str], key: str, value: SearchResponse) -> None:
        self.cache.set(self.namespace(ns), key, value, self.ttl_s)


__all__ = ["BackendSearcher", "PipelineSearcher", "ResultCache", "Searcher", "as_searcher"]
