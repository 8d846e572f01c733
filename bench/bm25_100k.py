"""Benchmark 3: embedded BM25 (tantivy via ``LocalIndex``) vs bm25s on the same 100k-document corpus.

Both engines get the SAME tokens: documents are ``convsearch.text.words(title + " " + text)`` (what
``LocalIndex`` indexes), queries are ``query_terms(q)`` (what ``search_bm25`` sends to tantivy). bm25s runs
``BM25(k1=1.2, b=0.75)`` (tantivy's parameters, so the top 10s are comparable; the parameters do not change
its speed) with its default numpy backend, one query per ``retrieve`` call, like ours.

Each build and each query run is its own process (clean peak RSS). Indexes are cached under
``bench/.cache/`` keyed by the corpus recipe, the data files and the source of the tokenizer and index.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

from common import (CACHE, current_rss_mb, data_stamp, du_mb, fingerprint, pct, peak_rss_mb, run_worker, src_files,
                    table, verdict)

TOP_K = 10
BUILD_VERSION = 3  # bump when what a build worker records changes (part of the cache key)
ROUNDS = 3


def _key(n: int) -> str:
    from importlib import metadata

    import corpus

    return fingerprint(src_files("text.py", "lexicon.py", "backends/local.py", "data") + [Path(corpus.__file__)],
                       corpus.CORPUS_VERSION, BUILD_VERSION, n, data_stamp(corpus.SOURCES),
                       metadata.version("tantivy"), metadata.version("bm25s"))


def cache_dir(n: int) -> Path:
    return CACHE / f"bm25-{n}-{_key(n)}"


# --- workers (each runs in a fresh interpreter) ----------------------------------------------------
def build_ours(n: int, path: str) -> dict:
    from corpus import build_corpus, corpus_stats

    from convsearch.backends.local import LocalIndex

    docs = build_corpus(n)
    rss0 = current_rss_mb()
    p = Path(path)
    shutil.rmtree(p, ignore_errors=True)
    t0 = time.perf_counter()
    idx = LocalIndex(p, embedder=None)
    idx.add(docs)  # default batch_size: one commit per 256 documents
    secs = time.perf_counter() - t0
    peak = peak_rss_mb()
    segments = idx._index.searcher().num_segments
    # the same documents in a single commit: how much of the time is per-batch commit overhead
    one = p.parent / (p.name + "-onecommit")
    shutil.rmtree(one, ignore_errors=True)
    t1 = time.perf_counter()
    idx1 = LocalIndex(one, embedder=None)
    idx1.add(docs, batch_size=len(docs))
    secs1 = time.perf_counter() - t1
    return {"index_s": secs, "docs": len(idx), "size_mb": du_mb(p), "peak_rss_mb": peak, "segments": segments,
            "onecommit_s": secs1, "onecommit_size_mb": du_mb(one), "onecommit_segments": idx1._index.searcher().num_segments,
            "onecommit_path": str(one), "rss_before_mb": rss0, "corpus": corpus_stats(docs)}


def build_bm25s(n: int, path: str) -> dict:
    import bm25s
    from corpus import build_corpus

    from convsearch.text import words

    docs = build_corpus(n)
    rss0 = current_rss_mb()
    t0 = time.perf_counter()
    tokens = [words(f"{d.title} {d.text}") for d in docs]
    tok_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    r = bm25s.BM25(k1=1.2, b=0.75)
    r.index(tokens, show_progress=False)
    idx_s = time.perf_counter() - t1
    p = Path(path)
    shutil.rmtree(p, ignore_errors=True)
    r.save(str(p), show_progress=False)
    return {"tokenize_s": tok_s, "index_s": idx_s, "size_mb": du_mb(p), "peak_rss_mb": peak_rss_mb(),
            "rss_before_mb": rss0, "tokens": sum(map(len, tokens)), "vocab": len(r.vocab_dict)}


def _timed(fn, items, cpu_ns: list[int] | None = None) -> tuple[list[int], list]:
    perf, cpu = time.perf_counter_ns, time.thread_time_ns
    ns, out = [], []
    for x in items:
        c = cpu()
        t = perf()
        r = fn(x)
        ns.append(perf() - t)
        if cpu_ns is not None:
            cpu_ns.append(cpu() - c)
        out.append(r)
    return ns, out


def query_ours(n: int, path: str, nq: int) -> dict:
    import tantivy
    from corpus import build_queries

    from convsearch.backends.local import _LEN, LocalIndex, decode_payload, query_terms

    queries, warm = build_queries(nq), build_queries(min(nq, 100), offset=7)
    rss0 = current_rss_mb()
    t0 = time.perf_counter()
    idx = LocalIndex(Path(path), embedder=None, create=False)
    open_ms = (time.perf_counter() - t0) * 1000
    for q in warm:
        idx.search(q, top_k=TOP_K)
    full: list[int] = []
    cpu_ns: list[int] = []
    tops = None
    first: list[int] = []
    for _ in range(ROUNDS):
        ns, res = _timed(lambda q: idx.search(q, top_k=TOP_K), queries, cpu_ns)
        full += ns
        first = first or ns  # round 1: most payloads not decoded yet (the warm-up queries are other ones)
        tops = tops or [[h.id for h in hits] for hits in res]
    # the parts, each timed alone (the same steps as search → search_bm25; LocalIndex internals, bench only)
    tok_ns, terms = _timed(query_terms, queries * ROUNDS)
    schema, index = idx._schema, idx._index

    def engine(ts: list[str]):
        q = tantivy.Query.boolean_query([(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t)) for t in ts])
        s = index.searcher()
        return s, s.search(q, TOP_K, count=False).hits

    eng_ns, found = _timed(engine, terms)
    fetch_ns, _ = _timed(lambda sf: idx._hits(sf[0], sf[1], "bm25"), found)
    pos_ns, positions = _timed(lambda sf: sf[0].fast_field_values("pos", [a for _, a in sf[1]]), found)
    mm = idx._mm

    def payloads(ps: list[int]):
        return [decode_payload(mm[p + 4:p + 4 + _LEN.unpack_from(mm, p)[0]].decode("utf-8")) for p in ps]

    payload_ns, _ = _timed(payloads, positions)
    return {"open_ms": open_ms, "queries": len(queries), "rounds": ROUNDS, "full": pct(full), "full_cpu": pct(cpu_ns),
            "full_first_round": pct(first), "tokenize": pct(tok_ns), "engine": pct(eng_ns), "fetch": pct(fetch_ns), "fetch_pos": pct(pos_ns),
            "fetch_payload": pct(payload_ns), "peak_rss_mb": peak_rss_mb(), "rss_before_mb": rss0, "tops": tops}


def query_bm25s(n: int, path: str, nq: int, backend: str = "numpy") -> dict:
    import bm25s
    from corpus import build_queries

    from convsearch.backends.local import query_terms

    queries, warm = build_queries(nq), build_queries(min(nq, 100), offset=7)
    rss0 = current_rss_mb()
    t0 = time.perf_counter()
    r = bm25s.BM25.load(path, backend=backend)  # numba: JIT-compiled at load (counted in open_ms)
    open_ms = (time.perf_counter() - t0) * 1000

    def search(q: str):
        return r.retrieve([query_terms(q)], k=TOP_K, show_progress=False, n_threads=0)

    for q in warm:
        search(q)
    full: list[int] = []
    cpu_ns: list[int] = []
    tops = None
    for _ in range(ROUNDS):
        ns, res = _timed(search, queries, cpu_ns)
        full += ns
        tops = tops or [[f"b{int(i):06d}" for i, s in zip(x.documents[0], x.scores[0]) if s > 0] for x in res]
    terms = [query_terms(q) for q in queries] * ROUNDS
    eng_ns, _ = _timed(lambda ts: r.retrieve([ts], k=TOP_K, show_progress=False, n_threads=0), terms)
    return {"open_ms": open_ms, "queries": len(queries), "rounds": ROUNDS, "full": pct(full), "full_cpu": pct(cpu_ns), "engine": pct(eng_ns),
            "peak_rss_mb": peak_rss_mb(), "rss_before_mb": rss0, "tops": tops}


# --- driver ---------------------------------------------------------------------------------------
def run(quick: bool = False) -> dict:
    n, nq = (20_000, 100) if quick else (100_000, 500)
    base = cache_dir(n)
    meta_p = base / "build.json"
    ours_p, b_p = base / "tantivy-localindex", base / "bm25s"
    if meta_p.exists():
        build = json.loads(meta_p.read_text())
        build["cached"] = True
    else:
        for old in CACHE.glob(f"bm25-{n}-*"):
            shutil.rmtree(old, ignore_errors=True)  # a stale recipe or source version
        base.mkdir(parents=True, exist_ok=True)
        build = {"ours": run_worker("bm25_100k", "build_ours", {"n": n, "path": str(ours_p)}),
                 "bm25s": run_worker("bm25_100k", "build_bm25s", {"n": n, "path": str(b_p)}),
                 "built_at": time.strftime("%Y-%m-%d %H:%M"), "cached": False}
        meta_p.write_text(json.dumps(build, indent=1))
    ours = run_worker("bm25_100k", "query_ours", {"n": n, "path": str(ours_p), "nq": nq})
    one = build["ours"].get("onecommit_path")
    ours1 = run_worker("bm25_100k", "query_ours", {"n": n, "path": one, "nq": nq}) if one and Path(one).exists() else None
    if ours1:
        ours1.pop("tops")
    theirs = run_worker("bm25_100k", "query_bm25s", {"n": n, "path": str(b_p), "nq": nq, "backend": "numpy"})
    numba = run_worker("bm25_100k", "query_bm25s", {"n": n, "path": str(b_p), "nq": nq, "backend": "numba"})
    tops = ours.pop("tops")
    overlap = [len(set(a) & set(b)) / max(1, min(len(a), len(b), TOP_K)) for a, b in zip(tops, theirs.pop("tops"))
               if a and b]
    numba.pop("tops")
    # the target is judged against the faster bm25s backend
    best = min((theirs, numba), key=lambda x: x["full"]["p50"])
    ratio_full = ours["full"]["p50"] / best["full"]["p50"]
    ratio_engine = ours["engine"]["p50"] / min(theirs["engine"]["p50"], numba["engine"]["p50"])
    return {"n": n, "nq": nq, "build": build, "ours": ours, "ours_onecommit": ours1, "bm25s": theirs, "bm25s_numba": numba,
            "ratio_full_p50": ratio_full, "ratio_engine_p50": ratio_engine,
            "ratio_full_p50_numpy": ours["full"]["p50"] / theirs["full"]["p50"],
            "ratio_full_p50_numba": ours["full"]["p50"] / numba["full"]["p50"],
            "overlap_at_10": sum(overlap) / max(1, len(overlap)),
            "cache": str(base.relative_to(CACHE.parent.parent)), "met": ratio_full <= 1.0,
            "numpy": __import__("numpy").__version__}


def render(r: dict) -> str:
    b, o, t, nb = r["build"], r["ours"], r["bm25s"], r["bm25s_numba"]
    c = b["ours"]["corpus"]
    lat = [
        ("**ours: `LocalIndex.search`** (query_terms + tantivy + payloads → `Hit`s)", o["full"]),
        ("ours, full call, CPU time of the calling thread", o["full_cpu"]),
        *([("ours, full call, first round only (payloads decoded for the first time)", o["full_first_round"])]
          if "full_first_round" in o else []),
        ("ours, part: tokenization (`query_terms`: jieba + stop words)", o["tokenize"]),
        ("ours, part: tantivy only (build BooleanQuery + searcher + top-10 search, no count)", o["engine"]),
        ("ours, part: 10 addresses → `Hit`s (`pos` fast field + mapped payloads + decode)", o["fetch"]),
        ("ours, fetch detail: `fast_field_values(\"pos\", 10 addresses)` alone", o["fetch_pos"]),
        ("ours, fetch detail: 10 payload slices → decoded fields alone", o["fetch_payload"]),
        ("**bm25s numpy backend (default): `query_terms` + `retrieve([terms], k=10)`**", t["full"]),
        ("bm25s numpy, full call, CPU time of the calling thread", t["full_cpu"]),
        ("bm25s numpy, part: `retrieve` only (same pre-tokenized terms)", t["engine"]),
        ("**bm25s numba backend: `query_terms` + `retrieve([terms], k=10)`**", nb["full"]),
        ("bm25s numba, full call, CPU time of the calling thread", nb["full_cpu"]),
        ("bm25s numba, part: `retrieve` only", nb["engine"]),
    ]
    o1 = r.get("ours_onecommit")
    if o1:
        lat.insert(next(i for i, (name, _) in enumerate(lat) if name.startswith("**bm25s")), (f"ours, same corpus indexed in ONE commit ({b['ours']['onecommit_segments']} segment(s) instead of "
                       f"{b['ours']['segments']}): full call", o1["full"]))
    rows = [(name, s["n"], s["p50"], s["p95"], s["p99"], s["max"]) for name, s in lat]
    build_rows = [
        (f"ours (tantivy via `LocalIndex.add`, default batches of 256 = one commit each; tokenization included; "
         f"{b['ours']['segments']} segments)", b["ours"]["index_s"], b["ours"]["size_mb"], b["ours"]["peak_rss_mb"],
         o["open_ms"], o["peak_rss_mb"]),
        ("ours, the same documents in one commit (`add(docs, batch_size=len(docs))`)", b["ours"]["onecommit_s"],
         b["ours"]["onecommit_size_mb"], "", o1["open_ms"] if o1 else "", o1["peak_rss_mb"] if o1 else ""),
        (f"bm25s (`BM25.index` on the same tokens; + {b['bm25s']['tokenize_s']:.1f} s to tokenize them)",
         b["bm25s"]["index_s"], b["bm25s"]["size_mb"], b["bm25s"]["peak_rss_mb"], t["open_ms"], t["peak_rss_mb"]),
        ("bm25s, numba backend (same index; open = load + JIT compile)", "", "", "", nb["open_ms"], nb["peak_rss_mb"]),
    ]
    cached = f"cached in `{r['cache']}`, built {b.get('built_at', '?')}" if b.get("cached") else "built in this run"
    return f"""## 3. Embedded BM25 at {r['n']:,} documents vs bm25s

