"""When ``auto`` should ask the LLM: a learned doubt over the offline answer (issue 26, item 4).

The resolver's own confidence (how far its gate and selection are from their thresholds) says little about where an
LLM's answer would retrieve better than the offline one: on the folds, the turns on which the human rewrite beats
the offline answer were spread evenly over its bins (docs/BENCHMARKS.md, "auto with an oracle"). This module reads
the turn **with its offline answer** and scores how likely the answer falls short.

**Features** (``ASK_NAMES``): the resolver's turn features (``features.TURN_NAMES``, with the fold model's IDF), then
what the offline answer did with them: the learned gate's probability and margin, the resolver's confidence, whether
the answer changed the question and how many words it added, the three most probable open candidates, how many reach
the term threshold, the most probable open candidate the answer **left out** (and the sum over those), the most
probable one it took in, whether the answer still holds a pronoun, and the share of its words the history holds.

**Two models, one doubt** (fitted by ``research/learned/ask_train.py`` on every training file, out of fold;
this module only reads them):

- gradient-boosted trees on the retrieval label: on the file's own retrieval task (``eval.retrieval_eval``: gold
  passages, or each dialog's own document; BM25), the human rewrite finds more of the relevant ids in its top 10
  than the offline answer;
- logistic regression on a broader label: that, or the offline answer misses words of the human rewrite whose IDF
  mass (each word's scaled IDF, summed) is at least 1 (about one rare word).

Each model's probability is turned into a **rank**: ``confidence`` = the share of training turns the model doubts
more than this one (its stored quantiles; 0 = more doubtful than every training turn). The turn's confidence is the
mean of the two ranks. A threshold ``t`` on it asks on about the ``t`` most doubtful share of turns like the
training ones, whatever the set's base rate; ``auto`` asks where ``confidence < t``.

A model file without the ``ask`` section (older files) keeps the resolver's confidence (``AskWhenUnsure``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..lang import reading
from .alt_models import Model, load_model
from .features import TURN_NAMES, IdfTable, TurnView, featurize
from .resolver import Fitted, Models, columns, margin
from .tokens import content_words, read

EXTRA_NAMES: tuple[str, ...] = (
    "a_gate", "a_gate_margin", "a_confidence", "a_changed", "a_added_words", "a_top1", "a_top2", "a_top3",
    "a_n_selected", "a_missed_max", "a_missed_sum", "a_covered_max", "a_pronoun_left", "a_history_share")
ASK_NAMES: tuple[str, ...] = (*TURN_NAMES, *EXTRA_NAMES)
LEVELS = 201  # stored quantiles per model: the rank of a probability is read off them to 0.005


def ask_row(v: TurnView, gate: float, probs: np.ndarray, f: Fitted, offline: str, confidence: float) -> np.ndarray:
    """The features of one turn and its offline answer (``ASK_NAMES``); ``v, gate, probs, f``: what
    ``Resolver.score`` gave, ``confidence``: the resolver's."""
    g, _ = featurize(v, f.idf)
    q = v.analysis.q
    answer = read(offline)
    open_ = sorted(((float(p), c) for p, c in zip(probs, v.candidates) if not c.in_query), key=lambda pc: -pc[0])
    tops = [p for p, _ in open_[:3]] + [0.0] * max(0, 3 - len(open_))
    missed, covered = [], []
    for p, c in open_:
        words = content_words(c.text)
        (covered if words and any(answer.has(w) for w in words) else missed).append(p)
    qw, ow = content_words(q), content_words(offline)
    history = " ".join(m.content for m in v.analysis.history)
    held = read(history) if history else None
    extra = [gate, margin(gate, f.gate_threshold), confidence, float(offline != q),
             min(len(ow) - len(qw), 8) / 8, *tops, sum(p >= f.term_threshold for p, _ in open_) / 4,
             max(missed, default=0.0), min(sum(missed), 4.0) / 4, max(covered, default=0.0),
             float(reading(v.analysis.lang).has_pronoun(offline)),
             sum(held.has(w) for w in ow) / len(ow) if (ow and held is not None) else 0.0]
    return np.concatenate([g, np.asarray(extra, dtype=np.float64)])


