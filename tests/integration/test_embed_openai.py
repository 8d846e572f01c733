"""The ``openai`` embedder against a real loopback /v1/embeddings server (convsearch.testing.embed_server):
batching, base64, order, retries, timeouts, the key header, the concurrency cap; an index made by one embedder
refused by another in one line; a query whose embedding fails answered from BM25 with ``embed:`` in the trace."""

from __future__ import annotations

import time

import numpy as np
import pytest

from convsearch import BackendError, Document, Pipeline, Settings
from convsearch.backends.factory import open_local
from convsearch.backends.local import LocalIndex
from convsearch.embed import HashEmbedder
from convsearch.embed.openai import OpenAIEmbedder, normalise
from convsearch.embed.registry import close_all
from convsearch.errors import EmbedError
from convsearch.secret import Secret
from convsearch.testing.embed_server import EmbedServer, Fault, vector_for

pytestmark = pytest.mark.integration
DIM = 32


@pytest.fixture
def srv():
    with EmbedServer(dim=DIM) as s:
        yield s


def _emb(srv: EmbedServer, **kw) -> OpenAIEmbedder:
    e = OpenAIEmbedder("fake-embed", base_url=srv.base_url, **kw)
    return e


def expected(texts) -> np.ndarray:
    return normalise(np.stack([vector_for(t, DIM) for t in texts]))


def test_batches_base64_and_vectors(srv):
    e = _emb(srv, batch=64)
    texts = [f"passage {i} 的文本" for i in range(150)]
    got = e.embed_passages(texts)
    assert got.dtype == np.float32 and got.shape == (150, DIM) and e.dim == DIM
    assert np.allclose(got, expected(texts), atol=1e-6)
    reqs = srv.requests
    assert len(reqs) == 3 and sorted(len(r["json"]["input"]) for r in reqs) == [22, 64, 64]
    assert all(r["json"]["encoding_format"] == "base64" and r["json"]["model"] == "fake-embed" for r in reqs)
    assert np.allclose(e.embed_query("passage 3 的文本"), got[3], atol=1e-6)
    e.close()


def test_answers_out_of_order_are_put_back_by_index():
    with EmbedServer(dim=DIM, shuffle=True) as s:
        texts = ["a", "b", "c", "d"]
        assert np.allclose(_emb(s).embed_passages(texts), expected(texts), atol=1e-6)


def test_429_then_success_is_retried(srv):
    srv.push(Fault(429, retry_after=0.01))
    assert np.allclose(_emb(srv).embed_passages(["x"]), expected(["x"]), atol=1e-6)
    assert len(srv.requests) == 2


def test_500s_are_retried_then_an_embed_error(srv):
    srv.push(Fault(500, retry_after=0.01), Fault(502, retry_after=0.01))
    assert _emb(srv, max_retries=2).embed_passages(["x"]).shape == (1, DIM)
    assert len(srv.requests) == 3
    srv.reset()
    srv.push(*[Fault(500, retry_after=0.01)] * 3)
    with pytest.raises(EmbedError, match=r"^embed: server error \(HTTP 500\) after the retries$") as got:
        _emb(srv, max_retries=2).embed_passages(["x"])
    assert got.value.status == 500 and got.value.service == "embed" and len(srv.requests) == 3


def test_a_slow_server_is_a_timeout(srv):
    srv.push(Fault(delay_s=3.0))
    t0 = time.perf_counter()
    with pytest.raises(EmbedError, match="timed out"):
        _emb(srv, timeout_s=0.3, max_retries=0).embed_passages(["x"])
    assert time.perf_counter() - t0 < 2.0


def test_a_bad_request_is_not_retried_and_names_the_status(srv):
    with pytest.raises(EmbedError, match=r"request rejected \(HTTP 400\).*empty string"):
        _emb(srv).embed_passages(["ok", ""])
    assert len(srv.requests) == 1


def test_the_key_is_sent_when_set_and_no_header_when_not():
    with EmbedServer(dim=DIM, api_key="sk-embed") as s:
        _emb(s, api_key=Secret.from_token("sk-embed")).embed_query("x")
        assert s.requests[-1]["headers"]["authorization"] == "Bearer sk-embed"
        with pytest.raises(EmbedError, match="HTTP 401") as got:
            _emb(s, api_key=Secret.from_token("sk-wrong")).embed_query("x")
        assert "sk-wrong" not in str(got.value)
    with EmbedServer(dim=DIM) as s:
        _emb(s).embed_query("x")
        assert "authorization" not in s.requests[-1]["headers"]


