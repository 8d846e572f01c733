"""Retrieval gain of rewriting: do rewritten queries find what the turn needs?

Two tasks, chosen from the data:

passages  (records carry ``gold_passages_text``, e.g. iKAT 2023 train) every gold passage of the file
          is indexed; each turn with gold passages must retrieve them.
dialogs   (no passages: CANARD, CAsT, chit-chat sets) "topic retrieval": one document per dialog, made
          of the assistant turns of its longest record (nothing from the user side); each follow-up
          turn must retrieve its own dialog's document. A dialog with no assistant text (CAsT 2019
          has none) falls back to its topic description; ``doc_source`` counts which was used.

Four query sets are scored with recall@10, MRR@10 and nDCG@3: the raw question, the system rewrite,
the human rewrite, and "dual" (raw + system results fused with RRF). ``gap_closed`` is
(system − raw) / (human − raw) for recall@10: the share of the human rewrite's gain the system gets.

Example::

    report = evaluate_retrieval(load_records(path), get_rewriter("rules"), index_dir=Path(tmp))
    report["systems"]["system"]["recall@10"], report["gap_closed"]
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConvsearchError, InputError
from ..rewrite.base import Rewriter
from ..types import Document, Hit
from . import metrics as m
from .data import EvalRecord, topic_text

QUERY_SETS = ("raw", "system", "human", "dual")


class SearchIndex(Protocol):
    """The slice of a writable backend the harness uses (``convsearch.backends.base.InMemoryBackend`` is the
    test double)."""

    def add(self, docs: Iterable[Document]) -> Any: ...

    def search(self, query: str, *, top_k: int = 10) -> list[Hit]: ...

    def close(self) -> None: ...


IndexFactory = Callable[[Path], SearchIndex]
Fuse = Callable[[Sequence[Sequence[Hit]]], list[Hit]]


def local_index(path: Path) -> SearchIndex:
    """A fresh keyword-only (BM25, no embedder) ``local`` backend under ``path``, opened through the registry."""
    return backend_index("local")(path)


def backend_index(name: str) -> IndexFactory:
    """A factory of fresh keyword-only (BM25) indexes of the writable backend ``name`` (``local``, ``milvus``:
    Milvus Lite in ``path``), opened through the registry, so that one evaluation compares backends."""
    from ..backends.registry import open_backend
    from ..config import Settings

    def make(path: Path) -> SearchIndex:
        return open_backend(Settings(data_dir=path, dense="off"), name, create=True)  # type: ignore[return-value]

    return make


def rrf(lists: Sequence[Sequence[Hit]]) -> list[Hit]:
    from ..fuse import fuse_rrf

    return fuse_rrf(lists)


@dataclass(frozen=True, slots=True)
class Turn:
    """One query to score: the record and its relevance judgments {doc_id: grade}."""

    record: EvalRecord
    qrels: dict[str, int]


@dataclass(frozen=True, slots=True)
class RetrievalTask:
    """What to index and what to ask."""

    mode: str
    docs: list[Document]
    turns: list[Turn]
    doc_source: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)


# --- task: gold passages ---------------------------------------------------------------------------
def passage_task(records: Sequence[EvalRecord]) -> RetrievalTask:
    """Index every gold passage in ``records``; each turn with gold passages must find them."""
    texts: dict[str, str] = {}
    for r in records:
        for pid, text in r.gold_passages_text.items():
            if text.strip():
                texts.setdefault(pid, text)
    lang = _lang(records)
    docs = [Document(id=pid, text=text, lang=lang) for pid, text in texts.items()]
    turns: list[Turn] = []
    skipped: Counter[str] = Counter()
    for r in records:
        gold = {pid for pid in (*r.gold_passage_ids, *r.gold_passages_text) if pid in texts}
        if not gold:
            skipped["no_gold_passages"] += 1
        elif not (r.question.strip() and r.rewrite.strip()):
            skipped["empty_question_or_rewrite"] += 1
        else:
            turns.append(Turn(r, {pid: 1 for pid in sorted(gold)}))
    return RetrievalTask("passages", docs, turns, {"passages": len(docs)}, dict(skipped))


# --- task: dialog (topic) retrieval ----------------------------------------------------------------
_DIALOG_META_KEYS = ("quac_dialog_id", "dialog_id", "dialogue_id", "conversation_id", "session_id")
# "C_2d21…_0_q3", "calling-dial3-turn4", "31_2", "1-1_3", "cqr_dev_10_5" → the part before the turn number
_TURN_SUFFIX_RE = re.compile(r"^(.+?)[_-](?:q|turn|t)?\d+$")


def dialog_key(record: EvalRecord) -> str:
    """A candidate dialog id: ``meta`` dialog id when present, else the record id without its turn number."""
    for key in _DIALOG_META_KEYS:
        value = record.meta.get(key)
        if value not in (None, ""):
            return f"{key}={value}"
    match = _TURN_SUFFIX_RE.match(record.id)
    return match.group(1) if match else record.id


def group_dialogs(records: Iterable[EvalRecord]) -> dict[str, list[EvalRecord]]:
    """Dialogs as {doc_id: records, longest history first}; first turns (empty history) are left out.

    Records sharing a ``dialog_key`` are split further so that each dialog is history-consistent:
    a record joins a dialog only if its history is a prefix of the dialog's longest history. This
    keeps sets whose ids carry no dialog (e.g. "rewrite_18000": one session per record) apart.
    """
    by_key: dict[str, list[EvalRecord]] = {}
    for r in records:
        if r.history:
            by_key.setdefault(dialog_key(r), []).append(r)
    dialogs: dict[str, list[EvalRecord]] = {}
    for key, group in by_key.items():
        clusters: list[list[EvalRecord]] = []
        by_first: dict[str, list[int]] = {}  # first history turn → cluster indexes, to keep this linear-ish
        for r in sorted(group, key=lambda r: len(r.history), reverse=True):
            h = r.history
            for ci in by_first.get(h[0], ()):
                if clusters[ci][0].history[: len(h)] == h:
                    clusters[ci].append(r)
                    break
            else:
                by_first.setdefault(h[0], []).append(len(clusters))
                clusters.append([r])
        for j, cluster in enumerate(clusters):
            dialogs[key if len(clusters) == 1 else f"{key}#{j}"] = cluster
    return dialogs


def dialog_document_text(records: Sequence[EvalRecord]) -> tuple[str, str]:
    """(text, source) for one dialog: its longest record's assistant turns, else the topic description."""
    longest = records[0]
    text = "\n".join(t for role, t in zip(longest.history_roles, longest.history) if role == "assistant" and t.strip())
    if text:
        return text, "assistant"
    topic = longest.topic
    if isinstance(topic, dict) and str(topic.get("description") or "").strip():
        return str(topic["description"]).strip(), "topic_description"
    return "", "none"


