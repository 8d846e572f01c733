"""Write the model file the ``learned`` rewriter loads (``src/convsearch/models/learned.json``), its card, and the
fold models the evaluation reads (``research/learned/folds.json.gz``). Training only: ``make train`` runs it.

``learned.json`` holds what inference uses: the gate and term selector fitted on every training turn (``full``),
fitted by ``train.fit`` (the one fitting path: gradient-boosted trees for the gate, logistic regression for the
terms, by default) on the turns ``train.training_turns`` reads (the training sets and the synthetic Chinese ellipsis
turns, ``synth``, in their source dialog's fold), with the IDF table of its training text, pruned to the words of at
least ``MIN_DF`` distinct texts (a word seen once is scored as an unseen word: the fit uses the pruned table, so
training and inference read the same numbers); the ``ask`` section's full fit (``ask_train``: when ``auto`` asks the
LLM); and beside them the licence (CANARD is CC BY-SA 4.0, so the file is), the attribution of every set, the
training files by set (the evaluation reads them to know a training record when it sees one), the window, the fold
count and the command.

``folds.json.gz`` holds the 5 fold models (``folds[k]``: fitted without the dialogs of fold k,
``convsearch.learned.oof.fold_of``) and the ``ask`` section's fold fits (``ask_folds``), with the sha256 of the
``learned.json`` they belong to: ``convsearch eval`` scores a record of a training file with the fold model that
never saw its dialog (``convsearch.learned.oof``). The ``ask`` rows are read out of fold through the resolver's fold
models first (from a scratch file holding both). JSON with sorted keys: two runs on one machine give the same bytes.

``python -m research.learned.export [--data ../shared/data] [--out src/convsearch/models] [--folds
research/learned/folds.json.gz]`` (``make train`` runs it after ``research.learned.train``): reads the training sets as
``train`` does and calls ``write_models``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import one_blas_thread
from .data import DATA_ROOT, FOLDS, TRAIN_SETS, WINDOW
from .synth import SHARE, SUFFIX
from .train import (
    GATE_MODEL,
    KIND_TEXT,
    TERM_MODEL,
    Fitted,
    Prepared,
    cross_validate,
    fit,
    markdown,
    prepare,
    pruned,
    report,
    training_turns,
)

MIN_DF = 2
FORMAT = 3  # 2: the fold models inside the model file; 3: in the fold-models file beside the training code
LICENSE = "CC BY-SA 4.0"
MODEL_FILE = "learned.json"
CARD_FILE = "MODEL_CARD.md"
FOLDS_FILE = Path(__file__).resolve().parent / "folds.json.gz"

__all__ = ["MIN_DF", "fit_models", "model_dict", "pruned", "write_models"]


def fit_models(p: Prepared, train: np.ndarray, *, min_df: int = MIN_DF, gate_model: str = GATE_MODEL,
               term_model: str = TERM_MODEL) -> dict[str, Any]:
    """The gate and term selector ``train.fit`` fits on turns ``train`` of ``p`` (IDF pruned to ``min_df``), as the
    model file stores them."""
    return fit(p, train, gate_model=gate_model, term_model=term_model, min_df=min_df)[0].to_dict()


def model_dict(p: Prepared, *, folds: int = FOLDS, min_df: int = MIN_DF, command: str = "",
               gate_model: str = GATE_MODEL, term_model: str = TERM_MODEL,
               ellipsis: float = SHARE) -> tuple[dict[str, Any], str]:
    """Everything the model file holds (see the module docstring), and the markdown of the fold models' own
    out-of-fold scores (``train.cross_validate``: the fold models are the ones it fits)."""
    fold_fits: list[Fitted] = []
    oof = cross_validate(p, folds, gate_model=gate_model, term_model=term_model, min_df=min_df, fitted=fold_fits)
    oof_md = markdown(report(p, oof), {})
    kinds = {"gate_model": gate_model, "term_model": term_model}
    names = [ds.name for ds in TRAIN_SETS] + [ds.name + SUFFIX for ds in TRAIN_SETS]
    turns = {n: sum(t.dataset == n for t in p.turns) for n in names}
    return {
        "format": FORMAT, "license": LICENSE, "window": WINDOW, "fold_count": folds, "min_df": min_df,
        "command": command, **kinds, "ellipsis_share": ellipsis,
        "attribution": {ds.name: f"{ds.attribution}; licence {ds.license}" for ds in TRAIN_SETS},
        "train_files": {ds.name: list(ds.files) for ds in TRAIN_SETS},
        "turns": {n: c for n, c in turns.items() if c},
        "full": fit_models(p, np.arange(len(p.turns)), min_df=min_df, **kinds),
        "folds": [f.to_dict() for f in fold_fits],
    }, oof_md


def dumps(d: dict[str, Any]) -> str:
    return json.dumps(d, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def card(d: dict[str, Any], sha: str, scores_md: str = "", oof_md: str = "", ask_md: str = "",
         folds_out: Path | None = None) -> str:
    """The model card (markdown) of model dict ``d`` whose file has sha256 ``sha`` (its fold models in
    ``folds_out``)."""
    where = _repo_path(folds_out or FOLDS_FILE)
    sets = "\n".join(f"- **{name}** ({d['turns'].get(name, 0)} turns): {', '.join(files)}; {d['attribution'][name]}"
                     for name, files in d["train_files"].items())
    full = d["full"]
    synth = sum(n for name, n in d["turns"].items() if name.endswith(SUFFIX))
    return f"""# The learned gate and term selector shipped with convsearch (`learned.json`)

