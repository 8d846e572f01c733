"""Milvus as a search backend: BM25 (Milvus's own BM25 Function) + dense vectors, fused by Milvus's RRFRanker.

``CONVSEARCH_BACKENDS=milvus`` with ``CONVSEARCH_MILVUS_URI`` = a file path ending in ``.db`` (Milvus Lite,
in-process) or ``http://host:19530`` (a Milvus server or cluster; ``CONVSEARCH_MILVUS_TOKEN`` is its token, a
``Secret``). ``pip install 'convsearch[milvus]'`` brings pymilvus and milvus-lite ≥ 3 (2.4 has no BM25).

Two collections, as the knowledge-base design has: ``{prefix}_faq`` (documents whose ``source_type`` is
``faq``) and ``{prefix}_documents`` (everything else). Fields: id (primary), title, text, url, date, lang,
source, source_type, kb_version, metadata (JSON), ``day`` (the date as ``YYYY-MM-DD``, for range filters),
``body`` (the BM25 text), ``sparse`` (filled by the BM25 Function from ``body``) and ``dense`` (the configured
Embedder's passage vector; absent when no embedder is configured, then the backend is BM25 only).

Analyzer choice (tried on Milvus Lite 3.2.2; Lite's tokenizers are only ``standard`` and ``jieba``, it rejects
``{"type": "chinese"}``, ``{"type": "english"}``, the ``language_identifier`` tokenizer, silently ignores
token filters such as ``lowercase`` / ``stemmer``, and a ``multi_analyzer_params`` by-field setup found no
Chinese at all): ``body`` holds OUR tokenisation, the same as the local index uses (``text.index_terms``:
jieba words for Chinese, lower-cased Snowball-stemmed words for English), space-joined, and Milvus analyses it
with ``{"tokenizer": "jieba"}``, which a server accepts too and which leaves pre-cut words as they are. So
Chinese and English are tokenised identically on Lite, on a server and in the local index (``launches`` finds
``launched`` on both), and queries go through the same ``query_terms``. A server alone could use
``multi_analyzer_params`` by ``lang`` with its built-in ``english``/``chinese`` analyzers; we do not, so that
one schema serves both.

Search: in one collection (a ``source_type`` filter picks it) Milvus's ``hybrid_search`` (a BM25 request and a
dense request, ``RRFRanker(60)``); across both, each side is searched per collection, merged across them by its
own score and the two lists fused by RRF k = 60 (per-collection RRF would rank the FAQ's best guess level with
the documents' real match). Several query variants go in one call (nq > 1) and are merged by document id
keeping the best score (``merge_best``, the ``search_many`` semantics). Scores are normalised here: Milvus Lite
returns BM25 as negative distances, a server as positive scores, so a BM25 hit's score is ``abs(distance)``;
hybrid scores are RRF sums (higher is better) on both.

Filters (lang, source, source_type, kb_version, date_from/date_to) and recency become one Milvus boolean
expression built by ``filter_expr`` from validated values quoted by ``quote`` (backslash and double quote
escaped, control characters refused): never string-concatenated from raw input. Lite does not support
expression templates (``filter_params``) and ignores ``hybrid_search``'s top-level ``filter``, so the
expression goes into each ``AnnSearchRequest``.

Milvus Lite's limits (say them to anyone sizing a deployment):

- BM25 statistics (document count, average length, document frequencies) are per segment, so scores drift as
  segments fill and merge; ranks between Lite and the local index differ on the margin (see BENCHMARKS).
- One process per database file: Lite holds an advisory lock on the ``.db`` directory while it is open; a
  second process gets a one-line BackendError. Within one process every client of the same file shares one
  in-process gRPC server (threads on a loopback port), released by ``close()``.
- Pure Python, single node: fine for development, tests and small corpora; use a server beyond that.
- Unflushed writes are searched by decoding every row per query (0.25 s per BM25 query at 5,000 documents,
  against 5.5 ms once flushed), so this backend flushes Lite's written collections before the next search.

>>> import tempfile
>>> from convsearch.embed import HashEmbedder
>>> from convsearch.types import Document
>>> b = MilvusBackend(f"{tempfile.mkdtemp()}/kb.db", embedder=HashEmbedder())   # or "http://host:19530"
>>> b.add([Document("1", "AnySearch 支持混合检索", metadata={"source_type": "faq"})])
1
>>> b.search("混合检索")[0].id
'1'
>>> b.close()
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from ..config import Section, named
from ..embed import Embedder, check_recorded, recorded
from ..errors import BackendError, ConfigError, EmbedError, InputError
from ..infra.turn import note
from ..secret import Secret
from ..text import detect_lang, index_terms
from ..types import Document, Hit
from .base import FILTER_FIELDS, Capabilities, Filters, Recency, batches, indexed_text


@dataclass(frozen=True, slots=True)
class MilvusSettings(Section):
    """The milvus backend's section: ``uri`` (empty: DATA_DIR/milvus.db), a server's ``token`` (a Secret) and the
    collections' name ``prefix``."""

    name = "milvus"
    prefix = "CONVSEARCH_MILVUS_"
    uri: str = ""
    token: Secret | None = field(default=None, repr=False)
    collection_prefix: str = named("CONVSEARCH_MILVUS_PREFIX", "convsearch")

