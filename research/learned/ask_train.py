"""Fit the ``ask`` section of a model file: when ``auto`` should ask the LLM (``convsearch.learned.ask`` reads it;
issue 26, item 4).

Training only (``research.learned.export`` calls ``fit_ask`` after it has fitted the resolver's models; nothing in
the package imports this). For every training
file (``data.TRAIN_SETS``) it builds the file's retrieval task (``eval.retrieval_eval.build_task``: gold passages, or
each dialog's own document) in a temporary BM25 index and, for every turn of it, reads what ``auto`` reads
(``AskWhenUnsure.assess``: the offline answer and ``learned.ask.ask_row``, by the fold model that never saw the
turn's dialog), and labels it:

- **retrieval**: the human rewrite's recall@10 is above the offline answer's (the turns an LLM answering like the
  annotator would improve);
- **broad**: that, or the offline answer misses words the human rewrite adds whose summed scaled IDF (the fold
  model's table) is at least ``MISS_MASS``.

The turns ``auto`` never asks on are left out: the rules are sure, or there is nothing to ask about
(``learned.auto.NOTHING_TO_ASK``: no history or topic, a thanks). Then, per fold k and for the full fit:
gradient-boosted trees on the retrieval label and logistic regression on the broad label, on the rows of the other
folds (the full fit: every row), each with the quantiles of its probability over its own training rows
(``ranked``: a ``learned.ask.Ranked``). Deterministic: the files in order, no sampling, numpy fits without random
starts.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from convsearch.errors import ConvsearchError
from convsearch.eval.data import load_records, topic_text
from convsearch.eval.oracle import per_query
from convsearch.eval.retrieval_eval import _search, build_task, local_index
from convsearch.learned.alt_models import Model
from convsearch.learned.ask import ASK_NAMES, LEVELS, Doubt, Ranked, _lang_of, idf_mass
from convsearch.learned.auto import ALWAYS, AskWhenUnsure
from convsearch.learned.resolver import columns
from convsearch.learned.rewriter import LearnedRewriter
from convsearch.learned.tokens import read
from convsearch.rewrite.enhance import EnhanceRequest, Passthrough

from .data import DATA_ROOT, FOLDS, TRAIN_SETS
from .fit import fit_gbdt, fit_logistic
from .labels import added_words

MISS_MASS = 1.0  # the broad label: the offline answer misses human-added words of at least this summed scaled IDF
TOP_K = 10
L2 = 1.0


@dataclass
class Rows:
    """The labelled turns of the training files: features, the two labels, the fold and file of each."""

    X: np.ndarray
    retrieval: np.ndarray
    broad: np.ndarray
    fold: np.ndarray
    file: list[str]


def file_rows(path: Path, model_path: Path | str | None = None) -> tuple[list[np.ndarray], list[int], list[int],
                                                                          list[int]]:
    """(rows, retrieval labels, broad labels, folds) of the askable turns of one training file's retrieval task."""
    learned = LearnedRewriter(model_path)
    if learned.out_of_fold(path) is None:
        raise ValueError(f"{path} is not a training file of the model")
    auto = AskWhenUnsure(Passthrough(), learned, below=ALWAYS)  # assess never asks it
    models = learned.resolver.models
    task = build_task(load_records(path))
    rows: list[np.ndarray] = []
    ret: list[int] = []
    broad: list[int] = []
    folds: list[int] = []
    with tempfile.TemporaryDirectory(prefix="convsearch-ask-") as tmp:
        index = local_index(Path(tmp) / "index")
        try:
            if task.docs:
                index.add(task.docs)
            for turn in task.turns:
                r = turn.record
                req = EnhanceRequest(r.question, tuple(r.messages()), topic_text(r))
                try:
                    a = auto.assess(req)
                except ConvsearchError:
                    continue
                if a.row is None:  # the rules are sure: auto never asks, no row
                    continue
                fold = learned.folds.fold(req.history, r.question) if learned.folds else None
                if fold is None:  # a training file is mapped whole (learned.oof): a turn outside it is a bug
                    raise ValueError(f"{path}: turn {r.id} has no fold in the model's fold map")
                offline = a.offline.query
                got = {q: per_query([h.id for h in _search(index, q, TOP_K)], turn.qrels, TOP_K)[0]
                       for q in dict.fromkeys((offline, r.rewrite))}
                better = got[r.rewrite] > got[offline]
                answer = read(offline)
                missed = [w for w in added_words(r.question, r.rewrite) if not answer.has(w)]
                idf = models.pick(fold).idf
                rows.append(a.row)
                ret.append(int(better))
                broad.append(int(better or idf_mass(missed, idf) >= MISS_MASS))
                folds.append(fold)
        finally:
            index.close()
    return rows, ret, broad, folds


