"""The ``Reranker`` contract, the pure step every remote reranker shares (``apply_order``), and a test double.

A reranker reorders a turn's candidates for one question: ``rerank(question, hits, *, limit, budget_s)`` (and
``arerank``, its async twin) returns the hits in its order, rescored and renumbered 1..n, or raises
``RerankError``; ``close()`` releases its client. ``remote`` says whether it calls a server: the pipeline then
runs the heuristic first (the fallback order, and the order the candidates are picked in) and hands the head of
that list, ``candidates`` hits, to the reranker with the standalone question.

>>> from convsearch.types import Hit
>>> hits = [Hit("a", "", "NovaDB pricing", 1.0, rank=1), Hit("b", "", "AnySearch pricing", 0.5, rank=2),
...         Hit("c", "", "cats", 0.2, rank=3)]
>>> [(h.id, h.score, h.rank) for h in apply_order(hits, [(1, 0.9), (0, 0.1)], sent=2)]
[('b', 0.9, 1), ('a', 0.1, 2), ('c', 0.2, 3)]
>>> r = ScriptedReranker()
>>> [h.id for h in r.rerank("AnySearch pricing", hits)], r.calls[0].question
(['b', 'a', 'c'], 'AnySearch pricing')
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ..errors import RerankError
from ..types import Hit

DOC_CHARS = 1200  # what of a hit's title + text is sent: ~300 English words; servers truncate further to their model


class Reranker(Protocol):
    """Reorders a turn's candidates for one question; ``RerankError`` when it cannot (the caller keeps its order)."""

    name: str
    remote: bool      # calls a server: the pipeline falls back to the heuristic order when it fails
    candidates: int   # how many of the head of the list it reorders (0: all it is given)

    def rerank(self, question: str, hits: Sequence[Hit], *, limit: int | None = None,
               budget_s: float | None = None) -> list[Hit]: ...

    async def arerank(self, question: str, hits: Sequence[Hit], *, limit: int | None = None,
                      budget_s: float | None = None) -> list[Hit]: ...

    def close(self) -> None: ...


def document(hit: Hit, max_chars: int = DOC_CHARS) -> str:
    """What a reranker reads of a hit: its title and text, cut to ``max_chars``."""
    text = f"{hit.title}\n{hit.text}" if hit.title else hit.text
    return text[:max_chars]


def apply_order(hits: Sequence[Hit], order: Sequence[tuple[int, float]], *, sent: int,
                limit: int | None = None) -> list[Hit]:
    """``hits`` reordered by a reranker's answer: ``order`` is (index into the ``sent`` first hits, score) in the
    reranker's order. Those hits come first, with its scores; the sent hits it left out and the hits past
    ``sent`` follow in their old order with their old scores. Ranks renumbered 1..n; ``limit`` cuts the result."""
    seen: set[int] = set()
    out: list[Hit] = []
    for i, score in order:
        if 0 <= i < sent and i not in seen:
            seen.add(i)
            out.append(replace(hits[i], score=round(float(score), 6)))
    out.extend(h for i, h in enumerate(hits) if i not in seen)
    return [replace(h, rank=r) for r, h in enumerate(out[:limit], start=1)]


# --- a deterministic scorer: the test double and the loopback server score alike ----------------------------

_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")


def overlap_tokens(text: str) -> set[str]:
    """Lower-cased Latin words and single CJK characters."""
    return set(_TOKEN.findall(text.lower()))


def overlap_score(query: str, doc: str) -> float:
    """The share of the query's tokens found in ``doc`` (0..1), rounded to 6 places: a word-overlap score whose
    order tests can predict."""
    q = overlap_tokens(query)
    return round(len(q & overlap_tokens(doc)) / len(q), 6) if q else 0.0


def overlap_order(query: str, docs: Sequence[str]) -> list[tuple[int, float]]:
    """(index, score) by descending ``overlap_score``, ties in document order."""
    scored = [(i, overlap_score(query, d)) for i, d in enumerate(docs)]
    return sorted(scored, key=lambda p: (-p[1], p[0]))


# --- the test double ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RerankCall:
    """One call of a ``ScriptedReranker``: the question and the documents it was given."""

    question: str
    documents: tuple[str, ...]
    budget_s: float | None


class ScriptedReranker:
    """An in-process ``Reranker`` for tests: orders by ``score(question, document)`` (default: word overlap),
    raises ``fail`` (a RerankError) when set, waits ``delay_s`` per call, and records every call in ``calls``.

    ``remote`` (default True) makes a pipeline treat it as a server's: heuristic first, then this, falling back on
    its errors."""

    def __init__(self, *, score: Callable[[str, str], float] = overlap_score, fail: RerankError | None = None,
                 delay_s: float = 0.0, candidates: int = 30, name: str = "scripted", remote: bool = True) -> None:
        self.score = score
        self.fail = fail
        self.delay_s = delay_s
        self.candidates = candidates
        self.name = name
        self.remote = remote
        self.calls: list[RerankCall] = []
        self.closed = False
        self._lock = threading.Lock()

    def _order(self, question: str, hits: Sequence[Hit], limit: int | None, budget_s: float | None) -> list[Hit]:
        sent = len(hits) if self.candidates <= 0 else min(self.candidates, len(hits))
        docs = tuple(document(h) for h in hits[:sent])
        with self._lock:
            self.calls.append(RerankCall(question, docs, budget_s))
        if self.fail is not None:
            raise self.fail
        order = sorted(((i, float(self.score(question, d))) for i, d in enumerate(docs)), key=lambda p: (-p[1], p[0]))
        return apply_order(hits, order, sent=sent, limit=limit)

    def rerank(self, question: str, hits: Sequence[Hit], *, limit: int | None = None,
               budget_s: float | None = None) -> list[Hit]:
        if self.delay_s:
            time.sleep(self.delay_s)
        return self._order(question, hits, limit, budget_s)

    async def arerank(self, question: str, hits: Sequence[Hit], *, limit: int | None = None,
                      budget_s: float | None = None) -> list[Hit]:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return self._order(question, hits, limit, budget_s)

    def close(self) -> None:
        self.closed = True

    def __repr__(self) -> str:
        return f"ScriptedReranker(name={self.name!r})"


__all__ = ["DOC_CHARS", "RerankCall", "Reranker", "ScriptedReranker", "apply_order", "document", "overlap_order",
           "overlap_score", "overlap_tokens"]