SCHEMA_VERSION = 1
RRF_K = 60  # Cormack, Clarke & Büttcher (SIGIR 2009), the constant Milvus's RRFRanker and our fuse_rrf use
COLLECTIONS = ("faq", "documents")
ANALYZER = {"tokenizer": "jieba"}
_META_KEY = "convsearch.meta"
# VARCHAR limits are in bytes; longer values are cut at a character boundary
_MAX = {"id": 512, "title": 2048, "text": 65535, "url": 2048, "date": 32, "lang": 16, "source": 512,
        "source_type": 32, "kb_version": 128, "day": 10, "body": 65535}
_OUTPUT = ["id", "title", "text", "url", "date", "lang", "source", "source_type", "kb_version", "metadata"]
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ISO = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?")
_ISO_FULL = re.compile(r"\d{4}(-\d{2}(-\d{2}([T ][0-9:.+Z-]*)?)?)?")


# --- pure helpers --------------------------------------------------------------------------------------------
def quote(value: str) -> str:
    """A Milvus string literal for ``value``: double-quoted, ``\\`` and ``"`` escaped; control characters are an
    InputError (they have no business in a filter value and Milvus's escapes for them differ by version).

    >>> quote('zh" or lang != "')
    '"zh\\\\" or lang != \\\\""'
    """
    s = str(value)
    if _CONTROL.search(s):
        raise InputError(f"filter value {s[:40]!r} contains a control character")
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def iso_day(value: str | None) -> str:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD…`` as ``YYYY-MM-DD`` (first day), "" when undated or unreadable."""
    if not value:
        return ""
    m = _ISO.match(str(value).strip())
    if not m:
        return ""
    parts = m.group(0).split("-")
    try:
        return date(int(parts[0]), int(parts[1]) if len(parts) > 1 else 1,
                    int(parts[2]) if len(parts) > 2 else 1).isoformat()
    except ValueError:
        return ""


def filter_expr(filters: Filters | Mapping[str, Any] | None, *, since: date | None = None) -> str:
    """One Milvus boolean expression for ``filters`` (and a recency window from ``since``), "" for none.

    Field names come from our own list, values are quoted by ``quote``, dates are re-formatted from parsed
    ``date`` objects: nothing from the caller reaches the expression unescaped.

    >>> filter_expr({"lang": "zh", "date_from": "2025-06"})
    'lang == "zh" and day != "" and day >= "2025-06-01"'
    """
    f = Filters.of(filters)
    parts: list[str] = []
    for k in ("lang", "source", "source_type", "kb_version"):
        v = getattr(f, k) if f else None
        if v is not None:
            parts.append(f"{k} == {quote(v)}")
    lows = [d for d in (iso_day(f.date_from) if f and f.date_from else None,
                        since.isoformat() if since else None) if d is not None]
    for raw in ((f.date_from,) if f and f.date_from else ()) + ((f.date_to,) if f and f.date_to else ()):
        if not (_ISO_FULL.fullmatch(raw.strip()) and iso_day(raw)):
            raise InputError(f"filter date {raw!r} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)")
    high = iso_day(f.date_to) if f and f.date_to else None
    if lows or high:
        parts.append('day != ""')
    if lows:
        parts.append(f"day >= {quote(max(lows))}")
    if high:
        parts.append(f"day <= {quote(high)}")
    return " and ".join(parts)


def merge_best(lists: Iterable[Sequence[Hit]], *, top_k: int) -> list[Hit]:
    """Merge ranked lists by document id keeping each id's best score (the ``search_many`` semantics); ties
    keep the earlier list's hit; re-ranked 1..n."""
    best: dict[str, Hit] = {}
    order: dict[str, int] = {}
    for hits in lists:
        for h in hits:
            cur = best.get(h.id)
            if cur is None or h.score > cur.score:
                best[h.id] = h
                order.setdefault(h.id, len(order))
    ranked = sorted(best.values(), key=lambda h: (-h.score, order[h.id]))[:top_k]
    return [Hit(h.id, h.title, h.text, h.score, h.url, h.date, h.source, r, h.metadata)
            for r, h in enumerate(ranked, start=1)]


