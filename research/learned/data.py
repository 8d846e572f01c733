"""The training sets a shipped model may learn from, read in place as turns, and a split by dialog into folds.

Which sets qualify is written in ``../shared/data/conv-rewrite-train/README.md`` (licences allow training and
redistributing what is derived): CANARD dev, CamRest676 (GECOR) train + dev, Alexa CQR dev, TREC CAsT 2019 (eval +
train sample) and 2021, TREC iKAT 2023 train and 2024, and the CrossWOZ follow-up labels (zh, weak). The other sets
of ``conv-rewrite/`` are evaluation only: ``EVAL_ONLY`` lists the two this phase scores, and nothing in this package
fits anything on them.

A turn's dialog is its record id without the last ``_<turn>`` part (``C_2d21…_0_q3`` → ``C_2d21…_0``, ``31_3`` →
``31``, ``crosswoz_val_11290_6`` → ``crosswoz_val_11290``), prefixed with the set's name and file; its fold is a
SHA-1 of that name modulo the number of folds: every turn of one conversation lands in one fold, on every machine.

>>> fold_of("canard/C_2d211835213b45588ad5ca868ce7fabd_0") == fold_of("canard/C_2d211835213b45588ad5ca868ce7fabd_0")
True
>>> dialog_of_id("crosswoz_val_11290_6"), dialog_of_id("31_3"), dialog_of_id("solo")
('crosswoz_val_11290', '31', 'solo')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from convsearch.eval.data import EvalRecord, load_records, topic_text
from convsearch.learned.oof import FOLDS, dialog_of_id, fold_of
from convsearch.types import Message
from convsearch.window import history_window

WINDOW = 8  # the pipeline's default history window (Settings.window): the turns the resolver sees
DATA_ROOT = Path("../shared/data")  # relative to the repository root, as eval/expected.yaml reads it


@dataclass(frozen=True, slots=True)
class DataSet:
    """One set: its name in the reports, its files under the data root, licence and attribution (for the card)."""

    name: str
    files: tuple[str, ...]
    license: str
    attribution: str


TRAIN_SETS: tuple[DataSet, ...] = (
    DataSet("canard", ("conv-rewrite/canard/dev.jsonl",), "CC BY-SA 4.0",
            "Elgohary et al., EMNLP 2019 (a model trained on it carries CC BY-SA 4.0)"),
    DataSet("camrest676", ("conv-rewrite/camrest676-gecor/train.jsonl", "conv-rewrite/camrest676-gecor/dev.jsonl"),
            "CC BY 4.0 (annotations)", "Quan et al., EMNLP 2019 (GECOR)"),
    DataSet("alexa-cqr", ("conv-rewrite/alexa-cqr-kvret/dev.jsonl",), "MIT-0", "Rastogi et al., NAACL 2019"),
    DataSet("trec-cast", ("conv-rewrite/trec-cast/cast2019_eval.jsonl",
                          "conv-rewrite/trec-cast/cast2019_train_sample.jsonl",
                          "conv-rewrite/trec-cast/cast2021_eval.jsonl"),
            "MIT (track repository)", "TREC CAsT organisers (2019, 2021)"),
    DataSet("trec-ikat", ("conv-rewrite/trec-ikat/ikat2023_train.jsonl", "conv-rewrite/trec-ikat/ikat2024_test.jsonl"),
            "MIT (track repository)", "TREC iKAT organisers (2023 train, 2024)"),
    DataSet("crosswoz-zh", ("conv-rewrite-train/crosswoz-zh/val.jsonl", "conv-rewrite-train/crosswoz-zh/test.jsonl"),
            "Apache-2.0", "Zhu et al., TACL 2020, CrossWOZ (thu-coai); WEAK labels derived from dialog acts"),
)

# Evaluation only: scored by a model trained on the sets above, never fitted on.
EVAL_ONLY: tuple[DataSet, ...] = (
    DataSet("restoration-200k", ("conv-rewrite/restoration-200k-zh/valid.jsonl",), "none stated", "Pan et al., 2019"),
    DataSet("su2019", ("conv-rewrite/rewrite-su2019-zh/dev.jsonl",), "none stated", "Su et al., ACL 2019"),
)


@dataclass(frozen=True, slots=True)
class Turn:
    """One follow-up turn: the windowed history the resolver sees, the question, the human rewrite, where it
    came from (``dataset``: the set's name, ``dialog``: ``<set>/<file>/<dialog id>``) and its session topic."""

    id: str
    dataset: str
    dialog: str
    lang: str
    history: tuple[Message, ...]
    question: str
    rewrite: str
    topic: str | None = None


def turn_of(record: EvalRecord, dataset: str, *, source: str = "", window: int = WINDOW) -> Turn:
    """A ``Turn`` from a record of the shared JSONL schema (history cut to the last ``window`` messages); its
    dialog is ``<dataset>/<source>/<dialog id>`` (``source``: the file, so two files' ids never meet)."""
    return Turn(record.id, dataset, f"{dataset}/{source}/{dialog_of_id(record.id)}", record.lang,
                history_window(record.messages(), window), record.question, record.rewrite, topic_text(record))


def load_set(ds: DataSet, root: Path = DATA_ROOT, *, limit: int | None = None, window: int = WINDOW) -> list[Turn]:
    """The usable turns of one set (a blank question or rewrite is a known source defect: skipped), file by file
    in the listed order; ``limit`` caps the turns taken from each file (first ones, so whole dialogs mostly)."""
    out: list[Turn] = []
    for name in ds.files:
        for r in load_records(root / name, limit=limit):
            if r.question.strip() and r.rewrite.strip():
                out.append(turn_of(r, ds.name, source=Path(name).stem, window=window))
    return out


def by_fold(turns: Iterable[Turn], folds: int = FOLDS) -> list[int]:
    """The fold of each turn (its dialog's)."""
    return [fold_of(t.dialog, folds) for t in turns]


def split_folds(turns: Sequence[Turn], folds: int = FOLDS) -> list[tuple[list[int], list[int]]]:
    """(train indices, held-out indices) per fold: every turn of a dialog held out together."""
    of = by_fold(turns, folds)
    return [([i for i, f in enumerate(of) if f != k], [i for i, f in enumerate(of) if f == k]) for k in range(folds)]
