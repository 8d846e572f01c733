"""Rerank fused hits with the ORIGINAL query (plus the rewrite).

    final = 0.6 · fused + 0.25 · cover(original) + 0.15 · cover(rewrite)

``fused`` is the fused score min-max normalised to [0, 1] over this list; ``cover(q)`` is the share of
q's content words (stop words dropped; zh words from jieba) found in the hit's title + text. The original
query keeps the user's own words weighted even when a rewrite drifted; the fused score keeps the engines'
judgement in charge. Pure and cheap: one tokenisation per hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .rewrite.guard import content_words
from .text import words
from .types import Hit

W_FUSED, W_ORIGINAL, W_REWRITE = 0.6, 0.25, 0.15


def _cover(q: set[str], doc: set[str]) -> float:
    return len(q & doc) / len(q) if q else 0.0


def rerank(hits: Sequence[Hit], original: str, rewritten: str | None = None) -> list[Hit]:
    if not hits:
        return []
    q_orig = content_words(original)
    q_rw = content_words(rewritten) if rewritten and rewritten != original else q_orig
    scores = [h.score for h in hits]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    out = []
    for h in hits:
        doc = set(words(f"{h.title} {h.text}"))
        fused = (h.score - lo) / span if span > 0 else 1.0
        final = W_FUSED * fused + W_ORIGINAL * _cover(q_orig, doc) + W_REWRITE * _cover(q_rw, doc)
        out.append((final, h))
    out.sort(key=lambda p: -p[0])
    return [replace(h, score=round(s, 6), rank=r) for r, (s, h) in enumerate(out, start=1)]