def collection_for(doc: Document) -> str:
    """``faq`` for documents whose ``metadata["source_type"]`` is faq, ``documents`` otherwise."""
    return "faq" if str(doc.metadata.get("source_type", "")).lower() == "faq" else "documents"


def _cut(s: Any, field: str) -> str:
    b = str(s or "").encode("utf-8")
    limit = _MAX[field]
    return b.decode("utf-8") if len(b) <= limit else b[:limit].decode("utf-8", errors="ignore")


def bm25_text(query: str) -> str:
    """The query as the BM25 side sees it: our query terms, space-joined (the index side uses the same)."""
    from .local import query_terms

    return " ".join(query_terms(query))


def _pymilvus() -> Any:
    try:
        import pymilvus
    except ImportError as exc:
        raise ConfigError("the milvus backend needs pymilvus and milvus-lite: "
                          "pip install 'convsearch[milvus]'") from exc
    # pymilvus logs every failed RPC with a traceback at ERROR; we raise one clear line instead
    logging.getLogger("pymilvus").setLevel(logging.CRITICAL)
    logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)
    try:  # Lite's jieba analyzer; jieba sets its own logger to DEBUG on import, so set it after importing
        import jieba

        jieba.setLogLevel(logging.WARNING)
    except ImportError:  # a server analyses on its side; Lite then fails with its own clear message
        pass
    return pymilvus


def is_lite(uri: str) -> bool:
    return not re.match(r"^(https?|tcp|grpc|unix)://", uri)


