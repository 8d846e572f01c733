"""convsearch as a LlamaIndex retriever (``pip install 'convsearch[llamaindex]'``): ``NodeWithScore``s.

The chat history comes with the query (``ChatQueryBundle(query_str, chat_history=[...])``, or any QueryBundle
carrying a ``chat_history`` attribute), from the retriever's own ``chat_history``, or from a stored session
(``store`` + ``session_id``). Each node's metadata holds the source URL, title, date, citation number, the
standalone query and the rewrite's reason.

>>> from convsearch.backends.base import InMemoryBackend
>>> from convsearch.types import Document
>>> index = InMemoryBackend([Document("price", "AnySearch 专业版每月 99 元", title="AnySearch 价格")])
>>> r = ConvSearchRetriever(backend=index, k=3)
>>> nodes = r.retrieve(ChatQueryBundle("价格呢？", chat_history=[("user", "AnySearch 支持哪些检索方式？")]))
>>> nodes[0].node.metadata["standalone_query"]
'AnySearch 的价格'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .core import Turn, hit_metadata, missing

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # the optional extra
    raise missing("llamaindex", exc) from exc

from ..types import SearchResponse


@dataclass
class ChatQueryBundle(QueryBundle):
    """A QueryBundle that carries the conversation so far (any message shape convsearch reads)."""

    chat_history: list[Any] = field(default_factory=list)


class ConvSearchRetriever(BaseRetriever):
    """A history-aware LlamaIndex retriever over any convsearch backend."""

    def __init__(self, backend: Any = None, *, pipeline: Any = None, k: int = 5, settings: Any = None,
                 store: Any = None,
                 session_id: str | None = None, chat_history: Sequence[Any] | None = None, tenant: str = "local",
                 agent: str = "llamaindex", filters: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.k = k
        self.session_id = session_id
        self.chat_history = list(chat_history or [])
        self._turn = Turn(backend, settings, store, tenant, agent, filters, pipeline=pipeline)

    def _args(self, bundle: QueryBundle) -> dict[str, Any]:
        history = getattr(bundle, "chat_history", None) or self.chat_history
        return {"history": history, "session_id": self.session_id, "k": self.k}

    @staticmethod
    def _nodes(r: SearchResponse) -> list[NodeWithScore]:
        return [NodeWithScore(node=TextNode(id_=h.id, text=h.text, metadata=hit_metadata(r, h, n)), score=h.score)
                for n, h in enumerate(r.hits, start=1)]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(self._turn.run(query_bundle.query_str, **self._args(query_bundle)))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(await self._turn.arun(query_bundle.query_str, **self._args(query_bundle)))


__all__ = ["ChatQueryBundle", "ConvSearchRetriever"]
