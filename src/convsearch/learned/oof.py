"""Honest evaluation of the learned rewriter on its own training sets: each record scored by the fold model that
never saw its dialog.

The rule: **an evaluation on a file in the training pool is always out of fold.** ``fold_map(path, models)`` says
whether ``path`` is one of the model file's training files (``train_files``, matched on the path's tail under the
data root, e.g. ``conv-rewrite/canard/dev.jsonl``) and, when it is, gives the fold of every record's dialog exactly
as training computed it (``data.turn_of``: ``<set>/<file stem>/<dialog id>``, ``data.fold_of``). The rewriter sees
no record ids (the ``Rewriter`` protocol passes history and question), so a turn is found by what it shows: its
question and the contents of its windowed history. Two records that show the same (a first question asked in two
dialogs) and sit in different folds are scored with a fold model that saw neither when there is one
(``FoldMap.fold``), so the rule holds for them too.

>>> FoldMap("canard", {("q", ()): frozenset({2})}).fold((), "q")
2
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..types import Message
from ..window import history_window
from .data import FOLDS, fold_of, turn_of
from .resolver import Models

Key = tuple[str, tuple[str, ...]]


def key_of(history: Sequence[Message], question: str, window: int) -> Key:
    """What identifies a turn to the fold map: the question and the contents of its windowed history."""
    return question, tuple(m.content for m in history_window(history, window))


@dataclass(frozen=True)
class FoldMap:
    """The folds of the records of one training file, by ``key_of``."""

    dataset: str
    folds: Mapping[Key, frozenset[int]]
    window: int = 8
    fold_count: int = FOLDS

    def fold(self, history: Sequence[Message], question: str) -> int | None:
        """The fold model to score this turn with (one that never saw its dialog), or None for a turn not in the
        file (the full model)."""
        seen = self.folds.get(key_of(history, question, self.window))
        if not seen:
            return None
        if len(seen) == 1:
            return next(iter(seen))
        free = [k for k in range(self.fold_count) if k not in seen]
        return free[0] if free else min(seen)


def training_file(path: Path | str, models: Models) -> tuple[str, str] | None:
    """(set name, file under the data root) when ``path`` is one of the model's training files, else None."""
    p = Path(path).as_posix()
    for name, files in models.meta.get("train_files", {}).items():
        for f in files:
            if p == f or p.endswith("/" + f):
                return name, f
    return None


def fold_map(path: Path | str, models: Models) -> FoldMap | None:
    """The ``FoldMap`` of ``path`` when it is a training file of ``models``, else None."""
    from ..eval.data import load_records

    hit = training_file(Path(path).resolve(), models) or training_file(path, models)
    if hit is None:
        return None
    name, f = hit
    count = int(models.meta.get("fold_count", FOLDS))
    folds: dict[Key, set[int]] = {}
    for r in load_records(Path(path)):
        t = turn_of(r, name, source=Path(f).stem, window=models.window)
        k = (t.question, tuple(m.content for m in t.history))
        folds.setdefault(k, set()).add(fold_of(t.dialog, count))
    return FoldMap(name, {k: frozenset(v) for k, v in folds.items()}, models.window, count)


__all__ = ["FoldMap", "fold_map", "key_of", "training_file"]
