"""Merge ranked lists from several queries or engines.

Raw scores are never compared across engines: ``fuse_max`` compares only within one engine's lists
(same scorer, different queries), ``fuse_rrf`` uses ranks alone.

RRF: score(d) = Σ_lists 1 / (k + rank_d), k = 60 (Cormack, Clarke & Büttcher, SIGIR 2009,
"Reciprocal Rank Fusion outperforms Condorcet and individual rank learning methods").
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from .types import Hit

RRF_K = 60


class Fusion(StrEnum):
    """rrf: reciprocal rank fusion (ranks only); max: the best score, within one engine's lists."""

    RRF = "rrf"
    MAX = "max"


def _rescored(h: Hit, score: float, rank: int) -> Hit:
    # the constructor is ~5x cheaper than dataclasses.replace, and this runs for every fused hit
    return Hit(h.id, h.title, h.text, score, h.url, h.date, h.source, rank, h.metadata)


def rrf_order(lists: Sequence[Sequence[Hit]], k: int = RRF_K,
              limit: int | None = None) -> tuple[list[Hit], dict[str, float]]:
    """Reciprocal rank fusion without building new hits: the best-ranked copy of each document in fused order (ties
    keep the order of first appearance) and the fused score by id. ``limit`` keeps only the head."""
    scores: dict[str, float] = {}
    best: dict[str, tuple[int, Hit]] = {}
    for hits in lists:
        for rank, h in enumerate(hits, start=1):
            i = h.id
            s = scores.get(i)
            if s is None:
                scores[i] = 0.0 + 1.0 / (k + rank)
                best[i] = (rank, h)
            else:
                scores[i] = s + 1.0 / (k + rank)
                if rank < best[i][0]:
                    best[i] = (rank, h)
    # the dict holds first appearances in order and the sort is stable (reversed too): ties keep that order
    ids = sorted(scores, key=scores.__getitem__, reverse=True)[:limit]
    return [best[i][1] for i in ids], {i: scores[i] for i in ids}


def max_order(lists: Sequence[Sequence[Hit]], limit: int | None = None) -> tuple[list[Hit], dict[str, float]]:
    """Each document's best-scored copy, best first (same engine only), and that score by id."""
    best: dict[str, Hit] = {}
    order: dict[str, int] = {}
    for hits in lists:
        for h in hits:
            order.setdefault(h.id, len(order))
            if h.id not in best or h.score > best[h.id].score:
                best[h.id] = h
    ids = sorted(best, key=lambda i: (-best[i].score, order[i]))[:limit]
    return [best[i] for i in ids], {i: best[i].score for i in ids}


def fused_order(lists: Sequence[Sequence[Hit]], mode: Fusion | str = Fusion.RRF, k: int = RRF_K,
                limit: int | None = None) -> tuple[list[Hit], dict[str, float]]:
    """``fuse`` as (the hits as the engines returned them, in fused order; their fused scores by id): for a caller
    that rescores them anyway (a turn's dedup and rerank), without a new hit per document."""
    return rrf_order(lists, k, limit) if Fusion(mode) is Fusion.RRF else max_order(lists, limit)


def _rescore_all(hits: list[Hit], scores: dict[str, float]) -> list[Hit]:
    return [_rescored(h, scores[h.id], r) for r, h in enumerate(hits, start=1)]


def fuse_rrf(lists: Sequence[Sequence[Hit]], k: int = RRF_K, limit: int | None = None) -> list[Hit]:
    """Reciprocal rank fusion; ties keep the order of first appearance. Metadata of the best-ranked copy wins.
    ``limit`` keeps only the head of the fused list."""
    return _rescore_all(*rrf_order(lists, k, limit))


def fuse_max(lists: Sequence[Sequence[Hit]], limit: int | None = None) -> list[Hit]:
    """Merge by id keeping each document's best score (same engine only)."""
    return _rescore_all(*max_order(lists, limit))


def fuse(lists: Sequence[Sequence[Hit]], mode: Fusion | str = Fusion.RRF, k: int = RRF_K,
         limit: int | None = None) -> list[Hit]:
    return _rescore_all(*fused_order(lists, mode, k, limit))  # one dispatch on the mode: fused_order's