def test_concurrency_is_capped_per_process():
    with EmbedServer(dim=DIM, latency_s=0.05) as s:
        e = _emb(s, batch=4, concurrency=3)
        got = e.embed_passages([f"t{i}" for i in range(80)])  # 20 batches
        assert got.shape == (80, DIM) and len(s.requests) == 20
        assert 2 <= s.max_in_flight <= 3
        e.close()


def test_dim_learned_from_a_probe_when_needed(srv):
    e = _emb(srv)
    assert e.dim == DIM and srv.requests[0]["json"]["input"] == ["dimension"]
    with pytest.raises(EmbedError, match="32-dim vectors, not 16"):
        _emb(srv, dim=16).embed_passages(["x"])


# --- indexes ---------------------------------------------------------------------------------------------------
DOCS = [Document("zh-price", "AnySearch 专业版每月 99 元", title="AnySearch 价格"),
        Document("en-launch", "SpaceX first launched Falcon 1 in 2006", title="Falcon 1"),
        Document("en-camp", "Camping near the lake is allowed in summer", title="Camping")]


def test_an_index_refuses_another_embedder_in_one_line(tmp_path, srv):
    where = tmp_path / "ix"
    LocalIndex(where, embedder=HashEmbedder(dim=256)).add(DOCS)
    with pytest.raises(BackendError) as got:
        LocalIndex(where, embedder=HashEmbedder(dim=128))
    assert str(got.value) == (f"the index at {where} was embedded with hash/words (256 dims), not hash/words "
                              f"(128 dims): re-index (delete {where} and run `convsearch index` again) or use "
                              "CONVSEARCH_EMBED_DIM=256")
    with pytest.raises(BackendError) as got:
        LocalIndex(where, embedder=_emb(srv))
    assert "\n" not in str(got.value)
    assert str(got.value).endswith(f"not openai/fake-embed ({DIM} dims): re-index (delete {where} and run "
                                   "`convsearch index` again) or use CONVSEARCH_EMBEDDER=hash")


def test_a_query_whose_embedding_fails_is_answered_from_bm25(tmp_path):
    s = EmbedServer(dim=DIM).start()
    env = {"CONVSEARCH_DATA_DIR": str(tmp_path), "CONVSEARCH_EMBEDDER": "openai",
           "CONVSEARCH_EMBED_BASE_URL": s.base_url, "CONVSEARCH_EMBED_MODEL": "fake-embed",
           "CONVSEARCH_EMBED_MAX_RETRIES": "0", "CONVSEARCH_EMBED_TIMEOUT_S": "0.5"}
    try:
        settings = Settings.from_env(env)
        idx = open_local(settings, create=True)
        idx.add(DOCS)
        assert idx.capabilities.dense and idx.search("Falcon launch", top_k=2)[0].source == "hybrid"
        s.push(Fault(delay_s=3.0))  # slow: past the 0.5 s timeout
        with Pipeline(idx, settings=settings) as p:
            r = p.search("When did Falcon 1 launch?")
        assert r.hits and r.hits[0].id == "en-launch"
        assert any(n.startswith("embed: timed out") and "answered from BM25" in n for n in r.trace.notes)
        assert [e for e in r.errors if e.startswith("embed: ")] and not r.partial  # flagged, the turn still answered
        idx.close()
    finally:
        s.close()
    close_all()
    # the server is gone: the index opens anyway (its dim is the one it recorded: no request) and BM25 answers
    idx = open_local(Settings.from_env(env))
    with Pipeline(idx, settings=Settings.from_env(env)) as p:
        r = p.search("SpaceX Falcon 1")
    assert r.hits[0].id == "en-launch" and r.hits[0].source == "bm25"
    assert any(n.startswith("embed: cannot reach http://127.0.0.1") for n in r.trace.notes)
    assert any(e.startswith("embed: cannot reach") for e in r.errors)
    idx.close()
    close_all()