def training_rows(root: Path = DATA_ROOT, model_path: Path | str | None = None, *, log: bool = False) -> Rows:
    """``file_rows`` of every training file, in ``TRAIN_SETS`` order."""
    X: list[np.ndarray] = []
    ret: list[int] = []
    broad: list[int] = []
    folds: list[int] = []
    files: list[str] = []
    t0 = time.perf_counter()
    for ds in TRAIN_SETS:
        for name in ds.files:
            r, y1, y2, f = file_rows(root / name, model_path)
            X += r
            ret += y1
            broad += y2
            folds += f
            files += [name] * len(r)
            if log:
                print(f"ask rows: {name}: {len(r)} turns, {sum(y1)} retrieve better with the human rewrite, "
                      f"{sum(y2)} broad ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    return Rows(np.vstack(X), np.array(ret), np.array(broad), np.array(folds), files)


def fit_doubt(rows: Rows, sel: np.ndarray) -> Doubt:
    """The two ask models on rows ``sel`` (see the module docstring)."""
    X = rows.X[sel]
    trees = fit_gbdt(X, rows.retrieval[sel], names=ASK_NAMES)
    logistic = fit_logistic(X, rows.broad[sel], l2=L2, names=ASK_NAMES)
    return Doubt((ranked(trees, X), ranked(logistic, X)))


def ranked(model: Model, train_rows: np.ndarray) -> Ranked:
    """``model`` with the quantiles (``LEVELS`` of them) of its probability over ``train_rows`` of each language
    (row 0: the non-Chinese turns, row 1: the Chinese ones; a language without rows takes every row's)."""
    p = model.proba(train_rows)
    lang = _lang_of(train_rows)
    qs = []
    for k in (0, 1):
        mine = p[lang == k]
        q = np.quantile(mine if len(mine) else p, np.linspace(0.0, 1.0, LEVELS))
        qs.append(np.maximum.accumulate(q))
    return Ranked(model, np.vstack(qs), columns(model.names, ASK_NAMES))


def fit_ask(rows: Rows, folds: int = FOLDS) -> dict[str, Any]:
    """The ``ask`` section of the model file: the full fit and one per fold."""
    every = np.ones(len(rows.fold), dtype=bool)
    return {"full": fit_doubt(rows, every).to_dict(),
            "folds": [fit_doubt(rows, rows.fold != k).to_dict() for k in range(folds)],
            "labels": {"retrieval": f"human rewrite recall@{TOP_K} above the offline answer's (BM25, the file's own "
                                    "retrieval task)",
                       "broad": f"retrieval, or the offline answer misses human-added words of scaled IDF mass >= "
                                f"{MISS_MASS}"},
            "rows": int(len(rows.fold)), "positives": {"retrieval": int(rows.retrieval.sum()),
                                                       "broad": int(rows.broad.sum())}}


def out_of_fold(rows: Rows, ask: Mapping[str, Any]) -> np.ndarray:
    """Every row's confidence by the fold model that never saw it."""
    fold_models = [Doubt.from_dict(f) for f in ask["folds"]]
    out = np.zeros(len(rows.fold))
    for k, m in enumerate(fold_models):
        idx = np.flatnonzero(rows.fold == k)
        if len(idx):
            out[idx] = np.mean([r.confidence(rows.X[idx]) for r in m.models], axis=0)
    return out


def ranking_table(rows: Rows, conf: np.ndarray, share: float = 0.4) -> str:
    """Markdown: per training file, its turns, how many retrieve better with the human rewrite, and how many of
    those are among the ``share`` most doubtful turns of the file (out of fold)."""
    out = [f"| file | turns | human retrieves better | of them in the {share:.0%} most doubtful (out of fold) |",
           "|---|---:|---:|---:|"]
    names = list(dict.fromkeys(rows.file))
    files = np.array(rows.file)
    for name in names:
        idx = np.flatnonzero(files == name)
        pos = rows.retrieval[idx].astype(bool)
        cut = np.quantile(conf[idx], share) if len(idx) else 0.0
        caught = int(np.sum(pos & (conf[idx] <= cut)))
        out.append(f"| {name} | {len(idx)} | {int(pos.sum())} | {caught} ({100 * caught / max(1, pos.sum()):.0f}%) |")
    return "\n".join(out) + "\n"


__all__ = ["MISS_MASS", "Rows", "file_rows", "fit_ask", "fit_doubt", "out_of_fold", "ranked", "ranking_table",
           "training_rows"]
