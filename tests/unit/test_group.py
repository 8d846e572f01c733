"""group_passages: adjacent passages of one document merged, at most per_doc per document, others untouched."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convsearch.group import group_passages
from convsearch.types import Hit

_N = int(os.environ.get("CONVSEARCH_PROPERTY_EXAMPLES", "0") or 0)
PROPS = settings(max_examples=_N or 200, derandomize=not _N, database=None, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


def P(doc: str, chunk: int, score: float = 1.0, **md: object) -> Hit:
    """A passage hit: id ``doc#chunk``, text ``doc chunk``."""
    return Hit(f"{doc}#{chunk}", f"Title {doc}", f"{doc} {chunk}", score, source="local",
               metadata={"doc_id": doc, "chunk": chunk, "source": f"/docs/{doc}.pdf", **md})


def R(i: str, score: float = 1.0) -> Hit:
    """A record without doc_id (a JSONL record or a web result)."""
    return Hit(i, i, f"record {i}", score, url=f"https://x.example/{i}", metadata={"lang": "en"})


def test_adjacent_chunks_merge_in_chunk_order_with_the_best_score_and_place():
    hits = [P("a", 5, 0.9, start=500, end=600, page=3), P("b", 0, 0.8), P("a", 4, 0.7, start=400, end=500, page=2),
            P("a", 6, 0.6, start=600, end=720, page=3)]
    out = group_passages(hits, per_doc=2, limit=5)
    assert [h.id for h in out] == ["a#4", "b#0"]  # the merged hit stands where a#5 (its best) stood
    merged = out[0]
    assert merged.text == "a 4\n\na 5\n\na 6"
    assert merged.score == 0.9
    assert merged.metadata["chunk"] == 4 and merged.metadata["chunk_end"] == 6
    assert (merged.metadata["start"], merged.metadata["end"]) == (400, 720)
    assert (merged.metadata["page"], merged.metadata["page_end"]) == (2, 3)
    assert merged.metadata["source"] == "/docs/a.pdf"
    assert out[1] is hits[1]  # merged with nothing: the very same hit


def test_one_page_merge_has_no_page_end():
    out = group_passages([P("a", 1, page=7), P("a", 2, page=7)], limit=3)
    assert out[0].metadata["page"] == 7 and "page_end" not in out[0].metadata


def test_per_doc_cap_moves_the_next_document_up():
    hits = [P("a", 1, 0.9), P("a", 5, 0.8), P("a", 9, 0.7), P("b", 0, 0.6), P("a", 12, 0.5), P("c", 3, 0.4)]
    assert [h.id for h in group_passages(hits, per_doc=2, limit=3)] == ["a#1", "a#5", "b#0"]
    assert [h.id for h in group_passages(hits, per_doc=1, limit=3)] == ["a#1", "b#0", "c#3"]
    assert [h.id for h in group_passages(hits, per_doc=0, limit=4)] == ["a#1", "a#5", "a#9", "b#0"]  # 0: no cap


def test_records_and_web_results_pass_through_untouched():
    hits = [R("x", 0.9), P("a", 1, 0.8), R("y", 0.7), P("a", 2, 0.6), P("a", 9, 0.5), P("a", 20, 0.4)]
    out = group_passages(hits, per_doc=1, limit=3)
    assert [h.id for h in out] == ["x", "a#1", "y"]
    assert out[0] is hits[0] and out[2] is hits[2]


def test_capped_passages_come_back_when_nothing_else_fills_the_list():
    # a long manual in one file: every candidate is one document's; the cap must not leave the list short
    hits = [P("a", 1, 0.9), P("a", 5, 0.8), R("x", 0.7), P("a", 9, 0.6), P("a", 20, 0.5)]
    assert [h.id for h in group_passages(hits, per_doc=1, limit=4)] == ["a#1", "x", "a#5", "a#9"]
    assert [h.id for h in group_passages(hits, per_doc=2, limit=3)] == ["a#1", "a#5", "x"]