def dialog_task(records: Sequence[EvalRecord]) -> RetrievalTask:
    """One document per dialog; every follow-up turn must retrieve its own dialog's document."""
    lang = _lang(records)
    docs: list[Document] = []
    turns: list[Turn] = []
    sources: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    doc_of: dict[str, str] = {}  # record id → dialog doc id
    for doc_id, recs in group_dialogs(records).items():
        text, source = dialog_document_text(recs)
        sources[source] += 1
        if not text:
            continue
        docs.append(Document(id=doc_id, text=text, lang=lang))
        for r in recs:
            doc_of[r.id] = doc_id
    for r in records:
        if not r.history:
            skipped["first_turn"] += 1
        elif r.id not in doc_of:
            skipped["dialog_without_text"] += 1
        elif not (r.question.strip() and r.rewrite.strip()):
            skipped["empty_question_or_rewrite"] += 1
        else:
            turns.append(Turn(r, {doc_of[r.id]: 1}))
    return RetrievalTask("dialogs", docs, turns, dict(sources), dict(skipped))


def build_task(records: Sequence[EvalRecord]) -> RetrievalTask:
    """``passage_task`` when any record carries gold passage text, else ``dialog_task``."""
    if any(r.gold_passages_text for r in records):
        return passage_task(records)
    return dialog_task(records)


def _lang(records: Sequence[EvalRecord]) -> str | None:
    counts = Counter(r.lang for r in records)
    return counts.most_common(1)[0][0] if counts else None


