"""convsearch in LangChain, both ways (``pip install 'convsearch[langchain]'``).

``ConvSearchRetriever`` is a LangChain ``BaseRetriever`` that runs a conversational turn: the chat history comes
from ``config={"configurable": {"chat_history": [...]}}`` (LangChain messages, dicts or ``(role, text)``
pairs), from a stored session (``session_id`` + ``store``), or there is none. Each ``Document`` carries the
source URL, title, date, citation number, the standalone query and the rewrite's reason in its metadata.

``LangChainBackend`` is the reverse: any LangChain retriever (a team's existing vector store) as a convsearch
``SearchBackend``, so convsearch's rewriting runs in front of it.

>>> from convsearch.backends.base import InMemoryBackend
>>> from convsearch.types import Document
>>> index = InMemoryBackend([Document("price", "AnySearch 专业版每月 99 元", title="AnySearch 价格")])
>>> retriever = ConvSearchRetriever(backend=index, k=3)
>>> history = [("human", "AnySearch 支持哪些检索方式？")]
>>> docs = retriever.invoke("价格呢？", config={"configurable": {"chat_history": history}})
>>> docs[0].metadata["standalone_query"]
'AnySearch 的价格'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from .core import Turn, hit_metadata, missing

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document as LCDocument
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables.config import RunnableConfig, ensure_config
    from pydantic import ConfigDict, PrivateAttr
except ImportError as exc:  # the optional extra
    raise missing("langchain", exc) from exc

from ..backends.base import Capabilities, Filters, Recency
from ..errors import BackendError
from ..types import Hit, SearchResponse

_PER_CALL = ("chat_history", "session_id")


class ConvSearchRetriever(BaseRetriever):
    """A history-aware LangChain retriever over any convsearch backend (or a ``convsearch.Pipeline``).

    ``k``: results per call (``invoke(q, k=3)`` overrides it); ``store`` + ``session_id`` (or
    ``configurable.session_id``): a stored conversation under ``tenant``/``agent``; ``filters``: convsearch
    Filters fields; ``settings``: a ``convsearch.Settings``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    backend: Any = None
    pipeline: Any = None
    k: int = 5
    settings: Any = None
    store: Any = None
    session_id: str | None = None
    tenant: str = "local"
    agent: str = "langchain"
    filters: dict[str, Any] | None = None

    _turn_: Any = PrivateAttr(default=None)

    def _turn(self) -> Turn:
        if self._turn_ is None:  # one Pipeline per retriever, built on first use
            self._turn_ = Turn(self.backend, self.settings, self.store, self.tenant, self.agent, self.filters,
                               pipeline=self.pipeline)
        return self._turn_

    def close(self) -> None:
        """Release the Pipeline this retriever built (not the backend, nor a pipeline it was given)."""
        if self._turn_ is not None:
            self._turn_.close()

    @staticmethod
    def _with_config(config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        configurable = ensure_config(config).get("configurable") or {}
        for key in _PER_CALL:
            if key in configurable and key not in kwargs:
                kwargs[key] = configurable[key]
        return kwargs

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[LCDocument]:
        return super().invoke(input, config, **self._with_config(config, kwargs))

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[LCDocument]:
        return await super().ainvoke(input, config, **self._with_config(config, kwargs))

    def _documents(self, r: SearchResponse) -> list[LCDocument]:
        return [LCDocument(page_content=h.text, metadata=hit_metadata(r, h, n), id=h.id)
                for n, h in enumerate(r.hits, start=1)]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None, chat_history: Sequence[Any] | None = None,
                                session_id: str | None = None) -> list[LCDocument]:
        r = self._turn().run(query, history=chat_history, session_id=session_id or self.session_id, k=k or self.k)
        return self._documents(r)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       k: int | None = None, chat_history: Sequence[Any] | None = None,
                                       session_id: str | None = None) -> list[LCDocument]:
        r = await self._turn().arun(query, history=chat_history, session_id=session_id or self.session_id,
                                    k=k or self.k)
        return self._documents(r)


class LangChainBackend:
    """Any LangChain retriever as a convsearch ``SearchBackend`` (read-only; filters and recency are applied
    after its search by ``backends.compose``, as for any backend that declares none).

    A document's id is its ``id``, else ``metadata["id"]``, else a hash of its text; title, url (``url`` or
    ``source``) and date come from its metadata; the score is ``metadata["score"]`` when the retriever gives
    one, else the reciprocal rank.
    """

    def __init__(self, retriever: Any, *, name: str = "langchain", remote: bool = False) -> None:
        self.retriever = retriever
        self.name = name
        # ``remote``: the retriever calls a service over the network. The pipeline treats an all-remote turn as
        # a web search (a default recency window for time-sensitive questions), so a team's own vector store
        # stays False unless it is a web search.
        self.capabilities = Capabilities(remote=remote)

    def _hits(self, docs: Sequence[Any], top_k: int) -> list[Hit]:
        out: list[Hit] = []
        seen: set[str] = set()
        for d in docs:
            md = dict(d.metadata or {})
            doc_id = str(d.id or md.get("id") or hashlib.sha1(d.page_content.encode("utf-8")).hexdigest()[:16])
            if doc_id in seen:
                continue
            seen.add(doc_id)
            rank = len(out) + 1
            score = md.get("score")
            out.append(Hit(doc_id, str(md.get("title", "")), d.page_content,
                           float(score) if isinstance(score, (int, float)) else 1.0 / rank,
                           str(md.get("url") or md.get("source") or ""), md.get("date"), self.name, rank, md))
            if len(out) >= top_k:
                break
        out.sort(key=lambda h: -h.score)
        return [Hit(h.id, h.title, h.text, h.score, h.url, h.date, h.source, r, h.metadata)
                for r, h in enumerate(out, start=1)]

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        try:
            docs = self.retriever.invoke(query)
        except Exception as exc:  # whatever the wrapped retriever raises is a backend failure to us
            raise BackendError(f"the LangChain retriever {self.name!r} failed: {type(exc).__name__}: {exc}") from exc
        return self._hits(docs, top_k)

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        try:
            docs = await self.retriever.ainvoke(query)
        except Exception as exc:
            raise BackendError(f"the LangChain retriever {self.name!r} failed: {type(exc).__name__}: {exc}") from exc
        return self._hits(docs, top_k)

    def close(self) -> None:
        """The retriever belongs to the caller."""


__all__ = ["ConvSearchRetriever", "LangChainBackend"]
