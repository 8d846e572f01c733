"""convsearch as a Haystack component (``pip install 'convsearch[haystack]'``).

``ConvSearchRetriever.run(query, messages=None, top_k=None)`` → ``{"documents": [...]}``: ``messages`` is the
conversation so far (Haystack ``ChatMessage``s, dicts or ``(role, text)`` pairs); with a ``store`` and a
``session_id`` the stored conversation is the context instead. Each Document's ``meta`` holds the source URL,
title, date, citation number, the standalone query and the rewrite's reason.

>>> from convsearch.backends.base import InMemoryBackend
>>> from convsearch.types import Document
>>> index = InMemoryBackend([Document("price", "AnySearch 专业版每月 99 元", title="AnySearch 价格")])
>>> from haystack import Pipeline
>>> from haystack.dataclasses import ChatMessage
>>> p = Pipeline()
>>> _ = p.add_component("search", ConvSearchRetriever(backend=index, top_k=3))
>>> out = p.run({"search": {"query": "价格呢？", "messages": [ChatMessage.from_user("AnySearch 支持哪些检索方式？")]}})
>>> out["search"]["documents"][0].meta["standalone_query"]
'AnySearch 的价格'
"""

from __future__ import annotations

from typing import Any

from .core import Turn, hit_metadata, missing

try:
    from haystack import Document as HDocument
    from haystack import component
except ImportError as exc:  # the optional extra
    raise missing("haystack", exc) from exc

from ..types import SearchResponse


@component
class ConvSearchRetriever:
    """A conversational retriever component over any convsearch backend."""

    def __init__(self, backend: Any = None, *, pipeline: Any = None, top_k: int = 5, settings: Any = None,
                 store: Any = None,
                 session_id: str | None = None, tenant: str = "local", agent: str = "haystack",
                 filters: dict[str, Any] | None = None) -> None:
        self.top_k = top_k
        self.session_id = session_id
        self._turn = Turn(backend, settings, store, tenant, agent, filters, pipeline=pipeline)

    @staticmethod
    def _documents(r: SearchResponse) -> dict[str, list[HDocument]]:
        return {"documents": [HDocument(id=h.id, content=h.text, meta=hit_metadata(r, h, n), score=h.score)
                              for n, h in enumerate(r.hits, start=1)]}

    @component.output_types(documents=list[HDocument])
    def run(self, query: str, messages: list[Any] | None = None, top_k: int | None = None,
            session_id: str | None = None) -> dict[str, list[HDocument]]:
        """One turn: the standalone query searched, results with citation metadata."""
        return self._documents(self._turn.run(query, history=messages, session_id=session_id or self.session_id,
                                              k=top_k or self.top_k))

    @component.output_types(documents=list[HDocument])
    async def run_async(self, query: str, messages: list[Any] | None = None, top_k: int | None = None,
                        session_id: str | None = None) -> dict[str, list[HDocument]]:
        return self._documents(await self._turn.arun(query, history=messages,
                                                     session_id=session_id or self.session_id,
                                                     k=top_k or self.top_k))


__all__ = ["ConvSearchRetriever"]