class MilvusBackend:
    """Milvus (Lite or a server) behind the SearchBackend contract; writable (upsert/delete by id).

    ``embedder`` None → BM25 only (no dense field); the collections remember the embedder's name and
    dimension, and opening them with another one is a BackendError naming both.
    """

    name = "milvus"

    def __init__(self, uri: str | Path, *, embedder: Embedder | None = None, token: Any = None,
                 prefix: str = "convsearch", create: bool = True, today: date | None = None,
                 timeout_s: float | None = 30.0) -> None:
        pm = _pymilvus()
        self._pm = pm
        self.uri = str(uri)
        self.lite = is_lite(self.uri)
        if self.lite and not self.uri.endswith(".db"):
            raise ConfigError(f"CONVSEARCH_MILVUS_URI={self.uri!r}: a Milvus Lite path must end in .db "
                              "(or give http://host:19530 for a server)")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,200}", prefix):
            raise ConfigError(f"CONVSEARCH_MILVUS_PREFIX={prefix!r}: letters, digits and _ only, not starting "
                              "with a digit")
        self.embedder = embedder
        self.prefix = prefix
        self.today = today
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._closed = False
        # collections written since their last flush (Lite only; see _flush_written)
        self._unflushed: set[str] = set()
        if self.lite:
            # Lite's in-process gRPC server logs each call it does not implement with a traceback; the client
            # falls back on its own, so those lines are noise
            logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
            self.uri = str(Path(self.uri).expanduser().absolute())
            Path(self.uri).parent.mkdir(parents=True, exist_ok=True)
        kw: dict[str, Any] = {}
        if token is not None:
            kw["token"] = token.reveal() if hasattr(token, "reveal") else str(token)
        try:
            self._client = pm.MilvusClient(self.uri, timeout=timeout_s, **kw)
        except Exception as exc:  # connection refused, a locked Lite file, a bad token
            self._release_lite()
            hint = " (Milvus Lite allows one process per database file: is another one using it?)" if self.lite else ""
            if _unauthenticated(exc):
                hint = " (the server refused the token: check CONVSEARCH_MILVUS_TOKEN)"
            raise BackendError(f"cannot open Milvus at {self._where()}{hint}: {_one_line(exc)}") from exc
        try:
            for c in COLLECTIONS:
                self._ensure(c, create=create)
        except BaseException:
            self.close()
            raise

    # --- schema -------------------------------------------------------------------------------------------
    def collection(self, kind: str) -> str:
        return f"{self.prefix}_{kind}"

    def _describe(self) -> str:
        meta: dict[str, Any] = {"convsearch_schema": SCHEMA_VERSION, "embedder": None, "dim": None}
        if self.embedder is not None:  # the vectors' row, model and dimension (convsearch.embed.recorded)
            meta.update(recorded(self.embedder))
        return json.dumps(meta)

    def _ensure(self, kind: str, *, create: bool) -> None:
        name = self.collection(kind)
        c = self._client
        if c.has_collection(name):
            desc = (c.describe_collection(name).get("properties") or {}).get(_META_KEY, "")
            try:
                meta = json.loads(desc) if desc else {}
            except ValueError:
                meta = {}
            want = json.loads(self._describe())
            if meta.get("convsearch_schema") != SCHEMA_VERSION:
                raise BackendError(f"Milvus collection {name} was not made by convsearch (schema "
                                   f"{meta.get('convsearch_schema')!r}); choose another CONVSEARCH_MILVUS_PREFIX")
            if self.embedder is not None and meta.get("embedder") is not None:
                check_recorded(meta, self.embedder, what=f"the Milvus collection {name}",
                               remedy="re-index into another CONVSEARCH_MILVUS_PREFIX (or drop the collection "
                                      "and run `convsearch index --backend milvus` again)")
            elif (meta.get("embedder"), meta.get("dim")) != (want["embedder"], want["dim"]):
                raise BackendError(f"Milvus collection {name} holds vectors of {meta.get('embedder')!r} "
                                   f"(dim {meta.get('dim')}), not {want['embedder']!r} (dim {want['dim']}): "
                                   "use the same embedder "
                                   "(CONVSEARCH_DENSE) or another CONVSEARCH_MILVUS_PREFIX")
            c.load_collection(name)
            return
        if not create:
            from ..errors import IndexMissingError

            raise IndexMissingError(f"no Milvus collection {name} at {self._where()} "
                                    "(run `convsearch index PATH --backend milvus` first)")
        pm = self._pm
        DT = pm.DataType
        s = c.create_schema(auto_id=False)
        s.add_field("id", DT.VARCHAR, max_length=_MAX["id"], is_primary=True)
        for f in ("title", "text", "url", "date", "lang", "source", "source_type", "kb_version", "day"):
            s.add_field(f, DT.VARCHAR, max_length=_MAX[f])
        s.add_field("metadata", DT.JSON)
        s.add_field("body", DT.VARCHAR, max_length=_MAX["body"], enable_analyzer=True, analyzer_params=ANALYZER)
        s.add_field("sparse", DT.SPARSE_FLOAT_VECTOR)
        if self.embedder is not None:
            s.add_field("dense", DT.FLOAT_VECTOR, dim=int(self.embedder.dim))
        s.add_function(pm.Function(name="bm25", function_type=pm.FunctionType.BM25, input_field_names=["body"],
                                   output_field_names=["sparse"]))
        ip = c.prepare_index_params()
        ip.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        if self.embedder is not None:
            # exact search, like the local index; a server deployment may prefer HNSW (same metric)
            ip.add_index("dense", index_type="FLAT", metric_type="COSINE")
        c.create_collection(name, schema=s, index_params=ip)
        # Lite does not keep a collection's description; a property survives a reopen on Lite and a server
        c.alter_collection_properties(name, properties={_META_KEY: self._describe()})

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(writable=True, dense=self.embedder is not None, remote=not self.lite,
                            filters=frozenset(FILTER_FIELDS),
                            recency=frozenset(r for r in Recency if r is not Recency.NO_LIMIT))

    # --- writes -------------------------------------------------------------------------------------------
    def _row(self, d: Document, vec: Any = None) -> dict[str, Any]:
        md = dict(d.metadata)
        lang = d.lang or md.get("lang") or detect_lang(d.text)
        row = {"id": _cut(d.id, "id"), "title": _cut(d.title, "title"), "text": _cut(d.text, "text"),
               "url": _cut(d.url, "url"), "date": _cut(d.date or "", "date"), "lang": _cut(lang, "lang"),
               "source": _cut(md.get("source", ""), "source"),
               "source_type": _cut(md.get("source_type", "") or "", "source_type"),
               "kb_version": _cut(md.get("kb_version", "") or "", "kb_version"), "day": iso_day(d.date),
               "metadata": json.loads(json.dumps(md, ensure_ascii=False, default=str)),
               "body": _cut(" ".join(index_terms(indexed_text(d, " "))), "body")}
        if vec is not None:
            row["dense"] = [float(x) for x in vec]
        return row

    def add(self, docs: Iterable[Document], *, batch_size: int = 256) -> int:
        """Upsert by id, in batches; a document whose source_type moved to the other collection leaves the old one."""
        n = 0
        for batch in batches(docs, batch_size):
            for d in batch:
                if not d.id or len(d.id.encode("utf-8")) > _MAX["id"]:
                    raise InputError(f"document id {d.id[:40]!r} is empty or longer than {_MAX['id']} bytes")
            last = {d.id: d for d in batch}  # the same id twice in one batch: the last one wins
            batch = list(last.values())
            vecs = (self.embedder.embed_passages([indexed_text(d) for d in batch])
                    if self.embedder is not None else [None] * len(batch))
            by: dict[str, list[dict[str, Any]]] = {k: [] for k in COLLECTIONS}
            for d, v in zip(batch, vecs):
                by[collection_for(d)].append(self._row(d, v))
            with self._lock:
                try:
                    for kind, rows in by.items():
                        other = self.collection("documents" if kind == "faq" else "faq")
                        if rows:
                            self._client.upsert(self.collection(kind), rows)
                            self._client.delete(other, ids=[r["id"] for r in rows])
                            self._unflushed.update((self.collection(kind), other))
                except Exception as exc:
                    raise BackendError(f"Milvus upsert failed at {self._where()}: {_one_line(exc)}") from exc
            n += len(batch)
        return n

    upsert = add

    def delete(self, ids: Iterable[str]) -> int:
        """Delete by id from both collections; returns how many existed."""
        ids = [str(i) for i in dict.fromkeys(ids)]
        n = 0
        with self._lock:
            try:
                for kind in COLLECTIONS:
                    name = self.collection(kind)
                    for i in range(0, len(ids), 500):
                        chunk = ids[i:i + 500]
                        expr = "id in [" + ", ".join(quote(x) for x in chunk) + "]"
                        present = self._client.query(name, filter=expr, output_fields=["id"])
                        if present:
                            self._client.delete(name, ids=[r["id"] for r in present])
                            self._unflushed.add(name)
                            n += len(present)
            except InputError:
                raise
            except Exception as exc:
                raise BackendError(f"Milvus delete failed at {self._where()}: {_one_line(exc)}") from exc
        return n

    def __len__(self) -> int:
        total = 0
        for kind in COLLECTIONS:
            res = self._client.query(self.collection(kind), filter="", output_fields=["count(*)"])
            total += int(res[0]["count(*)"]) if res else 0
        return total

    def get(self, doc_id: str) -> Hit | None:
        for kind in COLLECTIONS:
            rows = self._client.query(self.collection(kind), filter=f"id == {quote(doc_id)}", output_fields=_OUTPUT)
            if rows:
                return self._hit(rows[0], 0.0, 1, "milvus")
        return None

    def iter_documents(self, *, batch_size: int = 500) -> Iterator[Document]:
        """Every stored document (for copying between backends)."""
        for kind in COLLECTIONS:
            it = self._client.query_iterator(self.collection(kind), batch_size=batch_size, filter="",
                                             output_fields=_OUTPUT)
            try:
                while rows := it.next():
                    for r in rows:
                        h = self._hit(r, 0.0, 0, "milvus")
                        yield Document(h.id, h.text, h.title, h.url, h.date or None, h.metadata.get("lang"),
                                       {k: v for k, v in h.metadata.items() if k != "lang"})
            finally:
                it.close()

    # --- reads --------------------------------------------------------------------------------------------
    def _hit(self, e: Mapping[str, Any], score: float, rank: int, source: str) -> Hit:
        md = dict(e.get("metadata") or {})
        for k in ("source", "source_type", "kb_version"):
            if e.get(k):
                md[k] = e[k]
        md["lang"] = e.get("lang") or None
        return Hit(id=str(e["id"]), title=e.get("title", ""), text=e.get("text", ""), score=float(score),
                   url=e.get("url", ""), date=e.get("date") or None, source=source, rank=rank, metadata=md)

    def _kinds(self, f: Filters | None) -> tuple[str, ...]:
        if f is not None and f.source_type is not None:
            return ("faq",) if f.source_type.lower() == "faq" else ("documents",)
        return COLLECTIONS

    def search_many(self, queries: Sequence[str], *, top_k: int = 10,
                    filters: Filters | Mapping[str, Any] | None = None, recency: Recency | str | None = None,
                    dense_query: str | None = None) -> list[Hit]:
        """Every query variant in one hybrid call per collection (nq = len(queries)), merged by id keeping the
        best score. ``dense_query`` (a hypothetical answer) replaces the first query on the dense side."""
        if self._closed:
            raise BackendError("the Milvus backend is closed")
        queries = [q for q in queries if q and q.strip()]
        if not queries or top_k <= 0:
            return []
        f = Filters.of(filters)
        rec = Recency.parse(recency)
        since = rec.since(self.today or date.today()) if rec is not None and rec is not Recency.NO_LIMIT else None
        expr = filter_expr(f, since=since)
        texts = [bm25_text(q) for q in queries]
        names = [self.collection(k) for k in self._kinds(f)]
        try:
            self._flush_written()
            if len(names) == 1:
                lists = self._search_collection(names[0], queries, texts, top_k, expr, dense_query)
            else:
                lists = self._search_across(names, queries, texts, top_k, expr, dense_query)
        except (InputError, BackendError):
            raise
        except Exception as exc:
            raise BackendError(f"Milvus search failed at {self._where()}: {_one_line(exc)}") from exc
        return merge_best(lists, top_k=top_k)

    def _search_collection(self, name: str, queries: Sequence[str], texts: Sequence[str], top_k: int, expr: str,
                           dense_query: str | None) -> list[list[Hit]]:
        """One collection: Milvus's hybrid_search (BM25 + dense, RRFRanker(60)), all variants in one call."""
        pm, c = self._pm, self._client
        idx = [i for i, t in enumerate(texts) if t]
        if not idx:
            return []
        vecs = self._vectors(queries, idx, dense_query) if self.embedder is not None else None
        if vecs is None:
            return self._bm25(name, [texts[i] for i in idx], top_k, expr)
        reqs = [pm.AnnSearchRequest(data=[texts[i] for i in idx], anns_field="sparse",
                                    param={"metric_type": "BM25"}, limit=top_k, expr=expr or None),
                pm.AnnSearchRequest(data=vecs, anns_field="dense",
                                    param={"metric_type": "COSINE"}, limit=top_k, expr=expr or None)]
        res = c.hybrid_search(name, reqs, ranker=pm.RRFRanker(RRF_K), limit=top_k, output_fields=_OUTPUT)
        return [[self._hit(h["entity"], float(h["distance"]), r, "hybrid") for r, h in enumerate(hits, 1)]
                for hits in res]

    def _vectors(self, queries: Sequence[str], idx: Sequence[int],
                 dense_query: str | None) -> list[list[float]] | None:
        """The queries' vectors; None when the embedder failed (a server down, a timeout): the search then
        answers from BM25 and the turn's trace says ``embed: why``."""
        texts = [dense_query if (dense_query and i == 0) else queries[i] for i in idx]
        embedder = self.embedder
        assert embedder is not None, "dense search without an embedder"  # callers check first
        try:
            return [[float(x) for x in embedder.embed_query(t)] for t in texts]
        except EmbedError as exc:
            note(f"embed: {exc.reason} (answered from BM25)")
            return None

    def _bm25(self, name: str, texts: Sequence[str], top_k: int, expr: str) -> list[list[Hit]]:
        res = self._client.search(name, data=list(texts), anns_field="sparse", limit=top_k, filter=expr,
                                  search_params={"metric_type": "BM25"}, output_fields=_OUTPUT)
        # Lite gives BM25 as negative distances, a server as positive scores: both become the positive score
        return [[self._hit(h["entity"], abs(float(h["distance"])), r, "bm25") for r, h in enumerate(hits, 1)]
                for hits in res]

    def _dense(self, name: str, vecs: Sequence[list[float]], top_k: int, expr: str) -> list[list[Hit]]:
        res = self._client.search(name, data=list(vecs), anns_field="dense", limit=top_k, filter=expr,
                                  search_params={"metric_type": "COSINE"}, output_fields=_OUTPUT)
        # a cosine ≤ 0 shares nothing with the query (bag-of-words vectors give many exact zeros, tied in an
        # arbitrary order): not evidence, so not a hit; real sentence embeddings sit far above 0
        return [[self._hit(h["entity"], float(h["distance"]), r, "dense")
                 for r, h in enumerate([h for h in hits if float(h["distance"]) > 0.0], 1)] for hits in res]

    def _search_across(self, names: Sequence[str], queries: Sequence[str], texts: Sequence[str], top_k: int,
                       expr: str, dense_query: str | None) -> list[list[Hit]]:
        """Both collections: per-collection RRF would give each collection's top hit the same 1/61, however
        weak (a FAQ's best cosine on an unrelated query ties the documents' real match). So each side is
        searched per collection, merged across collections by its own score (cosine is comparable; BM25 up to
        the per-collection statistics), and the two merged lists are fused by RRF k=60 — the formula of
        Milvus's RRFRanker, applied to global ranks."""
        from ..fuse import fuse_rrf

        idx = [i for i, t in enumerate(texts) if t]
        if not idx:
            return []
        bm25 = [self._bm25(n, [texts[i] for i in idx], top_k, expr) for n in names]
        bm25_merged = [merge_best([per[v] for per in bm25], top_k=top_k) for v in range(len(idx))]
        vecs = self._vectors(queries, idx, dense_query) if self.embedder is not None else None
        if vecs is None:
            return bm25_merged
        dense = [self._dense(n, vecs, top_k, expr) for n in names]
        out = []
        for v in range(len(idx)):
            d = merge_best([per[v] for per in dense], top_k=top_k)
            fused = fuse_rrf([bm25_merged[v], d], k=RRF_K, limit=top_k)
            out.append([Hit(h.id, h.title, h.text, h.score, h.url, h.date, "hybrid", h.rank, h.metadata)
                        for h in fused])
        return out

    def _flush_written(self) -> None:
        """Milvus Lite keeps fresh writes in its memtable (up to 128 MB) and answers every query over it by
        decoding each row and building a throwaway inverted index: ~0.3 s per query at 5,000 documents. A
        flush moves them into a sealed segment whose index is built once (~15 ms per query then). So Lite
        flushes what was written before the next search. A server searches growing segments with interim
        indexes and rate-limits flush calls, so it is left to seal them itself."""
        if not self.lite or not self._unflushed:
            return
        with self._lock:
            for name in sorted(self._unflushed):
                self._client.flush(name)
            self._unflushed.clear()

    def search(self, query: str, *, top_k: int = 10, filters: Filters | Mapping[str, Any] | None = None,
               recency: Recency | str | None = None, dense_query: str | None = None) -> list[Hit]:
        """Hybrid (BM25 + dense, RRF k=60) or BM25 only without an embedder; filters and recency natively."""
        return self.search_many([query], top_k=top_k, filters=filters, recency=recency, dense_query=dense_query)

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | Mapping[str, Any] | None = None,
                      recency: Recency | str | None = None, dense_query: str | None = None) -> list[Hit]:
        # pymilvus's AsyncMilvusClient does not speak to Lite's .db URIs; a thread keeps one code path
        return await asyncio.to_thread(self.search, query, top_k=top_k, filters=filters, recency=recency,
                                       dense_query=dense_query)

    async def asearch_many(self, queries: Sequence[str], **kw: Any) -> list[Hit]:
        return await asyncio.to_thread(self.search_many, queries, **kw)

    def close(self) -> None:
        """Close the client and, for Lite, stop this file's in-process server and release its lock."""
        if self._closed:
            return
        self._closed = True
        try:
            self._client.close()
        except Exception:  # closing is best effort; the server release below still runs
            pass
        self._release_lite()

    def _release_lite(self) -> None:
        if not self.lite:
            return
        try:
            from milvus_lite.server_manager import server_manager_instance
        except ImportError:
            return
        server_manager_instance.release_server(self.uri)

    def __enter__(self) -> MilvusBackend:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _where(self) -> str:
        return self.uri if self.lite else re.sub(r"//[^@/]*@", "//", self.uri)  # never a user:password


