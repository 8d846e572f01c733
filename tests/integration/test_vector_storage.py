"""The local index's vector storage under crashes and concurrency: kill -9 during a long ``add`` loses no
committed passage and leaves no torn segment; a writer killed on either side of the tantivy commit leaves every
committed passage with its vector; a reader in another process searches while a writer appends; an index in the
old layout (vectors.npy + vectors.json) is moved into the store when opened."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from convsearch.backends.local import LocalIndex
from convsearch.embed import HashEmbedder
from convsearch.types import Document

pytestmark = pytest.mark.integration

DIM = 64
WRITER = f"""
import os, sys
from convsearch.backends.local import LocalIndex
from convsearch.embed import HashEmbedder
from convsearch.types import Document

path, start, n, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
idx = LocalIndex(path, embedder=HashEmbedder(dim={DIM}), ann_min=10**9)  # exact: the hash double has many ties
if mode != "run":  # die at one exact point of the second batch's commit
    from convsearch.backends import vectors
    real, calls = (vectors.VectorStore.begin, vectors.VectorStore.commit), []
    def begin(self, *a, **k):
        real[0](self, *a, **k)
        calls.append(1)
        if mode == "after-begin" and len(calls) == 2:
            os._exit(9)
    def commit(self):
        if mode == "before-commit" and len(calls) == 2:
            os._exit(9)
        real[1](self)
    vectors.VectorStore.begin, vectors.VectorStore.commit = begin, commit
batch = []
for i in range(start, start + n):
    batch.append(Document(f"d{{i}}", f"passage {{i}} about topic {{i % 53}} and word{{i}}", title=f"t{{i}}"))
    if len(batch) == 50:
        idx.add(batch, batch_size=50)
        print(batch[-1].id, flush=True)
        batch = []
if batch:
    idx.add(batch, batch_size=50)
