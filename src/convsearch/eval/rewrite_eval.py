"""Rewrite-quality evaluation: a rewriter against two baselines on the same turns, per dataset.

Baselines
    copy          the raw question (what no rewriting gives)
    last_user+q   the most recent user turn in the history, then the question (the question alone if none)

Example::

    from convsearch.rewrite import get_rewriter
    report = evaluate_rewrite(load_records(path), get_rewriter("rules"))
    report["datasets"]["canard"]["systems"]["rules"]["rest_f1"]
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import ConvsearchError
from ..rewrite.base import Rewriter
from ..text import words
from ..window import in_window
from . import metrics as m
from .data import EvalRecord, topic_text

COPY = "copy"
LAST_USER = "last_user+q"
BASELINES = (COPY, LAST_USER)


def last_user_plus_question(record: EvalRecord) -> str:
    """The most recent user turn of the history, a space, then the question.

    Chinese is joined with a space too: glued text would let jieba segment across the boundary and
    invent words that are in neither turn.
    """
    for role, text in zip(reversed(record.history_roles), reversed(record.history)):
        if role == "user" and text.strip():
            return f"{text.strip()} {record.question}"
    return record.question


def session_context(record: EvalRecord, topic: str | None) -> str:
    """Everything a faithful rewrite may draw words from: history, question and (when given) the topic."""
    return "\n".join([*record.history, record.question, topic or ""])


class _Tokens:
    """Tokenize each distinct string once per evaluation."""

    def __init__(self) -> None:
        self._cache: dict[str, list[str]] = {}

    def __call__(self, text: str) -> list[str]:
        toks = self._cache.get(text)
        if toks is None:
            toks = self._cache[text] = words(text)
        return toks


def system_metrics(preds: Sequence[str], records: Sequence[EvalRecord], contexts: Sequence[str], *, lang: str,
                   tokens: _Tokens | None = None, latencies_ms: Sequence[float] | None = None,
                   fell_back: int | None = None, errors: int | None = None) -> dict[str, Any]:
    """All rewrite metrics of one system's predictions on ``records`` (flat keys, JSON-ready)."""
    tok = tokens or _Tokens()
    questions = [r.question for r in records]
    golds = [r.rewrite for r in records]
    q_toks = [tok(q) for q in questions]
    g_toks = [tok(g) for g in golds]
    p_toks = [tok(p) for p in preds]
    r1 = m.restoration_prf_tokens(p_toks, q_toks, g_toks, n=1)
    r2 = m.restoration_prf_tokens(p_toks, q_toks, g_toks, n=2)
    gate = m.gate_scores(preds, questions, golds)
    n = len(preds)
    out: dict[str, Any] = {
        "n": n,
        "bleu": m.corpus_bleu(preds, golds, lang=lang),
        "em": m.exact_match(preds, golds),
        "rest_p1": r1.precision, "rest_r1": r1.recall, "rest_f1": r1.f1,
        "rest_p2": r2.precision, "rest_r2": r2.recall, "rest_f2": r2.f1,
        "gate_acc": gate.accuracy, "gate_p": gate.precision, "gate_r": gate.recall, "gate_f1": gate.f1,
        "changed": (gate.tp + gate.fp) / n if n else 0.0,
        "faithful": m.faithfulness(preds, questions, contexts),
        "fell_back": fell_back / n if (fell_back is not None and n) else None,
        "errors": errors,
    }
    lat = m.latency_stats(list(latencies_ms)) if latencies_ms is not None else {"mean_ms": None, "p99_ms": None}
    out["latency_mean_ms"], out["latency_p99_ms"] = lat["mean_ms"], lat["p99_ms"]
    return out


def _group(records: Iterable[EvalRecord]) -> dict[str, list[EvalRecord]]:
    groups: dict[str, list[EvalRecord]] = {}
    for r in records:
        groups.setdefault(r.dataset, []).append(r)
    return groups


def evaluate_rewrite(records: Sequence[EvalRecord], rewriter: Rewriter, *, use_topic: bool = True) -> dict[str, Any]:
    """Score ``rewriter`` and the copy / last_user+q baselines per dataset.

    Turns with an empty question or an empty human rewrite (known source defects) are skipped and
    counted. A ``ConvsearchError`` from the rewriter on one turn counts as an error and scores the raw
    question for that turn; anything else propagates (it is a bug).
    """
    name = getattr(rewriter, "name", type(rewriter).__name__)
    if name in BASELINES:
        name = f"{name}(rewriter)"
    tok = _Tokens()
    datasets: dict[str, Any] = {}
    for dataset, recs in _group(records).items():
        usable = [r for r in recs if r.question.strip() and r.rewrite.strip()]
        lang = Counter(r.lang for r in recs).most_common(1)[0][0]
        topics = [topic_text(r) if use_topic else None for r in usable]
        contexts = [session_context(r, t) for r, t in zip(usable, topics)]
        preds: list[str] = []
        latencies: list[float] = []
        fell_back = errors = 0
        for r, topic in zip(usable, topics):
            history = [msg for msg in r.messages() if in_window(msg)]  # system / tool turns: as the window does
            t0 = time.perf_counter()
            try:
                result = rewriter.rewrite(history, r.question, topic=topic)
                pred = result.rewritten
                fell_back += bool(result.fell_back)
            except ConvsearchError:
                pred = r.question
                errors += 1
            latencies.append((time.perf_counter() - t0) * 1000.0)
            preds.append(pred)
        systems = {
            COPY: system_metrics([r.question for r in usable], usable, contexts, lang=lang, tokens=tok),
            LAST_USER: system_metrics([last_user_plus_question(r) for r in usable], usable, contexts, lang=lang,
                                      tokens=tok),
            name: system_metrics(preds, usable, contexts, lang=lang, tokens=tok, latencies_ms=latencies,
                                 fell_back=fell_back, errors=errors),
        }
        gold_changed = sum(m.match_key(r.rewrite) != m.match_key(r.question) for r in usable)
        datasets[dataset] = {
            "n": len(usable),
            "skipped": len(recs) - len(usable),
            "lang": lang,
            "gold_changed": gold_changed / len(usable) if usable else 0.0,
            "systems": systems,
        }
    return {"rewriter": name, "use_topic": use_topic, "n_records": len(records), "datasets": datasets}
