"""Group the passages of one document in a ranked list, so the top k shows distinct sources (pure).

Passages cut from one file (``metadata["doc_id"]``, ``metadata["chunk"]``: the passage's index in its document)
often rank together. Two rules, in this order:

1. Passages of one document and one section (``metadata["section"]``) whose chunks are adjacent (i and i+1, both
   in the list) become one hit: texts joined in
   chunk order with a blank line; the metadata is the first chunk's, with ``chunk`` the first, ``chunk_end`` the
   last, ``start`` the smallest, ``end`` the largest, ``page`` the smallest and ``page_end`` the largest (kept only
   when it differs from ``page``); the score is the best member's, the id the first chunk's. The merged hit stands
   where its best-ranked member stood.
2. At most ``per_doc`` hits (merged or not) per document; the document's later ones are held back and the next
   hits move up. ``per_doc=0``: no limit. The cap is for distinct sources among comparably good hits, so a held
   back hit comes back right before the first later hit that scores less than ``yield_below`` (0.5) times its
   score (a strong third passage of a chapter over a weak first one of another file). When too few other
   documents are left to fill ``limit`` (a long manual in one file), the rest come back after the others, in rank
   order.

Hits without a ``doc_id`` pass through untouched, and so does a hit that merges with nothing. The result is cut
to ``limit``. Grouping its own output changes nothing.

>>> from convsearch.types import Hit
>>> def p(doc, chunk, score):
...     return Hit(f"{doc}#{chunk}", doc, f"text {chunk}", score, metadata={"doc_id": doc, "chunk": chunk})
>>> out = group_passages([p("a", 3, .9), p("a", 4, .8), p("a", 9, .7), p("a", 1, .6), p("b", 0, .5)], limit=3)
>>> [(h.id, h.metadata.get("chunk_end"), h.score) for h in out]
[('a#3', 4, 0.9), ('a#9', None, 0.7), ('b#0', None, 0.5)]
>>> out[0].text
'text 3\\n\\ntext 4'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .types import Hit


def _chunk_range(h: Hit) -> tuple[int, int] | None:
    """(first chunk, last chunk) of a passage hit; None when it carries no integer ``chunk``."""
    first = h.metadata.get("chunk")
    if not isinstance(first, int) or isinstance(first, bool):
        return None
    last = h.metadata.get("chunk_end", first)
    if not isinstance(last, int) or isinstance(last, bool) or last < first:
        last = first
    return first, last


def _ints(values: Sequence[Any]) -> list[int]:
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)]


def _merge(members: list[tuple[int, Hit]]) -> tuple[int, Hit]:
    """One hit of ``members`` ((position, hit) of one document, sorted by chunk, chunk ranges touching)."""
    if len(members) == 1:
        return members[0]
    first = members[0][1]
    texts: list[str] = []
    covered = -1
    for _, h in members:
        lo, hi = _chunk_range(h) or (0, 0)
        if hi <= covered:
            continue  # its chunks are already in (a duplicate): its text would repeat
        texts.append(h.text)
        covered = hi
    md = dict(first.metadata)
    ranges = [r for _, h in members if (r := _chunk_range(h)) is not None]
    md["chunk"] = min(r[0] for r in ranges)
    md["chunk_end"] = max(r[1] for r in ranges)
    mds = [h.metadata for _, h in members]
    if starts := _ints([m.get("start") for m in mds]):
        md["start"] = min(starts)
    if ends := _ints([m.get("end") for m in mds]):
        md["end"] = max(ends)
    pages = _ints([m.get("page") for m in mds])
    if pages:
        md["page"] = min(pages)
        last_page = max(pages + _ints([m.get("page_end") for m in mds]))
        if last_page != md["page"]:
            md["page_end"] = last_page
        else:
            md.pop("page_end", None)
    best = min(members, key=lambda m: m[0])  # the list is ranked: the earliest member is the best placed
    score = max(h.score for _, h in members)
    return best[0], replace(first, text="\n\n".join(texts), score=score, rank=best[1].rank, metadata=md)


def _runs(members: list[tuple[int, Hit]]) -> list[list[tuple[int, Hit]]]:
    """``members`` of one document split into runs of touching chunk ranges of one section (hits without a chunk:
    alone). Passages under different headings are different topics: they stay apart, each citing its own section
    and page."""
    chunked = sorted((m for m in members if _chunk_range(m[1]) is not None),
                     key=lambda m: (*(_chunk_range(m[1]) or (0, 0)), m[0]))
    runs: list[list[tuple[int, Hit]]] = [[m] for m in members if _chunk_range(m[1]) is None]
    end = None
    section = None
    for m in chunked:
        lo, hi = _chunk_range(m[1]) or (0, 0)
        sec = m[1].metadata.get("section")
        if end is not None and lo <= end + 1 and sec == section:
            runs[-1].append(m)
            end = max(end, hi)
        else:
            runs.append([m])
            end, section = hi, sec
    return runs


YIELD_BELOW = 0.5  # a capped hit comes back before later hits scoring under this share of its score


def group_passages(hits: Sequence[Hit], *, per_doc: int = 2, limit: int,
                   yield_below: float = YIELD_BELOW) -> list[Hit]:
    """``hits`` (ranked) with adjacent passages of one document merged, at most ``per_doc`` per document (0: no
    limit) while the hits after them are comparably good (``yield_below``; 0: a strict cap), cut to ``limit``; see
    the module docstring."""
    by_doc: dict[str, list[tuple[int, Hit]]] = {}
    placed: list[tuple[int, Hit]] = []
    for i, h in enumerate(hits):
        doc = h.metadata.get("doc_id")
        if doc is None or doc == "":
            placed.append((i, h))
        else:
            by_doc.setdefault(str(doc), []).append((i, h))
    spare: list[tuple[int, Hit]] = []
    for members in by_doc.values():
        # each run stands where its best-ranked member stood; the document's first per_doc runs are kept
        merged = sorted((_merge(run) for run in _runs(members)), key=lambda m: m[0])
        placed.extend(merged[:per_doc] if per_doc > 0 else merged)
        spare.extend(merged[per_doc:] if per_doc > 0 else [])
    placed.sort(key=lambda m: m[0])
    spare.sort(key=lambda m: m[0])
    if spare and yield_below > 0:
        placed, spare = _yield(placed, spare, yield_below)
    if len(placed) < limit and spare:
        # too few other documents to fill the list (a long manual in one file): the capped ones come back, in
        # rank order, after the others
        placed.extend(spare[:limit - len(placed)])
    return [h for _, h in placed[:max(limit, 0)]]


def _yield(placed: list[tuple[int, Hit]], spare: list[tuple[int, Hit]],
           ratio: float) -> tuple[list[tuple[int, Hit]], list[tuple[int, Hit]]]:
    """(placed with each held-back hit of ``spare`` put right before the first later placed hit that scores under
    ``ratio`` times its score, the held-back hits that found none). Only a positive score can outweigh another: a
    remote reranker's raw logits may be negative."""
    keyed = [((m[0], 1, 0), m) for m in placed]
    left: list[tuple[int, Hit]] = []
    last = -1  # held-back hits keep their order: none comes back before an earlier one
    for s in spare:
        bar = ratio * s[1].score
        weak = None if left or bar <= 0 else next(
            (m[0] for m in placed if m[0] > s[0] and m[0] >= last and m[1].score < bar), None)
        if weak is None:
            left.append(s)
        else:
            keyed.append(((weak, 0, s[0]), s))
            last = weak
    keyed.sort(key=lambda k: k[0])
    return [m for _, m in keyed], left


