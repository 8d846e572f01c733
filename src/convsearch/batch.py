"""`convsearch rewrite --batch`: rewrite a JSONL of conversations, one output record per input line."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .ingest import json_lines, read_text
from .rewrite import get_rewriter
from .types import Message
from .window import history_window


def rewrite_batch(src: Path, dst: Path, rewriter_name: str = "rules", *, window: int = 8,
                  warm: bool = False) -> tuple[int, float]:
    """Read every record first (a bad line fails before anything is written), then rewrite in order.

    ``warm=True`` (the CLI: a process of its own) warms the rule path and freezes the heap (``warmup``) once the
    input is read, before the clock starts."""
    from .eval.data import parse_record, topic_text

    records = []
    for n, obj in json_lines(src, read_text(src)):
        if isinstance(obj, dict):
            if isinstance(obj.get("messages"), list) and "history" not in obj:
                _from_messages(obj)
            obj.setdefault("rewrite", obj.get("question", ""))
            obj.setdefault("history", [])
            obj.setdefault("history_roles", ["user" if i % 2 == 0 else "assistant" for i in range(len(obj["history"]))])
        records.append(parse_record(obj, path=str(src), line=n))
    rewriter = get_rewriter(rewriter_name)  # after the input is known good: an LLM client is opened here
    if warm:
        from .warmup import freeze_heap, warm_up

        if rewriter_name != "passthrough":
            warm_up()
        freeze_heap()  # the records read are alive to the end: full collections need not walk them either

    def one(r):
        t = time.perf_counter()
        rw = rewriter.rewrite(history_window(r.messages(), window), r.question, topic=topic_text(r))
        return rw, (time.perf_counter() - t) * 1000

    t0 = time.perf_counter()
    tmp = dst.with_suffix(dst.suffix + ".tmp")
    try:
        # an LLM rewriter waits on the network: run turns side by side (its client caps requests in flight)
        workers = _workers(rewriter)
        if workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(one, records))
        else:
            results = (one(r) for r in records)
        with tmp.open("w", encoding="utf-8") as out:
            for r, (rw, ms) in zip(records, results):
                out.write(json.dumps({"id": r.id, "rewrite": rw.rewritten, "rewritten": rw.changed,
                                      "method": rw.method, "reason": rw.reason, "latency_ms": round(ms, 4)},
                                     ensure_ascii=False) + "\n")
    finally:
        rewriter.close()  # LLM rewriters hold an HTTP client
    tmp.replace(dst)
    return len(records), time.perf_counter() - t0


def _from_messages(obj: dict) -> None:
    """An OpenAI-style ``messages`` list (any role; the last user message is the question when none is given)
    → ``history`` / ``history_roles``. Roles are checked by ``parse_record``; content parts keep their text."""
    msgs = [m for m in obj["messages"] if isinstance(m, dict)]
    if "question" not in obj and msgs and msgs[-1].get("role") == "user":
        obj["question"] = Message.from_dict(msgs.pop()).content
    conv = [Message.from_dict(m) for m in msgs]
    obj["history"] = [m.content for m in conv]
    obj["history_roles"] = [m.role for m in conv]


def _workers(rewriter: object) -> int:
    if getattr(rewriter, "cost", "io") != "io":  # threads help only what waits on the network
        return 1
    from .llm import LLMSettings

    return max(1, LLMSettings.from_env().max_concurrency)