print("done", flush=True)
"""


def writer_script(tmp_path: Path) -> Path:
    p = tmp_path / "writer.py"
    p.write_text(WRITER, encoding="utf-8")
    return p


def run_writer(tmp_path: Path, path: Path, start: int, n: int, mode: str = "run") -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUTF8": "1"}
    return subprocess.Popen([sys.executable, str(writer_script(tmp_path)), str(path), str(start), str(n), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def tantivy_ids(idx: LocalIndex) -> set[str]:
    return {d.id for d in idx.iter_documents()}


def check_whole(path: Path) -> set[str]:
    """Every committed passage has exactly one live vector and finds itself by its own text; no torn tail is
    read. The committed ids."""
    idx = LocalIndex(path, embedder=HashEmbedder(dim=DIM), create=False, ann_min=10**9)
    docs = tantivy_ids(idx)
    live = idx._vectors.ids()
    assert len(live) == len(set(live))
    assert set(live) >= docs, sorted(docs - set(live))[:5]
    emb = HashEmbedder(dim=DIM)
    for i in sorted(docs)[::max(1, len(docs) // 25)]:
        n = int(i[1:])
        text = f"t{n}\npassage {n} about topic {n % 53} and word{n}"
        np.testing.assert_allclose(idx._vectors.vector(i), emb.embed_passages([text])[0], atol=1e-6)  # its own
        # and search finds it at the top (crc32 mod 64 ties several of these texts exactly: any order among them)
        hits = idx.search_dense(text, top_k=100)
        assert i in [h.id for h in hits if h.score >= hits[0].score - 1e-5]
    man = json.loads((path / "vectors" / "manifest.json").read_text())
    data = path / "vectors" / f"data-{man['gen']}.bin"
    assert data.stat().st_size >= man["rows"] * DIM * 4  # committed rows are all there
    idx.close()
    return docs


def test_kill_9_during_a_long_add_loses_no_committed_passage(tmp_path: Path) -> None:
    path = tmp_path / "index"
    committed: set[str] = set()
    for round_, delay in enumerate((1.5, 0.7, 2.2)):
        p = run_writer(tmp_path, path, round_ * 100_000, 100_000)
        assert p.stdout is not None
        first = p.stdout.readline()  # one batch committed in this round at least
        assert first.strip().startswith("d"), p.stderr.read() if p.stderr else ""
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        out, _ = p.communicate(timeout=30)
        printed = {ln.strip() for ln in out.splitlines()} | {first.strip()}
        now = check_whole(path)
        assert committed <= now  # nothing committed earlier went missing
        assert {i for i in printed if i.startswith("d")} <= now  # every batch it reported is there
        committed = now
    p = run_writer(tmp_path, path, 900_000, 120)  # a writer after the kills works and its passages are whole
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0 and out.strip().endswith("done"), err
    assert {f"d{i}" for i in range(900_000, 900_120)} <= check_whole(path)


@pytest.mark.parametrize("mode,second_batch_kept", [("after-begin", False), ("before-commit", True)])
def test_a_writer_killed_on_either_side_of_the_tantivy_commit(tmp_path: Path, mode: str,
                                                              second_batch_kept: bool) -> None:
    path = tmp_path / "index"
    LocalIndex(path, embedder=HashEmbedder(dim=DIM)).add([Document("d5", "an older version of d5", title="old")])
    p = run_writer(tmp_path, path, 0, 200, mode)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 9, err
    man = json.loads((path / "vectors" / "manifest.json").read_text())
    assert man["pending"] is not None  # the second batch's vectors were pending when the writer died
    docs = check_whole(path)
    second = {f"d{i}" for i in range(50, 100)}
    assert {f"d{i}" for i in range(50)} <= docs
    assert (second <= docs) is second_batch_kept and not (second & docs and not second_batch_kept)
    idx = LocalIndex(path, embedder=HashEmbedder(dim=DIM), create=False)
    assert json.loads((path / "vectors" / "manifest.json").read_text())["pending"] is None  # settled at open
    assert idx.get("d5").title == "t5"  # the first batch's upsert
    assert set(idx._vectors.ids()) == docs  # no vector without its passage, none of the undone batch


def test_a_reader_process_searches_while_a_writer_appends(tmp_path: Path) -> None:
    path = tmp_path / "index"
    LocalIndex(path, embedder=HashEmbedder(dim=DIM)).add(
        [Document(f"seed{i}", f"seed passage {i}", title=f"s{i}") for i in range(20)])
    reader = LocalIndex(path, embedder=HashEmbedder(dim=DIM), create=False)
    p = run_writer(tmp_path, path, 0, 3000)
    seen, searches = [], 0
    try:
        while p.poll() is None:
            hits = reader.search_dense("passage about topic 7", top_k=10)
            assert hits and len({h.id for h in hits}) == len(hits)
            reader._index.reload()
            seen.append(len(reader._vectors))
            searches += 1
    finally:
        out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert searches > 3 and seen == sorted(seen)  # the reader followed the appends and never went back
    reader._index.reload()
    assert len(reader._vectors) == 3020 and len(reader) == 3020
    hits = reader.search_dense("t2999\npassage 2999 about topic 31 and word2999", top_k=100)
    assert "d2999" in [h.id for h in hits if h.score >= hits[0].score - 1e-5]


def test_an_index_in_the_old_vector_layout_is_moved_into_the_store(tmp_path: Path) -> None:
    path = tmp_path / "index"
    emb = HashEmbedder(dim=DIM)
    docs = [Document(f"d{i}", f"passage {i} about topic {i % 7}", title=f"t{i}") for i in range(40)]
    LocalIndex(path, embedder=emb).add(docs)
    # what an index written before the store looks like: one matrix and its ids beside tantivy
    old = LocalIndex(path, embedder=emb, create=False)._vectors
    ids = old.ids()
    np.save(path / "vectors.npy", np.stack([old.vector(i) for i in ids]))
    (path / "vectors.json").write_text(json.dumps({"embedder": "hash", "model": "words", "dim": DIM, "ids": ids}))
    import shutil

    shutil.rmtree(path / "vectors")
    ro = LocalIndex(path, embedder=emb, create=False, read_only=True)  # read-only: migrated into its private view
    assert ro.search_dense("t3\npassage 3 about topic 3", top_k=1)[0].id == "d3"
    assert (path / "vectors.npy").exists() and not (path / "vectors").exists()
    ro.close()
    idx = LocalIndex(path, embedder=emb, create=False)
    assert not (path / "vectors.npy").exists() and (path / "vectors" / "manifest.json").exists()
    assert sorted(idx._vectors.ids()) == sorted(ids)
    assert idx.search_dense("t3\npassage 3 about topic 3", top_k=1)[0].id == "d3"
    idx.add([Document("d3", "replaced text entirely", title="new")])
    assert idx.search_dense("new\nreplaced text entirely", top_k=1)[0].id == "d3" and len(idx._vectors) == 40


@pytest.mark.parametrize("filters,recency", [({"source_type": "faq"}, None), ({"lang": "zh"}, None),
                                             (None, "month"), ({"date_from": "2024-01-01"}, "year")])
def test_dense_filters_and_recency_give_the_exact_filtered_order(tmp_path: Path, filters, recency) -> None:
    from datetime import date, timedelta

    from convsearch.backends.base import Filters, hit_date

    today = date(2024, 6, 30)
    emb = HashEmbedder(dim=256)
    docs = [Document(f"d{i}", f"passage {i} about topic {i % 11} and item{i}", title=f"t{i}",
                     lang="zh" if i % 3 else "en",
                     date=(today - timedelta(days=i * 3)).isoformat(),
                     metadata={"source_type": "faq" if i % 40 == 0 else "doc"}) for i in range(400)]
    idx = LocalIndex(tmp_path / "index", embedder=emb, today=today)
    idx.add(docs)
    q = "passage about topic 4"
    hits = idx.search_dense(q, top_k=5, filters=filters, recency=recency)
    f = Filters.of(filters)
    from convsearch.backends.base import Recency

    since = Recency.parse(recency).since(today) if recency else None
    ok = [d for d in docs if (f is None or f.matches(idx.get(d.id)))
          and (since is None or hit_date(idx.get(d.id)) >= since)]
    qv = emb.embed_query(q)
    want = sorted(ok, key=lambda d: -float(emb.embed_passages([f"{d.title}\n{d.text}"])[0] @ qv))[:5]
    assert [round(h.score, 5) for h in hits] == [round(float(emb.embed_passages([f"{d.title}\n{d.text}"])[0] @ qv), 5)
                                                 for d in want]
    assert {h.id for h in hits} <= {d.id for d in ok} and len(hits) == min(5, len(ok))
    assert idx.search_dense(q, top_k=5, filters={"kb_version": "none"}) == []


def test_the_vector_dtype_setting_reaches_a_new_index_and_an_existing_one_keeps_its_own(tmp_path):
    import json

    from convsearch.backends.factory import open_local
    from convsearch.config import Settings
    from convsearch.types import Document

    env = {"CONVSEARCH_DATA_DIR": str(tmp_path), "CONVSEARCH_EMBEDDER": "hash", "CONVSEARCH_DENSE": "on",
           "CONVSEARCH_VECTOR_DTYPE": "i8"}
    idx = open_local(Settings.from_env(env), create=True)
    idx.add([Document("a", "int8 vectors take a quarter of the space"), Document("b", "another passage")])
    assert idx.search_dense("int8 vectors", top_k=1)[0].id == "a"
    idx.close()
    manifest = json.loads((tmp_path / "index" / "vectors" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["dtype"] == "i8"
    again = open_local(Settings.from_env({**env, "CONVSEARCH_VECTOR_DTYPE": "f32"}))
    assert again.search_dense("int8 vectors", top_k=1)[0].id == "a"  # stored as i8 still, read as such
    again.close()


class _Counting(HashEmbedder):
    """The hash double, counting the texts it is asked to embed."""

    def __init__(self, dim: int = DIM) -> None:
        super().__init__(dim)
        self.texts: list[str] = []

    def embed_passages(self, texts):
        self.texts += list(texts)
        return super().embed_passages(texts)


@pytest.mark.parametrize("dtype", ["f32", "f16", "i8"])
def test_a_stored_vector_serves_the_same_text_again_instead_of_the_embedder(tmp_path: Path, dtype: str) -> None:
    emb = _Counting()
    idx = LocalIndex(tmp_path / "ix", embedder=emb, ann_min=10**9, vector_dtype=dtype)
    try:
        docs = [Document(f"d#{i}", f"passage {i} about widget number {i}", "Guide", metadata={"section": f"S{i}"})
                for i in range(4)]
        idx.add(docs)
        first = {d.id: idx._vectors.vector(d.id) for d in docs}
        emb.texts.clear()
        idx.add(docs)  # the same passages again (a converter fix that did not touch them): nothing embedded
        assert emb.texts == []
        # one passage inserted at the start: the ids shift by one; with the old ids offered, only the new text
        # is embedded, and each moved text keeps its vector
        shifted = [Document("d#0", "a new opening passage", "Guide", metadata={"section": "S-new"})] + \
                  [Document(f"d#{i + 1}", d.text, d.title, metadata=d.metadata) for i, d in enumerate(docs)]
        idx.add(shifted, reuse=[d.id for d in docs])
        assert emb.texts == ["Guide › S-new\na new opening passage"]
        for i in range(4):
            assert np.array_equal(idx._vectors.vector(f"d#{i + 1}"), first[f"d#{i}"])
        # the same words under another heading are another embedded text: embedded again
        emb.texts.clear()
        idx.add([Document("d#1", docs[0].text, "Guide", metadata={"section": "Renamed"})])
        assert emb.texts == ["Guide › Renamed\npassage 0 about widget number 0"]
        assert [h.id for h in idx.search_dense("widget number 3", top_k=1)] == ["d#4"]
    finally:
        idx.close()