def neighbour_ids(h: Hit) -> list[str]:
    """The ids of the passages just before and just after ``h`` in its document (``<doc_id>#<chunk>``), or [] for
    a hit that is no passage of an indexed file."""
    doc, rng = h.metadata.get("doc_id"), _chunk_range(h)
    if not doc or rng is None:
        return []
    return [f"{doc}#{i}" for i in (rng[0] - 1, rng[1] + 1) if i >= 0]


def widen(h: Hit, neighbours: Sequence[Hit]) -> Hit:
    """``h`` merged with those of ``neighbours`` that are the passages right next to it in the same document and
    section (the merge of rule 1); ``h`` itself when none is.

    >>> from convsearch.types import Hit
    >>> def p(chunk, section="S"):
    ...     md = {"doc_id": "d", "chunk": chunk, "section": section}
    ...     return Hit(f"d#{chunk}", "T", f"text {chunk}", 1.0, metadata=md)
    >>> widen(p(4), [p(3), p(5, section="Other")]).text
    'text 3\\n\\ntext 4'
    """
    rng = _chunk_range(h)
    if rng is None:
        return h
    doc, section = h.metadata.get("doc_id"), h.metadata.get("section")
    near = [n for n in neighbours if n.metadata.get("doc_id") == doc and n.metadata.get("section") == section
            and (r := _chunk_range(n)) is not None and (r[1] == rng[0] - 1 or r[0] == rng[1] + 1)]
    if not near:
        return h
    _, merged = _merge(sorted([(0, h), *((1, n) for n in near)], key=lambda m: _chunk_range(m[1]) or (0, 0)))
    return replace(merged, id=h.id, score=h.score, rank=h.rank)  # the passage found keeps its id


__all__ = ["group_passages", "neighbour_ids", "widen"]
