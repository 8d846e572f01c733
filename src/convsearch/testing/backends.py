"""A scripted search backend for fan-out tests and benchmarks: a delay, a failure, declared capabilities.

``ScriptedBackend`` is the in-memory backend (term overlap over documents, every filter native) with a name,
a scripted delay (``asyncio.sleep`` on the async side, ``time.sleep`` on the sync side), an optional exception
raised after the delay, and the capabilities to declare (``paid`` like a web API, ``dense`` with a dense side).
It records every call (query, dense query, start and end times) so a test can check what it was sent and that
the calls overlapped, without timing anything.

>>> from convsearch.types import Document
>>> b = ScriptedBackend("web", [Document("1", "AnySearch 价格")], paid=True)
>>> [h.id for h in b.search("AnySearch", top_k=1)], b.calls[0].query
(['1'], 'AnySearch')
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date

from ..backends.base import Filters, InMemoryBackend, Recency
from ..types import Document, Hit


@dataclass(frozen=True, slots=True)
class Call:
    query: str
    dense_query: str | None
    top_k: int
    filters: Filters | None
    recency: Recency | None
    started: float
    ended: float


class ScriptedBackend(InMemoryBackend):
    """InMemoryBackend with a name, a delay, an optional failure and declared capabilities."""

    def __init__(self, name: str, docs: Iterable[Document] = (), *, delay_s: float = 0.0,
                 error: BaseException | None = None, paid: bool = False, dense: bool = False,
                 remote: bool = False, web: bool = False, native_filters: bool = True,
                 today: date | None = None) -> None:
        super().__init__(docs, today=today)
        self.name = name
        self.delay_s = delay_s
        self.error = error
        base = InMemoryBackend.capabilities
        self.capabilities = replace(base, paid=paid, dense=dense, remote=remote or paid or web, web=web,
                                    filters=base.filters if native_filters else frozenset(),
                                    recency=base.recency if native_filters else frozenset())
        self.calls: list[Call] = []
        self.closed = 0

    def _hits(self, query: str, top_k: int, filters: Filters | None, recency: Recency | None,
              dense_query: str | None, started: float) -> list[Hit]:
        if self.error is not None:
            self.calls.append(Call(query, dense_query, top_k, filters, recency, started, time.perf_counter()))
            raise self.error
        hits = InMemoryBackend.search(self, query, top_k=top_k, filters=filters, recency=recency)
        hits = [replace(h, source=self.name) for h in hits]
        self.calls.append(Call(query, dense_query, top_k, filters, recency, started, time.perf_counter()))
        return hits

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        started = time.perf_counter()
        if self.delay_s:
            time.sleep(self.delay_s)
        return self._hits(query, top_k, filters, recency, dense_query, started)

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        started = time.perf_counter()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return self._hits(query, top_k, filters, recency, dense_query, started)

    def close(self) -> None:
        self.closed += 1


__all__ = ["Call", "ScriptedBackend"]