def test_a_capped_passage_outranks_a_much_weaker_hit_of_another_document():
    # a chapter in one file: its third passage (0.72) is worth more than another file's weak hits (0.30, 0.13)
    hits = [P("ch09", 29, 0.90), P("ch09", 44, 0.79), P("ch09", 31, 0.72), P("ch02", 42, 0.30), P("ch01", 36, 0.13)]
    assert [h.id for h in group_passages(hits, per_doc=2, limit=4)] == ["ch09#29", "ch09#44", "ch09#31", "ch02#42"]
    assert [h.id for h in group_passages(hits, per_doc=2, limit=4, yield_below=0)] == \
        ["ch09#29", "ch09#44", "ch02#42", "ch01#36"]  # the strict cap
    # comparably good hits of other documents keep their places ahead of it (0.40 is not under 0.5 × 0.72)
    close = [*hits[:3], P("ch02", 42, 0.40), P("ch05", 16, 0.30)]
    assert [h.id for h in group_passages(close, per_doc=2, limit=4)] == ["ch09#29", "ch09#44", "ch02#42", "ch09#31"]
    assert [h.id for h in group_passages(close, per_doc=2, limit=3)] == ["ch09#29", "ch09#44", "ch02#42"]


def test_a_negative_score_never_brings_a_capped_hit_back():
    hits = [P("a", 1, -0.5), P("a", 5, -1.0), P("a", 9, -1.5), P("b", 0, -9.0)]  # a remote reranker's logits
    assert [h.id for h in group_passages(hits, per_doc=2, limit=3)] == ["a#1", "a#5", "b#0"]


def test_limit_cuts_the_grouped_list():
    hits = [R(str(i)) for i in range(8)]
    assert group_passages(hits, limit=3) == hits[:3]
    assert group_passages([], limit=5) == []


def test_a_doc_id_without_chunk_is_capped_but_never_merged():
    hits = [Hit("d1", "t", "one", 1.0, metadata={"doc_id": "d"}), Hit("d2", "t", "two", 0.9, metadata={"doc_id": "d"}),
            Hit("d3", "t", "three", 0.8, metadata={"doc_id": "d"})]
    assert group_passages(hits, per_doc=2, limit=2) == hits[:2]
    assert group_passages(hits, per_doc=2, limit=5) == hits  # nothing else to show: the capped one comes back


# --- properties ------------------------------------------------------------------------------------------
_hit = st.one_of(
    st.builds(lambda d, c, s, p: P(d, c, s, page=p), st.sampled_from("abcd"), st.integers(0, 12),
              st.floats(0, 1), st.integers(1, 5)),
    st.builds(lambda i, s: R(f"r{i}", s), st.integers(0, 30), st.floats(0, 1)),
)
_hits = st.lists(_hit, max_size=25)
_per_doc = st.integers(0, 4)
_limit = st.integers(0, 30)


def _doc(h: Hit) -> str | None:
    return h.metadata.get("doc_id")


@PROPS
@given(_hits, _per_doc, _limit)
def test_never_more_than_per_doc_per_document_unless_nothing_else_is_left(hits, per_doc, limit):
    out = group_passages(hits, per_doc=per_doc, limit=limit, yield_below=0)  # the strict cap
    assert len(out) <= limit
    if per_doc:
        extra = _extras(out, per_doc)
        # hits over a document's cap only at the tail, after every hit within its cap
        assert extra == [i for i in range(len(out) - len(extra), len(out))]


@PROPS
@given(_hits, _per_doc, _limit)
def test_over_the_cap_only_before_a_much_weaker_hit_or_at_the_tail(hits, per_doc, limit):
    out = group_passages(hits, per_doc=per_doc, limit=limit)
    assert len(out) <= limit
    if per_doc:
        extra = _extras(out, per_doc)
        tail = len(out)
        while tail - 1 in extra:
            tail -= 1
        for i in extra:
            if i >= tail:
                continue
            after = next(out[j] for j in range(i + 1, len(out)) if j not in extra)
            assert after.score < 0.5 * out[i].score, (i, [h.score for h in out])