_ZH = TURN_NAMES.index("lang_zh")


def _lang_of(rows: np.ndarray) -> np.ndarray:
    """Per row, 1 for a Chinese turn, 0 for the others (the ``lang_zh`` feature)."""
    return (rows[:, _ZH] > 0.5).astype(int)


@dataclass(frozen=True)
class Ranked:
    """One fitted model and the quantiles of its probability over the training turns of each language (``LEVELS``
    of them; row 0: the non-Chinese turns, row 1: the Chinese ones): a turn is ranked among turns of its language."""

    model: Model
    quantiles: np.ndarray  # (2, LEVELS)
    cols: np.ndarray

    def confidence(self, rows: np.ndarray) -> np.ndarray:
        """The share of training turns of the row's language this model doubts more than each row (1 = less than
        any)."""
        p = self.model.proba(rows[:, self.cols])
        lang = _lang_of(rows)
        levels = np.linspace(0.0, 1.0, self.quantiles.shape[1])
        out = np.empty(len(p))
        for k in (0, 1):
            mine = lang == k
            if mine.any():
                out[mine] = 1.0 - np.interp(p[mine], self.quantiles[k], levels)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "quantiles": [[float(x) for x in q] for q in self.quantiles]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Ranked:
        model = load_model(d["model"])
        return cls(model, np.asarray(d["quantiles"], dtype=np.float64).reshape(2, -1),
                   columns(model.names, ASK_NAMES))


@dataclass(frozen=True)
class Doubt:
    """The ask models of one fold (or the full fit): the turn's confidence is the mean of their ranks."""

    models: tuple[Ranked, ...]

    def confidence(self, row: np.ndarray) -> float:
        rows = row[None, :]
        return float(np.mean([m.confidence(rows)[0] for m in self.models]))

    def to_dict(self) -> dict[str, Any]:
        return {"models": [m.to_dict() for m in self.models]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Doubt:
        return cls(tuple(Ranked.from_dict(m) for m in d["models"]))


@dataclass(frozen=True)
class AskModels:
    """The ``ask`` section of a model file: the full fit and one per fold (fold k never saw fold k's dialogs)."""

    full: Doubt
    folds: tuple[Doubt, ...]

    def pick(self, fold: int | None) -> Doubt:
        """Fold model ``fold`` (never saw that fold's dialogs), or the full fit for None; a fold the section does
        not hold is an error, never the full fit in its place."""
        if fold is None:
            return self.full
        if not 0 <= fold < len(self.folds):
            raise ValueError(f"the model file's ask section has {len(self.folds)} fold models, not fold {fold}")
        return self.folds[fold]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AskModels:
        return cls(Doubt.from_dict(d["full"]), tuple(Doubt.from_dict(f) for f in d.get("folds", ())))


_LOADED: dict[Path, tuple[Models, AskModels | None]] = {}
_LOCK = threading.Lock()


def ask_models(models: Models) -> AskModels | None:
    """The ``ask`` section of a loaded model file, parsed once per loaded file (a file read again is parsed again);
    None when the file has none."""
    got = _LOADED.get(models.path)
    if got is None or got[0] is not models:
        with _LOCK:
            got = _LOADED.get(models.path)
            if got is None or got[0] is not models:
                got = _LOADED[models.path] = (models, AskModels.from_dict(models.ask) if models.ask else None)
    return got[1]


def idf_mass(words: Sequence[str], idf: IdfTable) -> float:
    """The summed scaled IDF of ``words`` (the broader label's measure of what an answer misses)."""
    return float(sum(idf.scaled(w) for w in words))


__all__ = ["ASK_NAMES", "AskModels", "ask_models", "Doubt", "EXTRA_NAMES", "LEVELS", "Ranked", "ask_row", "idf_mass"]