Licence of the model file: **{d['license']}** (it derives from CANARD, CC BY-SA 4.0: share-alike). Rebuild:
`{d['command']}` (deterministic; sha256 of `{MODEL_FILE}`: `{sha}`). Built {time.strftime('%Y-%m-%d', time.gmtime())}.
Read by `convsearch.learned.resolver` (`--rewriter learned`, and `auto` when an LLM is configured: `learned.auto`);
docs/LEARNED.md says how it combines with the rules. The training code is `research/learned/` of the repository
(not in the installed package; research/README.md).

## Data (training only; the sets conv-rewrite-train/README.md allows)
{sets}

Never fitted on: Restoration-200K, Su 2019, MuDoCo, search-followups (evaluation only). CrossWOZ labels are weak
(derived from dialog acts); its validation and test splits are trained on.

Synthetic: **{synth}** Chinese ellipsis turns (`crosswoz-zh{SUFFIX}`) made by `research.learned.synth` from the CrossWOZ
turns above ({100 * synth / max(d['turns'].get('crosswoz-zh', 1), 1):.1f}% of CrossWOZ; at most
{d['ellipsis_share']} of it, the data README allows under half): a word the question or the answer before it
repeats from the turn before is left out, the original is the rewrite; each in its source dialog's fold.

## What the file holds (only what inference uses)
- `full`: the gate and term selector fitted on every training turn (what the rewriter uses on new conversations),
  with its IDF table (words of at least {d['min_df']} distinct training texts: {len(full['idf']['df'])} words of
  {full['idf']['n_docs']} texts);
- `ask.full`: when `auto` asks the LLM (below), when the file has it;
- the licence, attribution, training files by set, window and fold count.

Not shipped: the {d['fold_count']} fold models (the same fitted without the dialogs of fold k, SHA-1 of the dialog
name mod {d['fold_count']}, each with its own IDF table) and the `ask` section's fold fits, used only to score
training records out of fold (`convsearch eval`, `learned.oof`): `{where}` of the repository, written by the same
command, tied to this file by its sha256.

All fitted by `research.learned.train.fit` (the same path as `python -m research.learned.train`), numpy only.
Gate: {KIND_TEXT[d['gate_model']]}, threshold {full['gate_threshold']}; Chinese turns: the rules' verdict unless
the gate is sure (p >= {full['zh_rules_margin']} or <= {1 - full['zh_rules_margin']:.1f}; `learned.policy`).
Term selector: {KIND_TEXT[d['term_model']]}, threshold {full['term_threshold']} (best F1 on the training rows).

Turn features ({len(full['gate']['names'])}): {', '.join(full['gate']['names'])}.

Candidate features ({len(full['term']['names'])}): {', '.join(full['term']['names'])}.

## Out-of-fold scores

### The model's own (gate and term selector; the fold models of this file, with their pruned IDF tables)
{oof_md or 'Not computed for this card.'}

### The `learned` rewriter's (restoration, as `convsearch eval regress` measures it)
{scores_md or 'See docs/LEARNED.md (restoration, gate and exact match per set, out of fold).'}
{ask_card(d, ask_md)}"""


def ask_card(d: dict[str, Any], ask_md: str) -> str:
    """The card's section on the ``ask`` models (``learned.ask``), when the file has them."""
    a = d.get("ask")
    if not a:
        return ""
    kinds = [m["model"]["kind"] for m in a["full"]["models"]]
    return f"""
## When `auto` asks the LLM (`ask`: `learned.ask`, fitted by `research.learned.ask_train`)
{a['rows']} turns of the training files' own retrieval tasks (BM25; left out: the turns the rules are sure of and
those with nothing to ask about), each read by the fold models that never saw its dialog. Two models: {kinds[0]} on
the retrieval label
({a['labels']['retrieval']}; {a['positives']['retrieval']} turns) and {kinds[1]} on the broad label
({a['labels']['broad']}; {a['positives']['broad']} turns); a turn's confidence is the mean of its two ranks among
the training turns of its language. Features ({len(a['full']['models'][0]['model']['names'])}): the turn features
above, then {', '.join(n for n in a['full']['models'][0]['model']['names'] if n.startswith('a_'))}.

Out of fold, per training file: how many of the turns on which the human rewrite retrieves better are among the
40% the model doubts most (docs/BENCHMARKS.md, "auto with an oracle", has the calls and recall it buys).

{ask_md}"""


