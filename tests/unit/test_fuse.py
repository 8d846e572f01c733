"""Fusion: RRF (k=60) by rank only, and max-score merge by id."""

from __future__ import annotations

import pytest

from convsearch.fuse import RRF_K, Fusion, fuse, fuse_max, fuse_rrf
from convsearch.types import Hit


def H(i: str, score: float = 1.0, title: str = "", **kw) -> Hit:
    return Hit(i, title or i, f"text of {i}", score, **kw)


def test_rrf_constant_is_sixty():
    assert RRF_K == 60


def test_rrf_exact_scores_and_order():
    a = [H("d1", 9.0, "A-d1"), H("d2", 8.0, "A-d2"), H("d3", 7.0, "A-d3")]
    b = [H("d2", 0.9, "B-d2"), H("d4", 0.8, "B-d4")]
    out = fuse_rrf([a, b])
    assert [h.id for h in out] == ["d2", "d1", "d4", "d3"]
    expected = {"d2": 1 / 62 + 1 / 61, "d1": 1 / 61, "d4": 1 / 62, "d3": 1 / 63}
    for h in out:
        assert h.score == pytest.approx(expected[h.id], abs=1e-12)
    assert [h.rank for h in out] == [1, 2, 3, 4]


def test_rrf_keeps_the_best_ranked_copy_metadata():
    a = [H("x", 5.0, "A-x"), H("d2", 4.0, "A-d2", url="https://a.example/d2", metadata={"from": "a"})]
    b = [H("d2", 0.1, "B-d2", url="https://b.example/d2", metadata={"from": "b"})]
    out = {h.id: h for h in fuse_rrf([a, b])}
    d2 = out["d2"]
    assert d2.title == "B-d2"  # rank 1 in b beats rank 2 in a
    assert d2.url == "https://b.example/d2" and d2.metadata == {"from": "b"}


def test_rrf_ignores_raw_scores():
    a = [H("low", 0.001), H("high", 1000.0)]
    out = fuse_rrf([a])
    assert [h.id for h in out] == ["low", "high"]


def test_rrf_ties_keep_first_appearance():
    out = fuse_rrf([[H("x")], [H("y")]])
    assert [h.id for h in out] == ["x", "y"]
    assert out[0].score == out[1].score == pytest.approx(1 / 61)


def test_rrf_custom_k():
    out = fuse_rrf([[H("x"), H("y")]], k=0)
    assert [h.score for h in out] == pytest.approx([1.0, 0.5])


def test_max_keeps_best_score_and_its_copy():
    a = [H("d1", 3.0, "A-d1"), H("d2", 1.0, "A-d2")]
    b = [H("d2", 5.0, "B-d2"), H("d3", 2.0, "B-d3")]
    out = fuse_max([a, b])
    assert [(h.id, h.score, h.title) for h in out] == [("d2", 5.0, "B-d2"), ("d1", 3.0, "A-d1"), ("d3", 2.0, "B-d3")]
    assert [h.rank for h in out] == [1, 2, 3]


def test_fuse_dispatches_on_mode():
    lists = [[H("a", 1.0), H("b", 9.0)]]
    assert [h.id for h in fuse(lists, "rrf")] == ["a", "b"]
    assert [h.id for h in fuse(lists, Fusion.MAX)] == ["b", "a"]
    with pytest.raises(ValueError):
        fuse(lists, "borda")


def test_empty_lists():
    assert fuse_rrf([]) == [] and fuse_rrf([[], []]) == []
    assert fuse_max([[]]) == []
