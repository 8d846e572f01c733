"""The SearchBackend contract (sync + async twins) and an in-memory test double."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from ..text import words
from ..types import Document, Hit


@runtime_checkable
class SearchBackend(Protocol):
    name: str

    def search(self, query: str, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Hit]: ...

    async def asearch(self, query: str, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Hit]: ...


def search_many(backend: SearchBackend, queries: Sequence[str], *, top_k: int = 10,
                filters: dict[str, Any] | None = None) -> list[list[Hit]]:
    """One ranked list per query (the caller fuses them)."""
    return [backend.search(q, top_k=top_k, filters=filters) for q in queries]


class InMemoryBackend:
    """Test double: term-overlap ranking over a list of documents, same contract as the real index."""

    name = "memory"

    def __init__(self, docs: Iterable[Document] = ()) -> None:
        self.docs: dict[str, Document] = {}
        self.queries: list[str] = []
        self.add(docs)

    def add(self, docs: Iterable[Document]) -> int:
        n = 0
        for d in docs:
            self.docs[d.id] = d
            n += 1
        return n

    def delete(self, ids: Iterable[str]) -> int:
        return sum(1 for i in ids if self.docs.pop(i, None) is not None)

    def search(self, query: str, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Hit]:
        self.queries.append(query)
        q = set(words(query))
        scored = []
        for d in self.docs.values():
            if filters and any(d.metadata.get(k, getattr(d, k, None)) != v for k, v in filters.items()):
                continue
            s = len(q & set(words(f"{d.title} {d.text}")))
            if s:
                scored.append((s, d))
        scored.sort(key=lambda p: -p[0])
        return [Hit(d.id, d.title, d.text, float(s), d.url, d.date, self.name, r, dict(d.metadata))
                for r, (s, d) in enumerate(scored[:top_k], start=1)]

    async def asearch(self, query: str, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Hit]:
        return await asyncio.to_thread(self.search, query, top_k=top_k, filters=filters)