def split(d: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what the shipped file holds: ``d`` without fold models, the fold models: ``folds`` and ``ask_folds``)."""
    shipped = {k: v for k, v in d.items() if k != "folds"}
    if "ask" in d:
        shipped["ask"] = {k: v for k, v in d["ask"].items() if k != "folds"}
    return shipped, {"folds": d["folds"], "ask_folds": d.get("ask", {}).get("folds", [])}


def write_models(p: Prepared, out: Path, *, command: str, scores_md: str = "", min_df: int = MIN_DF,
                 gate_model: str = GATE_MODEL, term_model: str = TERM_MODEL, ellipsis: float = SHARE,
                 ask_root: Path | None = None, folds_out: Path | None = None) -> str:
    """Write ``learned.json`` and ``MODEL_CARD.md`` into ``out`` and the fold models into ``folds_out`` (None: not
    written); returns the model file's sha256. With ``ask_root`` (the shared data root) the file also gets its
    ``ask`` section (``ask_train``): the ask rows read the resolver's models out of fold from a scratch file holding
    the fold models too, and ``out`` is written once, with the section."""
    d, oof_md = model_dict(p, min_df=min_df, command=command, gate_model=gate_model, term_model=term_model,
                           ellipsis=ellipsis)
    out.mkdir(parents=True, exist_ok=True)
    ask_md = ""
    if ask_root is not None:
        import tempfile

        from .ask_train import fit_ask, out_of_fold, ranking_table, training_rows

        # the resolver's models go to a scratch file the ask rows read: an interrupted run leaves the shipped file
        # as it was, never a file without its ask section
        with tempfile.TemporaryDirectory(prefix="convsearch-train-") as tmp:
            path = Path(tmp) / MODEL_FILE
            path.write_text(dumps(d), encoding="utf-8")
            rows = training_rows(ask_root, path, log=True)
            forget(path)
        d["ask"] = fit_ask(rows)
        ask_md = ranking_table(rows, out_of_fold(rows, d["ask"]))
    shipped, folds = split(d)
    text = dumps(shipped)
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    (out / MODEL_FILE).write_text(text, encoding="utf-8")
    if folds_out is not None:
        folds_out.parent.mkdir(parents=True, exist_ok=True)
        text = dumps({"format": 1, "model_sha256": sha, "fold_count": d["fold_count"], **folds}).encode("utf-8")
        # gzip without a timestamp: the same models give the same bytes (2.4 MB of JSON, 0.8 MB compressed)
        folds_out.write_bytes(gzip.compress(text, compresslevel=9, mtime=0) if folds_out.suffix == ".gz" else text)
    (out / CARD_FILE).write_text(card(shipped, sha, scores_md, oof_md, ask_md, folds_out), encoding="utf-8")
    return sha


def forget(path: Path) -> None:
    """Drop a model file this process loaded (``resolver.load_models`` and ``ask.ask_models`` keep one per path), so
    that a file of the same name read later is read anew."""
    from convsearch.learned import ask
    from convsearch.learned.resolver import _LOADED

    _LOADED.pop(path.resolve(), None)
    ask._LOADED.pop(path.resolve(), None)



OUT = Path(__file__).resolve().parents[2] / "src" / "convsearch" / "models"
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

COMMAND = "make train (python -m research.learned.export)"


def _repo_path(path: Path) -> str:
    """``path`` relative to the repository root when it is inside it (the card never names a machine's folders)."""
    root = Path(__file__).resolve().parents[2]
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.name


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m research.learned.export", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_ROOT, help="the shared data root (default ../shared/data)")
    ap.add_argument("--out", type=Path, default=OUT, help="where learned.json and MODEL_CARD.md go")
    ap.add_argument("--folds", type=Path, default=FOLDS_FILE,
                    help="where the fold models go (default research/learned/folds.json.gz)")
    ap.add_argument("--expected", type=Path, default=EXPECTED,
                    help="the expected-scores file whose learned rows the card shows (default eval/expected.yaml)")
    ap.add_argument("--gate-model", choices=sorted(KIND_TEXT), default=GATE_MODEL,
                    help=f"the gate's model kind (default {GATE_MODEL})")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    turns = training_turns(args.data)
    p = prepare(turns)
    scores = scores_table(args.expected)
    sha = write_models(p, args.out, command=COMMAND + (f" --gate-model {args.gate_model}"
                                                       if args.gate_model != GATE_MODEL else ""),
                       scores_md=scores, gate_model=args.gate_model, ask_root=args.data, folds_out=args.folds)
    print(f"{args.out / MODEL_FILE}: sha256 {sha}, fold models in {args.folds} ({len(turns)} turns, "
          f"{time.perf_counter() - t0:.1f} s)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    with one_blas_thread():
        raise SystemExit(main())