def _extras(out: list[Hit], per_doc: int) -> list[int]:
    """Positions of the hits past their document's first ``per_doc``."""
    seen: dict[str, int] = {}
    extra = []
    for i, h in enumerate(out):
        d = _doc(h)
        if d is None:
            continue
        seen[d] = seen.get(d, 0) + 1
        if seen[d] > per_doc:
            extra.append(i)
    return extra


@PROPS
@given(_hits, _per_doc, _limit)
def test_order_of_first_appearances_is_kept(hits, per_doc, limit):
    out = group_passages(hits, per_doc=per_doc, limit=limit)
    # where each output hit first appeared in the input: a member of it (same doc, chunk inside its range)
    def first_seen(h: Hit) -> int:
        if _doc(h) is None:
            return next(i for i, x in enumerate(hits) if x is h)
        lo, hi = h.metadata["chunk"], h.metadata.get("chunk_end", h.metadata["chunk"])
        return next(i for i, x in enumerate(hits) if _doc(x) == _doc(h) and lo <= x.metadata["chunk"] <= hi)
    extra = set(_extras(out, per_doc)) if per_doc else set()
    places = [first_seen(h) for i, h in enumerate(out) if i not in extra]
    assert places == sorted(places)
    back = [first_seen(h) for i, h in enumerate(out) if i in extra]
    assert back == sorted(back)  # the ones that came back keep their order too
    assert len(set(places + back)) == len(places + back)


@PROPS
@given(_hits, _per_doc, _limit)
def test_idempotent(hits, per_doc, limit):
    once = group_passages(hits, per_doc=per_doc, limit=limit)
    assert group_passages(once, per_doc=per_doc, limit=limit) == once


@PROPS
@given(_hits, _per_doc, _limit)
def test_no_hit_without_doc_id_is_changed_or_lost(hits, per_doc, limit):
    out = group_passages(hits, per_doc=per_doc, limit=limit)
    plain_in = [h for h in hits if _doc(h) is None]
    plain_out = [h for h in out if _doc(h) is None]
    assert all(any(h is x for x in hits) for h in plain_out)  # the same objects, unchanged
    if len(out) < limit:  # nothing cut by the limit: every record is there, in order
        assert plain_out == plain_in


@PROPS
@given(_hits, _limit)
def test_merged_text_holds_every_member_once_in_chunk_order(hits, limit):
    out = group_passages(hits, per_doc=0, limit=limit)
    for h in out:
        if "chunk_end" in h.metadata:
            lo, hi = h.metadata["chunk"], h.metadata["chunk_end"]
            doc = _doc(h)
            chunks = sorted({x.metadata["chunk"] for x in hits if _doc(x) == doc and lo <= x.metadata["chunk"] <= hi})
            assert chunks == list(range(lo, hi + 1))  # a run of adjacent chunks, all present
            assert h.text == "\n\n".join(f"{doc} {c}" for c in chunks)


def test_adjacent_passages_of_different_sections_stay_apart():
    def sec(chunk: int, section: str, score: float) -> Hit:
        return Hit(f"d#{chunk}", "Guide", f"text {chunk}", score,
                   metadata={"doc_id": "d", "chunk": chunk, "section": section, "page": chunk + 1})

    out = group_passages([sec(2, "3. FAQ", 0.9), sec(1, "2. Connect", 0.8), sec(3, "3. FAQ", 0.7)], limit=5)
    assert [(h.id, h.metadata.get("chunk_end"), h.metadata["section"]) for h in out] == [
        ("d#2", 3, "3. FAQ"), ("d#1", None, "2. Connect")]
    assert out[0].metadata["page"] == 3 and out[0].metadata["page_end"] == 4