def _unauthenticated(exc: BaseException) -> bool:
    """Whether a gRPC UNAUTHENTICATED status is in ``exc``'s chain (pymilvus wraps it in a generic "fail
    connecting" MilvusException)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        code = getattr(cur, "code", None)
        if callable(code):
            try:
                if getattr(code(), "name", "") == "UNAUTHENTICATED":
                    return True
            except Exception:  # a code() that needs arguments or fails: not a gRPC error
                pass
        cur = cur.__cause__ or cur.__context__
    return False


def _one_line(exc: BaseException) -> str:
    msg = str(getattr(exc, "message", "") or exc)
    return " ".join(msg.split())[:300]



def from_settings(settings: Any, *, create: bool = False) -> MilvusBackend:
    """The registry's factory: ``CONVSEARCH_MILVUS_URI`` (default ``<data dir>/milvus.db``, Lite),
    ``CONVSEARCH_MILVUS_TOKEN``, ``CONVSEARCH_MILVUS_PREFIX``; dense vectors as ``CONVSEARCH_DENSE`` says.
    ``create=True`` (``convsearch index``) makes the collections when they are missing."""
    from .factory import open_dense_embedder

    _pymilvus()
    conf = MilvusSettings.of(settings)
    uri = conf.uri or str(Path(settings.data_dir) / "milvus.db")
    embedder = open_dense_embedder(settings)  # the collections' vector dim is the embedder's
    return MilvusBackend(uri, embedder=embedder, token=conf.token, prefix=conf.collection_prefix,
                         create=create)


__all__ = ["MilvusBackend", "filter_expr", "from_settings", "iso_day", "merge_best", "quote"]