Corpus: {c['docs']:,} documents ({c['zh']:,} zh / {c['en']:,} en; {c['avg_chars']:.0f} characters on average, so mostly
short): windows of 2–4 consecutive turns from every dialog of every shared dataset (su2019 train + dev,
restoration-200k, CANARD, CamRest, MuDoCo, Alexa CQR, CAsT, iKAT) plus the iKAT gold passages;
{b['bm25s']['tokens']:,} tokens, vocabulary {b['bm25s']['vocab']:,}. Queries: {r['nq']} human standalone rewrites (50% su2019
dev zh, 40% CANARD dev, 10% CAsT), top_k = 10, one query at a time, {o['rounds']} rounds after a warm-up of
100 other queries. Both engines get identical tokens (`convsearch.text.words` for documents, `query_terms`
for queries); bm25s runs `BM25(k1=1.2, b=0.75)` (tantivy's parameters, so the top 10s are comparable; they
do not change its speed). Mean top-10 overlap between the two engines: {r['overlap_at_10']:.0%}.

bm25s's default numpy backend picks the top k with `np.argpartition`, which on this numpy
({r.get('numpy', '?')}) is slow on score vectors that are mostly ties at 0 (tens of ms at 100k), so its
numba backend is measured too and **the target is judged against the faster of the two**.

Target: ours / bm25s at p50 ≤ 1 → full call **{r['ratio_full_p50']:.2f}** {verdict(r['met'])}
(vs numpy backend {r['ratio_full_p50_numpy']:.3f}, vs numba backend {r['ratio_full_p50_numba']:.2f}; tantivy part alone
vs the faster `retrieve` alone: **{r['ratio_engine_p50']:.2f}**).

Latency per query (ms):

{table(("what is timed", "samples", "p50", "p95", "p99", "max"), rows)}

Our full call returns ready `Hit`s (id, title, text, url, date, metadata: read from `payloads.bin` at the
position the `pos` fast field gives, not from tantivy's document store, each payload decoded once and kept);
bm25s's `retrieve` returns document indices only, so "tantivy only" vs "`retrieve` only" is the engine-to-engine
comparison. Before index format 2 the `Hit`s came from `searcher.doc` + a JSON payload: 0.13 ms of a 0.21 ms call
(the 2026-11-29 run).

Index ({cached}):

{table(("engine", "index time s", "size on disk MB", "peak RSS indexing MB", "open ms", "peak RSS querying MB"), build_rows)}
"""


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv), indent=1))
