"""The benchmark corpus and queries, built from the shared conversational data at run time.

Documents are windows of 2, 3 and 4 consecutive turns (history turns and questions) of every dialog in
every dataset (CANARD, su2019 train + dev, restoration-200k, CamRest, MuDoCo, Alexa CQR, CAsT, iKAT), plus
the iKAT gold passages; unique windows are ordered by a hash of their text (a deterministic shuffle that
mixes zh and en) and the first ``n`` kept. Queries are human standalone rewrites (what the system would
search): su2019 dev (zh) and CANARD dev + CAsT (en), spread over each file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

from common import DATA, data_file

from convsearch.types import Document

CORPUS_VERSION = 1  # bump when the recipe changes (part of the index cache key)
SOURCES = "*/*.jsonl"


def _records() -> Iterator[dict]:
    for p in sorted(DATA.glob(SOURCES)):
        with p.open(encoding="utf-8") as fh:
            for line in fh:
                o = json.loads(line)
                if "question" in o:
                    yield o


def _title(o: dict) -> str:
    t = o.get("topic")
    if isinstance(t, dict):
        return str(t.get("wikipedia_title") or t.get("title") or "")
    return t if isinstance(t, str) else ""


def build_corpus(n: int) -> list[Document]:
    windows: dict[str, tuple[str, str, str, str]] = {}
    passages: dict[str, tuple[str, str, str]] = {}
    for o in _records():
        seq = [" ".join(x.split()) for x in [*o.get("history", []), o["question"]]]
        seq = [x for x in seq if x]
        lang, ds, rid, title = o.get("lang") or "", o.get("dataset") or "", str(o["id"]), _title(o)
        for w in (2, 3, 4):
            for i in range(max(1, len(seq) - w + 1)):
                text = "\n".join(seq[i:i + w])
                windows.setdefault(text, (lang, title, f"https://bench.local/{ds}/{rid}#{w}-{i}", rid))
        for pid, text in (o.get("gold_passages_text") or {}).items():
            passages.setdefault(" ".join(text.split()), (o.get("lang") or "en", _title(o), f"https://bench.local/passage/{pid}"))
    items = [(t, lang, title, url) for t, (lang, title, url) in passages.items()]
    order = sorted(windows, key=lambda t: hashlib.sha1(t.encode("utf-8")).digest())
    items += [(t, windows[t][0], windows[t][1], windows[t][2]) for t in order[: max(0, n - len(items))]]
    items = items[:n]
    return [Document(id=f"b{i:06d}", text=t, title=title, url=url, lang=lang or None)
            for i, (t, lang, title, url) in enumerate(items)]


def _rewrites(rel: str) -> list[str]:
    out, seen = [], set()
    with data_file(rel).open(encoding="utf-8") as fh:
        for line in fh:
            q = " ".join(json.loads(line)["rewrite"].split())
            if q and q not in seen:
                seen.add(q)
                out.append(q)
    return out


def build_queries(n: int, *, offset: int = 0) -> list[str]:
    """``n`` queries: half zh (su2019 dev rewrites), 40% CANARD dev rewrites, 10% CAsT rewrites;
    only queries that keep at least one term after stop words (an empty query is not a search)."""
    from convsearch.backends.local import query_terms

    from turns import spread

    parts = ((_rewrites("rewrite-su2019-zh/dev.jsonl"), n // 2), (_rewrites("canard/dev.jsonl"), n * 2 // 5),
             (_rewrites("trec-cast/cast2019_eval.jsonl"), n - n // 2 - n * 2 // 5))
    out: list[str] = []
    for pool, k in parts:
        pool = [q for q in pool if query_terms(q)]
        out += spread(pool, k, offset)
    return out


def corpus_stats(docs: list[Document]) -> dict:
    zh = sum(d.lang == "zh" for d in docs)
    return {"docs": len(docs), "zh": zh, "en": len(docs) - zh,
            "avg_chars": sum(len(d.title) + len(d.text) for d in docs) / max(1, len(docs))}
