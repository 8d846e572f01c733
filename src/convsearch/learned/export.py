"""Write the model file the ``learned`` rewriter loads (``convsearch/models/learned.json``) and its card.

The file holds the gate and term selector fitted on every training turn (``full``) and the 5 fold models
(``folds[k]``: fitted without the dialogs of fold k, ``learned.data.fold_of``), each with the IDF table of its own
training text, pruned to the words of at least ``MIN_DF`` distinct texts (a word seen once is scored as an unseen
word: the fits below use the pruned table, so training and inference read the same numbers). Beside them: the
licence (CANARD is CC BY-SA 4.0, so the file is), the attribution of every set, the training files by set (the
evaluation reads them to score a training record with the model that never saw its dialog: ``learned.oof``), the
window, the fold count and the command. JSON with sorted keys: two runs on one machine give the same bytes.

``python -m convsearch.learned.export [--data ../shared/data] [--out src/convsearch/models]`` (``make train`` runs
it after ``learned.train``): reads the training sets as ``learned.train`` does and calls ``write_models``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .data import DATA_ROOT, FOLDS, TRAIN_SETS, WINDOW, by_fold, load_set
from .features import CANDIDATE_NAMES, TURN_NAMES, IdfTable
from .model import fit_logistic
from .train import GATE_THRESHOLD, L2, best_threshold, design, prepare

MIN_DF = 2
LICENSE = "CC BY-SA 4.0"
MODEL_FILE = "learned.json"
CARD_FILE = "MODEL_CARD.md"


def pruned(idf: IdfTable, min_df: int = MIN_DF) -> IdfTable:
    """``idf`` without the words of fewer than ``min_df`` texts (they score as unseen words)."""
    return IdfTable(idf.n_docs, {w: n for w, n in idf.df.items() if n >= min_df})


def fit_fold(p: Any, train: np.ndarray, *, min_df: int = MIN_DF) -> dict[str, Any]:
    """The gate and term selector fitted on turns ``train`` of ``p`` (a ``train.Prepared``) with the pruned IDF
    table of their text, as ``train.fit`` fits them (same L2, labels, rows and threshold search)."""
    idf = pruned(IdfTable.build(p.texts(train.tolist())), min_df)
    G, C, owner = design(p, idf)
    gate = fit_logistic(G[train], p.gate_y[train], l2=L2, names=TURN_NAMES)
    in_train = np.zeros(len(p.turns), dtype=bool)
    in_train[train] = True
    rows = in_train[owner] & p.gate_y[owner]
    ty = np.concatenate(p.term_y) if p.term_y else np.zeros(0, dtype=bool)
    term = fit_logistic(C[rows], ty[rows], l2=L2, names=CANDIDATE_NAMES)
    threshold = best_threshold(term.proba(C[rows]), ty[rows])
    return {"gate": gate.to_dict(), "gate_threshold": GATE_THRESHOLD, "term": term.to_dict(),
            "term_threshold": threshold, "idf": idf.to_dict()}


def model_dict(p: Any, *, folds: int = FOLDS, min_df: int = MIN_DF, command: str = "") -> dict[str, Any]:
    """Everything the model file holds (see the module docstring)."""
    fold = np.array(by_fold(p.turns, folds))
    return {
        "format": 1, "license": LICENSE, "window": WINDOW, "fold_count": folds, "min_df": min_df,
        "command": command,
        "attribution": {ds.name: f"{ds.attribution}; licence {ds.license}" for ds in TRAIN_SETS},
        "train_files": {ds.name: list(ds.files) for ds in TRAIN_SETS},
        "turns": {ds.name: sum(t.dataset == ds.name for t in p.turns) for ds in TRAIN_SETS},
        "full": fit_fold(p, np.arange(len(p.turns)), min_df=min_df),
        "folds": [fit_fold(p, np.flatnonzero(fold != k), min_df=min_df) for k in range(folds)],
    }


def dumps(d: dict[str, Any]) -> str:
    return json.dumps(d, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def card(d: dict[str, Any], sha: str, scores_md: str = "") -> str:
    """The model card (markdown) of model dict ``d`` whose file has sha256 ``sha``."""
    sets = "\n".join(f"- **{name}** ({d['turns'][name]} turns): {', '.join(files)}; {d['attribution'][name]}"
                     for name, files in d["train_files"].items())
    full = d["full"]
    return f"""# The learned gate and term selector shipped with convsearch (`learned.json`)

