"""One contract every SearchBackend passes: the in-memory double and the real index (BM25, hash-hybrid)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from convsearch import SearchBackend
from convsearch.backends.base import InMemoryBackend
from convsearch.backends.local import LocalIndex
from convsearch.embed import HashEmbedder
from convsearch.types import Document, Hit

pytestmark = pytest.mark.integration


@pytest.fixture(params=["memory", "local-bm25", "local-hash"])
def backend(request, tmp_path, corpus):
    docs = [replace(d, lang=d.id.split("-")[0]) for d in corpus]
    if request.param == "memory":
        b = InMemoryBackend()
    elif request.param == "local-bm25":
        b = LocalIndex(tmp_path / "ix")
    else:
        b = LocalIndex(tmp_path / "ix", embedder=HashEmbedder(dim=64))
    b.add(docs)
    return b


def test_protocol(backend):
    assert isinstance(backend, SearchBackend)
    assert isinstance(backend.name, str) and backend.name


@pytest.mark.parametrize("query,expected", [("番禺 露营", "zh-camp-py"), ("Falcon rocket launch", "en-spacex-launch")])
def test_ranked_hits(backend, query, expected):
    hits = backend.search(query, top_k=5)
    assert hits and all(isinstance(h, Hit) for h in hits)
    assert hits[0].id == expected
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    assert len({h.id for h in hits}) == len(hits)


def test_top_k(backend):
    assert len(backend.search("AnySearch NovaDB SpaceX 价格 露营", top_k=3)) <= 3
    assert len(backend.search("AnySearch NovaDB SpaceX 价格 露营", top_k=1)) == 1


def test_lang_filter(backend):
    for lang in ("zh", "en"):
        hits = backend.search("AnySearch NovaDB", top_k=10, filters={"lang": lang})
        assert hits and all(h.id.startswith(lang + "-") for h in hits)


def test_async_twin_matches(backend):
    q = "深圳 露营"
    assert [h.id for h in asyncio.run(backend.asearch(q, top_k=3))] == [h.id for h in backend.search(q, top_k=3)]


def test_upsert_and_delete(backend, request):
    backend.add([Document("zh-leave", "年假改为每年十五天。", title="年假新规", lang="zh")])
    assert backend.search("年假", top_k=1)[0].title == "年假新规"
    assert backend.delete(["zh-leave", "missing"]) == 1
    assert all(h.id != "zh-leave" for h in backend.search("年假", top_k=10))
