"""Rerank with the ORIGINAL query: final = 0.6·fused_norm + 0.25·cover(original) + 0.15·cover(rewrite), plus
0.2 · (0.625·heading(original) + 0.375·heading(rewrite)) for a passage with a heading path."""

from __future__ import annotations

import pytest

from convsearch.rerank import W_FUSED, W_ORIGINAL, W_REWRITE, rerank
from convsearch.rerank.heuristic import W_HEADING, heading_of
from convsearch.resolve.guard import content_words
from convsearch.types import Hit


def H(i: str, text: str, score: float, title: str = "") -> Hit:
    return Hit(i, title, text, score)


def test_weights_sum_to_one():
    assert W_FUSED + W_ORIGINAL + W_REWRITE == pytest.approx(1.0)


def test_formula_zh_original_words_push_a_hit_up():
    assert content_words("AnySearch 价格") == {"anysearch", "价格"}
    hits = [H("top", "NovaDB 的部署方式", 3.0), H("mid", "AnySearch 的价格是每月 99 元", 2.0),
            H("low", "NovaDB 价格", 1.0)]
    out = rerank(hits, "AnySearch 价格")
    assert [h.id for h in out] == ["mid", "top", "low"]
    scores = {h.id: h.score for h in out}
    # top: fused 1.0, cover 0 → 0.6; mid: fused 0.5, cover 1 (original and rewrite) → 0.3 + 0.25 + 0.15
    assert scores["top"] == pytest.approx(0.6)
    assert scores["mid"] == pytest.approx(0.7)
    # low: fused 0, cover 1/2 → 0.125 + 0.075
    assert scores["low"] == pytest.approx(0.2)
    assert [h.rank for h in out] == [1, 2, 3]


def test_formula_en_with_a_distinct_rewrite():
    original, rewritten = "How much does it cost?", "How much does AnySearch cost?"
    qo, qr = content_words(original), content_words(rewritten)
    assert "anysearch" in qr and "anysearch" not in qo
    hits = [H("a", "NovaDB is a database.", 2.0), H("b", "AnySearch Pro: see the cost table.", 1.0)]
    out = {h.id: h.score for h in rerank(hits, original, rewritten)}
    cover = lambda q, t: len(q & set(t.lower().replace(".", " ").replace(":", " ").split())) / len(q)  # noqa: E731
    exp_b = 0.25 * cover(qo, hits[1].text) + 0.15 * cover(qr, hits[1].text)
    assert out["a"] == pytest.approx(0.6)
    assert out["b"] == pytest.approx(exp_b, abs=1e-6)


def test_original_query_beats_drifted_rewrite():
    # the rewrite drifted to NovaDB; the user's own word (AnySearch) still lifts the right hit
    hits = [H("nova", "NovaDB price list", 1.0), H("any", "AnySearch price list", 1.0)]
    out = rerank(hits, "AnySearch price", "NovaDB price")
    assert out[0].id == "any"


def test_stable_when_all_scores_equal_and_no_overlap():
    hits = [H(f"h{i}", f"unrelated text {i}", 0.5) for i in range(5)]
    out = rerank(hits, "完全无关的查询")
    assert [h.id for h in out] == [f"h{i}" for i in range(5)]
    assert all(h.score == pytest.approx(W_FUSED) for h in out)


def test_title_counts_toward_cover():
    hits = [H("a", "body without the word", 1.0, title=""), H("b", "body", 1.0, title="AnySearch 价格")]
    assert rerank(hits, "AnySearch 价格")[0].id == "b"


def P(i: str, text: str, score: float, section: str) -> Hit:
    return Hit(i, "Debian Reference", text, score, metadata={"doc_id": "ch09", "chunk": int(i[-1]), "section": section})


def test_heading_of_is_the_last_step_of_the_section_path():
    assert heading_of(P("p1", "x", 1.0, "Chapter 9 › 9.7. The disk image › 9.7.1. Making the disk image file")) == \
        "9.7.1. Making the disk image file"
    assert heading_of(P("p1", "x", 1.0, "简介")) == "简介"
    assert heading_of(H("w", "a web page", 1.0, title="Making disk images")) == ""


def test_heading_that_names_the_question_lifts_its_passage_en():
    # same body words, same fused score: the passage under the heading that names the task wins
    body = "Use dd to copy a disk to an image file."
    hits = [P("p0", body, 1.0, "Chapter 9 › 9.11. Virtualized system › 9.11.2. Virtualization work flow"),
            P("p1", body, 1.0, "Chapter 9 › 9.7. The disk image › 9.7.1. Making the disk image file")]
    out = rerank(hits, "How do I make an image file of a whole disk?")
    assert [h.id for h in out] == ["p1", "p0"]
    q = content_words("How do I make an image file of a whole disk?")
    named = {t for t in q if t in "9.7.1. making the disk image file".split()}
    assert named and out[0].score - out[1].score == pytest.approx(W_HEADING * len(named) / len(q), abs=1e-6)


def test_heading_zh_original_words_weigh_more_than_the_rewrite():
    # "那 sid 呢？": the user's own word is in one heading, the rewrite's words in the other
    hits = [P("p0", "Debian 版本的代号来自电影玩具总动员", 1.0, "第 6 章 Debian 档案库 › 6.2. Debian 版本的代号"),
            P("p1", "Debian 版本的代号来自电影玩具总动员", 1.0, "第 6 章 Debian 档案库 › 6.3. 那“sid”呢？")]
    out = rerank(hits, "那 sid 呢？", "Debian 版本的代号 sid")
    assert out[0].id == "p1"


def test_heading_signal_leaves_hits_without_a_section_alone():
    plain = [H("a", "AnySearch 的价格是每月 99 元", 2.0), H("b", "NovaDB 价格", 1.0)]
    with_path = [Hit(h.id, h.title, h.text, h.score, metadata={"section": "Guide"}) for h in plain]
    assert [(h.id, h.score) for h in rerank(plain, "AnySearch 价格")] == \
        [(h.id, h.score) for h in rerank(with_path, "AnySearch 价格")]  # "Guide" names no query word


def test_empty():
    assert rerank([], "anything") == []


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 10, None])
def test_limit_gives_the_head_of_the_whole_result(limit):
    hits = [H("a", "NovaDB 的部署方式", 3.0), H("b", "AnySearch 的价格是每月 99 元", 2.0), H("c", "NovaDB 价格", 1.0),
            H("d", "AnySearch pricing per month", 1.0, title="AnySearch price")]
    whole = rerank(hits, "AnySearch 价格", "AnySearch 的价格")
    assert rerank(hits, "AnySearch 价格", "AnySearch 的价格", limit=limit) == whole[:limit]