Licence of the model file: **{d['license']}** (it derives from CANARD, CC BY-SA 4.0: share-alike). Rebuild:
`{d['command']}` (deterministic; sha256 of `{MODEL_FILE}`: `{sha}`). Built {time.strftime('%Y-%m-%d', time.gmtime())}.
Read by `convsearch.learned.resolver` (`--rewriter learned`); docs/LEARNED.md says how it combines with the rules.

## Data (training only; the sets conv-rewrite-train/README.md allows)
{sets}

Never fitted on: Restoration-200K, Su 2019, MuDoCo, search-followups (evaluation only). CrossWOZ labels are weak
(derived from dialog acts); its validation and test splits are trained on.

## What the file holds
- `full`: the gate and term selector fitted on every training turn (what the rewriter uses on new conversations);
- `folds[0..{d['fold_count'] - 1}]`: the same fitted without the dialogs of fold k (SHA-1 of the dialog name mod
  {d['fold_count']}), for out-of-fold evaluation of training records (`learned.oof`);
- each with its own IDF table (words of at least {d['min_df']} distinct training texts; the full model's table:
  {len(full['idf']['df'])} words of {full['idf']['n_docs']} texts).

Models: logistic regression (L2 on standardised features, Newton's method), numpy only. Gate threshold
{full['gate_threshold']}; term threshold {full['term_threshold']} (best F1 on the training rows).

Turn features ({len(full['gate']['names'])}): {', '.join(full['gate']['names'])}.

Candidate features ({len(full['term']['names'])}): {', '.join(full['term']['names'])}.

## Out-of-fold scores
{scores_md or 'See docs/LEARNED.md (restoration, gate and exact match per set, out of fold).'}
"""


def write_models(p: Any, out: Path, *, command: str, scores_md: str = "", min_df: int = MIN_DF) -> str:
    """Write ``learned.json`` and ``MODEL_CARD.md`` into ``out``; returns the file's sha256."""
    d = model_dict(p, min_df=min_df, command=command)
    text = dumps(d)
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    out.mkdir(parents=True, exist_ok=True)
    (out / MODEL_FILE).write_text(text, encoding="utf-8")
    (out / CARD_FILE).write_text(card(d, sha, scores_md), encoding="utf-8")
    return sha



OUT = Path(__file__).resolve().parents[1] / "models"
EXPECTED = Path("eval/expected.yaml")


def scores_table(expected: Path = EXPECTED) -> str:
    """Markdown: the ``rewrite/<set>/learned`` rows of the expected-scores file beside the rules' and the copy
    baseline's (restoration F1, EM, BLEU, gate accuracy), as ``convsearch eval regress`` last measured them."""
    import yaml

    if not expected.is_file():
        return ""
    rows = {r["name"]: r["expected"] for r in yaml.safe_load(expected.read_text(encoding="utf-8"))["rows"]}

    def get(name: str, system: str, key: str) -> float | None:
        return next((v for k, v in rows.get(name, {}).items() if k.endswith(f".{system}.{key}")), None)

    out = ["Per dev set, rules / **learned** / copy; sets the model was trained on are scored out of fold (each "
           "record by the fold model that never saw its dialog). From `eval/expected.yaml` (`convsearch eval "
           "regress`).", "", "| set | restoration F1 | EM | BLEU | gate acc |", "|---|---|---|---|---|"]
    for name in rows:
        parts = name.split("/")
        if len(parts) != 3 or parts[0] != "rewrite" or parts[2] != "learned":
            continue
        cells = []
        for key, scale in (("rest_f1", 100), ("em", 100), ("bleu", 1), ("gate_acc", 100)):
            vals = [get(f"rewrite/{parts[1]}/{sy}", sy, key) for sy in ("rules", "learned", "passthrough")]
            r, x, c = ("-" if v is None else f"{v * scale:.1f}" for v in vals)
            cells.append(f"{r} / **{x}** / {c}")
        out.append(f"| {parts[1]} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"

COMMAND = "make train (python -m convsearch.learned.export)"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m convsearch.learned.export", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_ROOT, help="the shared data root (default ../shared/data)")
    ap.add_argument("--out", type=Path, default=OUT, help="where learned.json and MODEL_CARD.md go")
    ap.add_argument("--expected", type=Path, default=EXPECTED,
                    help="the expected-scores file whose learned rows the card shows (default eval/expected.yaml)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    turns = [t for ds in TRAIN_SETS for t in load_set(ds, args.data)]
    p = prepare(turns)
    scores = scores_table(args.expected)
    sha = write_models(p, args.out, command=COMMAND, scores_md=scores)
    print(f"{args.out / MODEL_FILE}: sha256 {sha} ({len(turns)} turns, {time.perf_counter() - t0:.1f} s)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
