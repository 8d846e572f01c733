"""Rerank fused hits with the ORIGINAL query (plus the rewrite).

    final = 0.6 · fused + 0.25 · cover(original) + 0.15 · cover(rewrite)
            + 0.2 · (0.625 · heading(original) + 0.375 · heading(rewrite))

``fused`` is the fused score min-max normalised to [0, 1] over this list; ``cover(q)`` is the share of
q's content words (stop words dropped; zh words from jieba) found in the hit's title + text — Chinese
words as substrings, English words on word boundaries. ``heading(q)`` is the share of them found in the
passage's own heading (the last step of ``metadata["section"]``; 0 for a hit that is no passage of an
indexed file), split between the two queries as the text's cover is: in a manual, the heading that names
what a reader asks for ("9.7.1. Making the disk image file", "6.3. 那“sid”呢？") marks the passage that
answers, where its neighbours under the same chapter share the body's words. The original query keeps the
user's own words weighted even when a rewrite drifted; the fused score keeps the engines' judgement in
charge. Pure and cheap: the query side is tokenised once, each hit is only scanned with str.find (no
tokenizer).

The heading weight, measured on ``convsearch eval kb`` (BM25, 115 dev turns; docs/BENCHMARKS.md): 0 → 87.0%
of turns answered, 0.1 → 88.7, 0.15–0.3 → 89.6, 0.4 → 88.7 (a Python turn lost); the held-out set's total
was the same at 0 and 0.2.

It is the registry's ``heuristic`` row (``CONVSEARCH_RERANKER=heuristic``, the default) and, with a remote
reranker configured, the order that reranker starts from and falls back to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..format import SECTION_SEP
from ..resolve.guard import content_words
from ..text import CJK_ONLY_RE, is_cjk
from ..types import Hit

W_FUSED, W_ORIGINAL, W_REWRITE = 0.6, 0.25, 0.15
W_HEADING = 0.2  # shared by the two queries as W_ORIGINAL : W_REWRITE
_H_ORIGINAL, _H_REWRITE = (W_HEADING * W_ORIGINAL / (W_ORIGINAL + W_REWRITE),
                           W_HEADING * W_REWRITE / (W_ORIGINAL + W_REWRITE))


def heading_of(h: Hit) -> str:
    """A passage's own heading: the last step of its ``metadata["section"]`` path ("" when it has none)."""
    section = h.metadata.get("section") if h.metadata else None
    if not section or not isinstance(section, str):
        return ""
    return section.rpartition(SECTION_SEP)[2]


def _has(doc: str, term: str) -> bool:
    """``term`` in lower-cased ``doc``: Chinese as a substring, Latin on word boundaries (str.find, no regex)."""
    i = doc.find(term)
    if i < 0 or is_cjk(term[0]):
        return i >= 0
    n = len(term)
    while i >= 0:
        if (i == 0 or not doc[i - 1].isalnum()) and (i + n == len(doc) or not doc[i + n].isalnum()):
            return True
        i = doc.find(term, i + 1)
    return False


def _cover(terms: set[str], found: set[str]) -> float:
    return len(terms & found) / len(terms) if terms else 0.0


def rerank(hits: Sequence[Hit], original: str, rewritten: str | None = None, *,
           limit: int | None = None, fused: Mapping[str, float] | None = None) -> list[Hit]:
    """``hits`` in their new order, rescored and renumbered 1..n; ``limit`` keeps only the head (the same hits
    as slicing the whole result, without building the rest). ``fused``: each hit's fused score by id, when the
    hits still carry their engines' scores (``fuse.fused_order``)."""
    if not hits:
        return []
    q_orig = content_words(original)
    q_rw = content_words(rewritten) if rewritten and rewritten != original else q_orig
    scores = [h.score for h in hits] if fused is None else [fused[h.id] for h in hits]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    terms = q_orig | q_rw
    # Chinese terms are found in the text as written: lower() changes no CJK character and makes none, so
    # without a Latin term the hits need no lower-casing
    fold = not all(map(CJK_ONLY_RE.fullmatch, terms))
    out = []
    for h, score in zip(hits, scores):
        doc = f"{h.title} {h.text}".lower() if fold else f"{h.title} {h.text}"
        norm = (score - lo) / span if span > 0 else 1.0
        found = {t for t in terms if _has(doc, t)}  # each term scanned once, though both queries may hold it
        final = W_FUSED * norm + W_ORIGINAL * _cover(q_orig, found) + W_REWRITE * _cover(q_rw, found)
        if head := heading_of(h):
            if fold:
                head = head.lower()
            named = {t for t in terms if _has(head, t)}
            final += _H_ORIGINAL * _cover(q_orig, named) + _H_REWRITE * _cover(q_rw, named)
        out.append((final, h))
    out.sort(key=lambda p: -p[0])
    return [Hit(h.id, h.title, h.text, round(s, 6), h.url, h.date, h.source, r, h.metadata)
            for r, (s, h) in enumerate(out[:limit], start=1)]


class HeuristicReranker:
    """The ``heuristic`` row: ``rerank`` above as a ``Reranker`` (``question`` as the original query). No I/O:
    the pipeline runs the formula itself and calls nothing more for this row (``remote`` False)."""

    name = "heuristic"
    remote = False
    candidates = 0

    def rerank(self, question: str, hits: Sequence[Hit], *, limit: int | None = None,
               budget_s: float | None = None) -> list[Hit]:
        return rerank(hits, question, limit=limit)

    async def arerank(self, question: str, hits: Sequence[Hit], *, limit: int | None = None,
                      budget_s: float | None = None) -> list[Hit]:
        return rerank(hits, question, limit=limit)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return "HeuristicReranker()"


HEURISTIC = HeuristicReranker()


def from_settings(settings: Any) -> HeuristicReranker:
    """The registry's factory: one stateless instance for every Pipeline."""
    return HEURISTIC


__all__ = ["HEURISTIC", "HeuristicReranker", "W_FUSED", "W_HEADING", "W_ORIGINAL", "W_REWRITE", "from_settings",
           "heading_of", "rerank"]
