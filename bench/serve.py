"""HTTP load benchmark (`make bench-serve`): `convsearch serve` on loopback, /v1/search at concurrency 32.

    .venv/bin/python bench/serve.py                       # 30 s per row → docs/BENCHMARKS_SERVE.md
    .venv/bin/python bench/serve.py --duration 5 --rows 1w   # a quick look, printed only (--out -)

The server is its own process (`python -m convsearch.cli serve`) over an embedded BM25 index of the demo corpus
(dense off); this process is the load generator: 32 keep-alive connections on asyncio with hand-written
HTTP/1.1 (so the client's own cost stays small next to the server's), each sending one request at a time.
The bodies are the turns of demo/conversations.yaml, each with its conversation so far as `messages`
(stateless requests: the rule path, gate → rules rewrite → variants → BM25 → fuse → dedup → rerank), and the
per-tenant response cache is off, so every request runs the whole turn. Rows:

    1w         one uvicorn worker
    2w         two worker processes (rate limits and caches are per process)
    1w-cache   one worker, response cache on (repeated turns are served from it)
    1w-threads, 2w-threads  as 1w / 2w with CONVSEARCH_INLINE_TURNS=off (every turn in a worker thread)
    1w-session one worker, turns in stored sessions (SQLite history: window read + append per turn; each
               connection plays the conversations in order, a new session per conversation and pass)

Latency is measured per request from send to the last byte of the response; RSS is the server's (all worker
processes) from /proc, before (after a warm-up) and after the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
KEY = "bench-key"
ROWS = {
    "1w": dict(workers=1, cache=False, session=False),
    "2w": dict(workers=2, cache=False, session=False),
    "1w-cache": dict(workers=1, cache=True, session=False),
    "1w-session": dict(workers=1, cache=False, session=True),
    "1w-threads": dict(workers=1, cache=False, session=False, inline="off"),
    "2w-threads": dict(workers=2, cache=False, session=False, inline="off"),
}


def turn_bodies(session: bool) -> list[bytes]:
    """One request body per scripted demo turn, carrying the conversation before it."""
    convs = yaml.safe_load((REPO / "demo" / "conversations.yaml").read_text(encoding="utf-8"))["conversations"]
    bodies = []
    for ci, conv in enumerate(convs):
        history: list[dict] = []
        for ti, turn in enumerate(conv["turns"]):
            body: dict = {"query": turn["user"], "top_k": 5, "messages": list(history)}
            if session:  # the history comes from the store; __SID__ becomes a new session per worker and pass
                body = {"query": turn["user"], "top_k": 5, "session_id": f"__SID__-{ci}"}
            bodies.append(json.dumps(body, ensure_ascii=False).encode("utf-8"))
            history.append({"role": "user", "content": turn["user"]})
            if turn.get("assistant"):
                history.append({"role": "assistant", "content": turn["assistant"]})
    return bodies


def request_bytes(host: str, port: int, body: bytes) -> bytes:
    head = (f"POST /v1/search HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("ascii") + body


def fix_length(req: bytes) -> bytes:
    head, _, body = req.partition(b"\r\n\r\n")
    lines = [ln if not ln.lower().startswith(b"content-length:") else b"Content-Length: %d" % len(body)
             for ln in head.split(b"\r\n")]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def read_response(reader: asyncio.StreamReader) -> int:
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("server closed the connection")
    status = int(status_line.split()[1])
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    await reader.readexactly(length)
    return status


async def load(host: str, port: int, reqs: list[bytes], *, concurrency: int, duration: float,
               salt: str = "run") -> dict:
    lat: list[float] = []
    statuses: Counter = Counter()
    errors: Counter = Counter()
    stop_at = time.perf_counter() + duration

    sessions = any(b"__SID__" in r for r in reqs)

    async def worker(w: int) -> None:
        # stateless turns start at different offsets; stored sessions play each conversation in order,
        # in a session of their own (worker, pass)
        i = 0 if sessions else w * 7
        reader = writer = None
        while time.perf_counter() < stop_at:
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(host, port)
                req = reqs[i % len(reqs)]
                if sessions:
                    sid = f"{salt}-w{w}p{i // len(reqs)}".encode()
                    req = fix_length(req.replace(b"__SID__", sid))
                i += 1
                t0 = time.perf_counter()
                writer.write(req)
                await writer.drain()
                status = await read_response(reader)
                lat.append(time.perf_counter() - t0)
                statuses[status] += 1
            except (ConnectionError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
                errors[type(exc).__name__] += 1
                if writer is not None:
                    writer.close()
                reader = writer = None
                await asyncio.sleep(0.01)
        if writer is not None:
            writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    wall = time.perf_counter() - t0
    a = np.array(lat) * 1000 if lat else np.zeros(1)
    ok = sum(v for k, v in statuses.items() if 200 <= k < 300)
    return {"requests": len(lat), "ok": ok, "wall_s": wall, "rps": len(lat) / wall, "p50": float(np.percentile(a, 50)),
            "p90": float(np.percentile(a, 90)), "p99": float(np.percentile(a, 99)), "max": float(a.max()),
            "statuses": dict(statuses), "errors": dict(errors),
            "non_2xx": len(lat) - ok + sum(errors.values())}


def rss_mb(pid: int) -> float:
    """RSS of ``pid`` and its children (uvicorn workers), in MiB."""
    pids = [pid]
    try:
        pids += [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def build_index(data_dir: Path) -> int:
    from convsearch.backends.local import LocalIndex
    from convsearch.ingest import load_all

    docs = load_all([REPO / "demo" / "corpus"])
    idx = LocalIndex(data_dir / "index", embedder=None)
    idx.add(docs)
    return len(docs)


def run_row(name: str, data_dir: Path, *, duration: float, concurrency: int, warmup: float) -> dict:
    from convsearch.testing.live_server import LiveServer

    spec = ROWS[name]
    env = {"CONVSEARCH_API_KEYS": f"bench:{KEY}", "CONVSEARCH_RATE_LIMIT": "0", "CONVSEARCH_DENSE": "off",
           "CONVSEARCH_CACHE_SIZE": "1024" if spec["cache"] else "0", "CONVSEARCH_REWRITER": "rules",
           "CONVSEARCH_DATA_DIR": str(data_dir), "CONVSEARCH_INLINE_TURNS": spec.get("inline", "auto")}
    args = ("--workers", str(spec["workers"])) if spec["workers"] > 1 else ()
    with LiveServer(data_dir, env=env, args=args) as srv:
        reqs = [request_bytes(srv.host, srv.port, b) for b in turn_bodies(spec["session"])]
        asyncio.run(load(srv.host, srv.port, reqs, concurrency=concurrency, duration=warmup, salt="warmup"))
        before = rss_mb(srv.pid)
        res = asyncio.run(load(srv.host, srv.port, reqs, concurrency=concurrency, duration=duration))
        res["rss_before"], res["rss_after"] = before, rss_mb(srv.pid)
        res["turns"] = len(reqs)
    res.update(name=name, **spec)
    return res


NOTES = """
Reading it:

