"""Honest evaluation of the learned rewriter on its own training sets: each record scored by the fold model that
never saw its dialog. Runs in ``convsearch eval`` (rewrite, retrieval, follow-ups, oracle), never on a search.

The rule: **an evaluation on a file in the training pool is always out of fold.** ``fold_map(path, models)`` says
whether ``path`` is one of the model file's training files (``train_files``, matched on the path's tail under the
data root, e.g. ``conv-rewrite/canard/dev.jsonl``) and, when it is, gives the fold of every record's dialog exactly
as training computes it (the dialog ``<set>/<file stem>/<dialog id>``, ``fold_of``). The rewriter sees no record ids
(the ``Rewriter`` protocol passes history and question), so a turn is found by what it shows: its question and the
contents of its windowed history. Two records that show the same (a first question asked in two dialogs) and sit in
different folds are scored with a fold model that saw neither when there is one (``FoldMap.fold``), so the rule
holds for them too.

**Where the fold models are.** The shipped model file holds what inference uses (the model fitted on every training
turn and the ``ask`` models); the five fold models stay with the training code, in ``FOLD_MODELS``
(``research/learned/folds.json.gz`` of the checkout, written by ``make train`` beside the shipped file, with the
sha256 of the model file it belongs to). ``with_folds(models)`` attaches them; an installed wheel has no such file,
and scoring a training file there fails with one line saying so, never with the full model in their place. A model
file that carries its own ``folds`` (an older file, or a scratch file of the training run) uses those.

>>> FoldMap("canard", {("q", ()): frozenset({2})}).fold((), "q")
2
>>> dialog_of_id("crosswoz_val_11290_6"), dialog_of_id("31_3"), dialog_of_id("solo")
('crosswoz_val_11290', '31', 'solo')
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..types import Message
from ..window import history_window
from .resolver import Fitted, Models

FOLDS = 5
# the checkout's fold models (src/convsearch/learned/oof.py → the repository root); absent from an installed wheel
FOLD_MODELS = Path(__file__).resolve().parents[3] / "research" / "learned" / "folds.json.gz"


def dialog_of_id(record_id: str) -> str:
    """The dialog part of a record id: everything before the last ``_`` (the id itself when it has none)."""
    head, sep, _ = record_id.rpartition("_")
    return head if sep and head else record_id


def fold_of(dialog: str, folds: int = FOLDS) -> int:
    """The fold (0 … folds-1) of a dialog name: SHA-1 of its UTF-8 bytes, as an integer, modulo ``folds``: every turn
    of one conversation lands in one fold, on every machine."""
    return int.from_bytes(hashlib.sha1(dialog.encode("utf-8")).digest()[:8], "big") % folds


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
    source = Path(f).stem
    folds: dict[Key, set[int]] = {}
    for r in load_records(Path(path)):
        k = key_of(r.messages(), r.question, models.window)
        folds.setdefault(k, set()).add(fold_of(f"{name}/{source}/{dialog_of_id(r.id)}", count))
    return FoldMap(name, {k: frozenset(v) for k, v in folds.items()}, models.window, count)


_ATTACHED: dict[tuple[Path, Path], Models] = {}
_LOCK = threading.Lock()


def read_fold_models(path: Path) -> dict[str, Any]:
    """The fold-models file as written by ``make train`` (gzipped JSON when its name ends in .gz)."""
    raw = path.read_bytes()
    return json.loads((gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8"))  # type: ignore[no-any-return]


def with_folds(models: Models, path: Path | str | None = None) -> Models:
    """``models`` with its fold models (and the ``ask`` section's) from the fold-models file ``path`` (default
    ``FOLD_MODELS``), read once per (model file, fold file) for the process; ``models`` itself when its file carries
    its own. A missing file, or one written for another model file (its ``model_sha256``), is a ``ConfigError``."""
    if models.folds:
        return models
    p = Path(path or FOLD_MODELS).resolve()
    key = (models.path, p)
    got = _ATTACHED.get(key)
    if got is not None and got.sha256 == models.sha256:
        return got
    with _LOCK:
        if not p.is_file():
            raise ConfigError(f"scoring a training file out of fold needs the fold models, {p}, which is not there "
                              "(a checkout has it; `make train` writes it)")
        d = read_fold_models(p)
        if d.get("model_sha256") != models.sha256:
            raise ConfigError(f"{p} holds the fold models of another model file (sha256 "
                              f"{str(d.get('model_sha256'))[:12]}…, not {models.sha256[:12]}… of {models.path}): "
                              "run `make train` to rebuild both")
        ask = {**models.ask, "folds": d.get("ask_folds", [])} if models.ask else None
        got = _ATTACHED[key] = replace(models, folds=tuple(Fitted.from_dict(f) for f in d["folds"]), ask=ask)
    return got


__all__ = ["FOLDS", "FOLD_MODELS", "FoldMap", "dialog_of_id", "fold_map", "fold_of", "key_of", "read_fold_models",
           "training_file", "with_folds"]