# --- running ---------------------------------------------------------------------------------------
def _search(index: SearchIndex, query: str, top_k: int) -> list[Hit]:
    if not query.strip():
        return []
    try:
        return list(index.search(query, top_k=top_k))
    except InputError:  # e.g. a query that is all punctuation: retrieves nothing
        return []


def gap_closed(raw: float, system: float, human: float) -> float | None:
    """(system − raw) / (human − raw); None when the human rewrite gains nothing over the raw question."""
    if abs(human - raw) < 1e-12:
        return None
    return (system - raw) / (human - raw)


def evaluate_retrieval(records: Sequence[EvalRecord], rewriter: Rewriter, *, index_dir: Path,
                       limit: int | None = None, top_k: int = 10, use_topic: bool = True,
                       index_factory: IndexFactory | None = None, fuse: Fuse | None = None) -> dict[str, Any]:
    """Index the task's documents into a fresh index at ``index_dir`` and score the four query sets.

    ``records`` should be the whole file (the corpus is built from all of it); ``limit`` caps the
    number of scored turns. Each query fetches ``max(2 * top_k, 10)`` hits (the pipeline's depth);
    "dual" fuses the rewrite's and the raw question's lists (in that order) and every set is cut to
    ``top_k`` for scoring. When the system rewrite equals the raw question its results are reused and
    "dual" equals "raw" (RRF of a list with itself keeps its order).
    """
    name = getattr(rewriter, "name", type(rewriter).__name__)
    task = build_task(records)
    turns = task.turns[:limit] if limit is not None else task.turns
    fuse = fuse or rrf
    depth = max(top_k * 2, 10)  # per-query depth before fusion, as in pipeline.search_with_context
    index = (index_factory or local_index)(Path(index_dir))
    rankings: dict[str, dict[str, list[str]]] = {s: {} for s in QUERY_SETS}
    qrels: dict[str, dict[str, int]] = {}
    latencies: list[float] = []
    changed = errors = 0
    t_start = time.perf_counter()
    try:
        if task.docs:
            index.add(task.docs)
        for i, turn in enumerate(turns):
            r = turn.record
            qid = f"{i}:{r.id}"
            qrels[qid] = turn.qrels
            t0 = time.perf_counter()
            try:
                system_query = rewriter.rewrite(r.messages(), r.question,
                                                topic=topic_text(r) if use_topic else None).rewritten
            except ConvsearchError:  # counted, and the raw question is searched instead (fail open)
                system_query = r.question
                errors += 1
            latencies.append((time.perf_counter() - t0) * 1000.0)
            raw_hits = _search(index, r.question, depth)
            if system_query.strip() and system_query != r.question:
                changed += 1
                sys_hits = _search(index, system_query, depth)
                # rewrite first, as the pipeline orders its queries: RRF ties keep first appearance
                dual_hits = list(fuse([sys_hits, raw_hits]))
            else:
                sys_hits = dual_hits = raw_hits
            if r.rewrite == r.question:
                human_hits = raw_hits
            elif r.rewrite == system_query:
                human_hits = sys_hits
            else:
                human_hits = _search(index, r.rewrite, depth)
            for qset, hits in (("raw", raw_hits), ("system", sys_hits), ("human", human_hits), ("dual", dual_hits)):
                rankings[qset][qid] = [h.id for h in hits[:top_k]]
    finally:
        index.close()
    elapsed = time.perf_counter() - t_start
    systems = {qset: m.retrieval_scores(qrels, rankings[qset]) for qset in QUERY_SETS}
    recall = [systems[s]["recall@10"] for s in ("raw", "system", "human")]
    return {
        "mode": task.mode,
        "datasets": sorted({t.record.dataset for t in turns}),
        "rewriter": name,
        "use_topic": use_topic,
        "top_k": top_k,
        "n_docs": len(task.docs),
        "n_queries": len(turns),
        "n_eligible": len(task.turns),
        "doc_source": task.doc_source,
        "skipped": task.skipped,
        "changed": changed / len(turns) if turns else 0.0,
        "errors": errors,
        "systems": systems,
        "gap_closed": gap_closed(*recall) if turns else None,
        "rewrite_latency": m.latency_stats(latencies),
        "seconds": elapsed,
    }