- **Little's law bounds the latency target**: with 32 requests always in flight, mean latency = 32 / throughput,
  so p99 ≤ 50 ms needs well over 640 req/s even with no variance at all; on one worker the turn itself (~1 ms of
  CPU for the pipeline, `bench/rule_path.py`) plus the HTTP stack (~0.4 ms) caps throughput near 700 req/s on
  this 2-core machine, which the load generator shares.
- **Inline vs threads**: I/O-free rule-path turns run on the event loop (`CONVSEARCH_INLINE_TURNS=auto`,
  `Service.inline`); anything that may wait (LLM, history database, embeddings) runs in a worker thread under
  `CONVSEARCH_DEADLINE_S`. Two workers add throughput only while a core is free for them.
- **Stored sessions**: every turn reads the window and appends to SQLite. The writers of one process queue on
  the store's per-file write lock (`SqlStore`), taken before BEGIN IMMEDIATE, so each waits for the writes
  ahead of it rather than for SQLite's busy handler to wake up and poll (without the lock: ~250-270 req/s, p99
  0.8-1.0 s, max ~1.2 s on this machine, 30 s runs). Writers in other processes still meet on busy_timeout.
- The machine is shared with other work (see the load average): tails move by tens of ms between runs.
"""


def render(rows: list[dict], *, duration: float, concurrency: int, docs: int, load_avg: tuple) -> str:
    target = "≥ 500 req/s and p99 ≤ 50 ms"
    lines = [
        "# Serving benchmark (`make bench-serve`)", "",
        f"- **Date**: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- **Command**: `.venv/bin/python bench/serve.py --duration {duration:g} --concurrency {concurrency}`",
        f"- **Machine**: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; Python "
        f"{platform.python_version()}; load average before / after {load_avg[0]:.2f} / {load_avg[1]:.2f}",
        f"- **Setup**: `convsearch serve` (uvicorn) on 127.0.0.1, embedded BM25 index of the demo corpus "
        f"({docs} documents), dense off, rule rewriter, rate limit off; the load generator is this script, a "
        f"separate process on the same 2 cores: {concurrency} keep-alive connections for {duration:g} s per row "
        f"(after a warm-up), POST /v1/search with the demo turns and their conversation as `messages`.",
        f"- **Target** (rule path, one worker, cache off): {target}.", "",
        "| row | workers | turns run | cache | history | requests | req/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx + errors | RSS before → after MiB | target |",
        "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        met = r["rps"] >= 500 and r["p99"] <= 50 and r["non_2xx"] == 0
        lines.append(f"| {r['name']} | {r['workers']} | {'in threads' if r.get('inline') == 'off' or r['session'] else 'inline'} | "
                     f"{'on' if r['cache'] else 'off'} | "
                     f"{'stored' if r['session'] else 'messages'} | {r['requests']:,} | {r['rps']:,.0f} | "
                     f"{r['p50']:.1f} | {r['p90']:.1f} | {r['p99']:.1f} | {r['max']:.1f} | {r['non_2xx']} | "
                     f"{r['rss_before']:.0f} → {r['rss_after']:.0f} | {'MET' if met else 'not met'} |")
    lines += ["", "Statuses and client errors per row: " + "; ".join(
        f"{r['name']}: {r['statuses']}{' ' + str(r['errors']) if r['errors'] else ''}" for r in rows), ""]
    lines += NOTES.strip("\n").splitlines() + [""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--warmup", type=float, default=3.0)
    ap.add_argument("--rows", default="1w,1w-threads,2w,1w-cache,1w-session", help=f"comma-separated: {', '.join(ROWS)}")
    ap.add_argument("--out", default=str(REPO / "docs" / "BENCHMARKS_SERVE.md"), help="markdown file, or - for stdout only")
    a = ap.parse_args()
    names = [x.strip() for x in a.rows.split(",") if x.strip()]
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        raise SystemExit(f"unknown rows: {unknown}; choose from {list(ROWS)}")
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="convsearch-bench-serve-") as tmp:
        docs = build_index(Path(tmp))
        for n in names:
            # a fresh data dir per row for the history store; the index is shared read-only
            print(f"bench-serve: {n} …", file=sys.stderr, flush=True)
            rows.append(run_row(n, Path(tmp), duration=a.duration, concurrency=a.concurrency, warmup=a.warmup))
            r = rows[-1]
            print(f"  {r['rps']:,.0f} req/s, p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, non-2xx {r['non_2xx']}",
                  file=sys.stderr, flush=True)
    md = render(rows, duration=a.duration, concurrency=a.concurrency, docs=docs,
                load_avg=(load_before, os.getloadavg()[0]))
    print(md)
    if a.out != "-":
        Path(a.out).write_text(md, encoding="utf-8")
        print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
