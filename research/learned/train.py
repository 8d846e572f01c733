"""Fit the learned gate and term selector by dialog-split cross-validation and report out-of-fold scores.

``python -m research.learned.train [--data ../shared/data] [--out DIR]`` (``make train``): reads the licensed
training sets (``learned.data.TRAIN_SETS``), reads every turn once (``features.view``), then for each of the 5 folds
builds the IDF table from the other folds' text, fits (a) the gate, a logistic regression on the turn vector whose
label is "the human rewrote", and (b) the term selector, a logistic regression on the candidate rows of the turns the
human rewrote, whose label is ``labels.needed_term``; the held-out fold is scored with both. The term threshold is
the one that maximises F1 on the fold's own training rows (never the held-out ones); the gate's is 0.5.

Printed: per training set, the out-of-fold gate accuracy / precision / recall / F1 / Brier beside the rules' gate
(``needs_rewrite(...).needed``) on the same turns, and the term precision / recall / F1 beside a rules-shaped
baseline (the conversation's focus, when the query does not name it). Then a model fitted on every fold scores the
evaluation-only sets (``data.EVAL_ONLY``: Restoration-200K valid, Su 2019 dev; whole, tune half and frozen half),
beside the rules and beside the same model fitted on the English sets alone (a fixed diagnostic: does a gate learnt
in English carry over to Chinese chit-chat?); nothing is fitted or chosen on them. With ``--out``: ``report.json``,
``model.json`` (the two models and the IDF table) and ``MODEL_CARD.md``.

Deterministic: fixed folds (SHA-1 of the dialog), a Newton fit from zero, turns in file order.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from convsearch.eval.data import load_records
from convsearch.eval.metrics import gate_from_flags, prf
from convsearch.eval.split import dialog_key, half_of_dialog
from convsearch.learned.alt_models import Model
from convsearch.learned.features import CANDIDATE_NAMES, TURN_NAMES, IdfTable, TurnView, featurize, view
from convsearch.learned.policy import ZH_MARGIN, gate_verdicts

from . import one_blas_thread
from .data import DATA_ROOT, EVAL_ONLY, FOLDS, TRAIN_SETS, WINDOW, DataSet, Turn, by_fold, load_set, turn_of
from .fit import fit_gbdt, fit_logistic, fit_mlp
from .labels import needed_term, needs_rewrite
from .synth import SHARE, SUFFIX, base_set, ellipsis_set

L2 = 1.0
GATE_THRESHOLD = 0.5
MODELS = ("logistic", "gbdt", "mlp")
GATE_MODEL = "gbdt"  # the gate's model (learned.model / learned.alt_models), chosen out of fold
TERM_MODEL = "logistic"  # the term selector's
_THRESHOLDS = np.round(np.arange(0.05, 0.96, 0.05), 2)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Prepared:
    """Every turn read once, with its labels."""

    turns: list[Turn]
    views: list[TurnView]
    gate_y: np.ndarray  # the human rewrote
    rules: np.ndarray  # the rules' gate said rewrite
    term_y: list[np.ndarray]  # per turn: the candidates the rewrite needs

    def texts(self, idx: Sequence[int]) -> list[str]:
        """The text the turns ``idx`` show the resolver (history and question), for an IDF table."""
        out: list[str] = []
        for i in idx:
            out.extend(m.content for m in self.turns[i].history)
            out.append(self.turns[i].question)
        return out


def training_turns(root: Path = DATA_ROOT, *, limit: int | None = None, ellipsis: float = SHARE,
                   log: bool = False) -> list[Turn]:
    """The turns every fit reads: the training sets (``TRAIN_SETS``) in file order, and after CrossWOZ its synthetic
    ellipsis turns (``learned.synth``, at most ``ellipsis`` of it; 0: none)."""
    turns: list[Turn] = []
    for ds in TRAIN_SETS:
        got = load_set(ds, root, limit=limit)
        if log:
            _log(f"{ds.name}: {len(got)} turns")
        turns.extend(got)
        if ellipsis > 0 and ds.name == "crosswoz-zh":
            made = ellipsis_set(got, ellipsis)
            if log:
                _log(f"{ds.name}{SUFFIX}: {len(made)} synthetic turns ({100 * len(made) / len(got):.1f}% of the set)")
            turns.extend(made)
    return turns


def prepare(turns: list[Turn]) -> Prepared:
    views, gate_y, rules, term_y = [], [], [], []
    for t in turns:
        v = view(t.history, t.question, t.topic)
        views.append(v)
        gate_y.append(needs_rewrite(t.question, t.rewrite))
        rules.append(v.decision.needed)
        term_y.append(np.array([needed_term(c.text, t.question, t.rewrite) for c in v.candidates], dtype=bool))
    return Prepared(turns, views, np.array(gate_y, dtype=bool), np.array(rules, dtype=bool), term_y)


def design(p: Prepared, idf: IdfTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gate rows, candidate rows, the turn of each candidate row) of every turn under ``idf``."""
    gates, cands, owner = [], [], []
    for i, v in enumerate(p.views):
        g, c = featurize(v, idf)
        gates.append(g)
        cands.append(c)
        owner.append(np.full(len(c), i))
    return (np.vstack(gates), np.vstack(cands) if cands else np.zeros((0, len(CANDIDATE_NAMES))),
            np.concatenate(owner).astype(int))


def best_threshold(prob: np.ndarray, y: np.ndarray) -> float:
    """The threshold of ``_THRESHOLDS`` with the best F1 on (prob, y); the lowest on a tie."""
    best, best_f = 0.5, -1.0
    for t in _THRESHOLDS:
        pred = prob >= t
        f = prf(int(np.sum(pred & y)), int(np.sum(pred)), int(np.sum(y))).f1
        if f > best_f + 1e-12:
            best, best_f = float(t), f
    return best


@dataclass
class Fitted:
    gate: Model
    term: Model
    term_threshold: float
    idf: IdfTable

    def to_dict(self) -> dict[str, Any]:
        return {"gate": self.gate.to_dict(), "gate_threshold": GATE_THRESHOLD, "zh_rules_margin": ZH_MARGIN,
                "term": self.term.to_dict(),
                "term_threshold": self.term_threshold, "idf": self.idf.to_dict(), "window": WINDOW}


def fit_model(kind: str, X: np.ndarray, y: np.ndarray, names: Sequence[str], l2: float = L2) -> Model:
    """One model of ``kind`` (``MODELS``) on rows ``X``, labels ``y``."""
    if kind == "logistic":
        return fit_logistic(X, y, l2=l2, names=names)
    if kind == "gbdt":
        return fit_gbdt(X, y, names=names)
    if kind == "mlp":
        return fit_mlp(X, y, names=names)
    raise ValueError(f"unknown model {kind!r}: one of {', '.join(MODELS)}")


def pruned(idf: IdfTable, min_df: int) -> IdfTable:
    """``idf`` without the words of fewer than ``min_df`` texts (they score as unseen words)."""
    if min_df <= 1:
        return idf
    return IdfTable(idf.n_docs, {w: n for w, n in idf.df.items() if n >= min_df})


def fit(p: Prepared, train: np.ndarray, l2: float = L2, *, gate_model: str = GATE_MODEL,
        term_model: str = TERM_MODEL, min_df: int = 1) -> tuple[Fitted, np.ndarray, np.ndarray, np.ndarray]:
    """Fit on the turns ``train``; also return every turn's design under this fit's IDF (gate, cands, owner).
    ``min_df``: the IDF table keeps only the words of at least this many distinct training texts (the others score
    as unseen words, in the fit as at inference); 1 keeps every word."""
    idf = pruned(IdfTable.build(p.texts(train.tolist())), min_df)
    G, C, owner = design(p, idf)
    gate = fit_model(gate_model, G[train], p.gate_y[train], TURN_NAMES, l2)
    in_train = np.zeros(len(p.turns), dtype=bool)
    in_train[train] = True
    rows = in_train[owner] & p.gate_y[owner]
    ty = np.concatenate(p.term_y) if p.term_y else np.zeros(0, dtype=bool)
    term = fit_model(term_model, C[rows], ty[rows], CANDIDATE_NAMES, l2)
    threshold = best_threshold(term.proba(C[rows]), ty[rows])
    return Fitted(gate, term, threshold, idf), G, C, owner


def cross_validate(p: Prepared, folds: int = FOLDS, l2: float = L2, *, gate_model: str = GATE_MODEL,
                   term_model: str = TERM_MODEL, min_df: int = 1,
                   fitted: list[Fitted] | None = None) -> dict[str, np.ndarray]:
    """Out-of-fold gate probabilities and term predictions (each turn scored by the fold that did not see it).
    ``fitted``: a list that receives fold k's models at index k (the shipped file's fold models)."""
    fold = np.array(by_fold(p.turns, folds))
    gate_p = np.zeros(len(p.turns))
    term_p = np.zeros(sum(len(y) for y in p.term_y))
    term_pred = np.zeros(len(term_p), dtype=bool)
    thresholds = []
    for k in range(folds):
        t0 = time.perf_counter()
        train = np.flatnonzero(fold != k)
        f, G, C, owner = fit(p, train, l2, gate_model=gate_model, term_model=term_model, min_df=min_df)
        if fitted is not None:
            fitted.append(f)
        held = fold == k
        gate_p[held] = f.gate.proba(G[held])
        rows = held[owner]
        term_p[rows] = f.term.proba(C[rows])
        term_pred[rows] = term_p[rows] >= f.term_threshold
        thresholds.append(f.term_threshold)
        _log(f"fold {k}: {int(held.sum())} held-out turns, term threshold {f.term_threshold:.2f} "
             f"({time.perf_counter() - t0:.1f} s)")
    return {"gate_p": gate_p, "term_p": term_p, "term_pred": term_pred, "term_thresholds": np.array(thresholds)}


# Gate feature groups for --ablation: the rules' own verdict, and everything else (the Analysis's facts, IDF).
RULES_COLUMNS = tuple(i for i, n in enumerate(TURN_NAMES) if n.startswith(("rules_", "kind_")))
ABLATIONS = {"all features": tuple(range(len(TURN_NAMES))), "the rules' verdict only": RULES_COLUMNS,
             "without the rules' verdict": tuple(i for i in range(len(TURN_NAMES)) if i not in RULES_COLUMNS)}


def gate_ablation(p: Prepared, folds: int = FOLDS, l2: float = L2) -> dict[str, dict[str, float]]:
    """Out-of-fold gate accuracy per training set for each column group of ``ABLATIONS`` (same folds, same IDF)."""
    fold = np.array(by_fold(p.turns, folds))
    probs = {name: np.zeros(len(p.turns)) for name in ABLATIONS}
    for k in range(folds):
        train = np.flatnonzero(fold != k)
        G, _, _ = design(p, IdfTable.build(p.texts(train.tolist())))
        held = fold == k
        for name, cols in ABLATIONS.items():
            c = list(cols)
            m = fit_logistic(G[train][:, c], p.gate_y[train], l2=l2)
            probs[name][held] = m.proba(G[held][:, c])
    # leave one set out: fitted on the other sets only (how far a gate learnt elsewhere carries to a new domain)
    loso = np.zeros(len(p.turns))
    sets = np.array([base_set(t.dataset) for t in p.turns])  # a synthetic set leaves with its source
    for ds in TRAIN_SETS:
        train = np.flatnonzero(sets != ds.name)
        G, _, _ = design(p, IdfTable.build(p.texts(train.tolist())))
        held = sets == ds.name
        loso[held] = fit_logistic(G[train], p.gate_y[train], l2=l2).proba(G[held])
    out: dict[str, dict[str, float]] = {}
    for ds_name in [d.name for d in TRAIN_SETS] + ["all"]:
        sel = np.array([(ds_name == "all" and not t.dataset.endswith(SUFFIX)) or t.dataset == ds_name
                        for t in p.turns])
        out[ds_name] = {"rules": float(np.mean(p.rules[sel] == p.gate_y[sel])),
                        **{name: float(np.mean((probs[name][sel] >= GATE_THRESHOLD) == p.gate_y[sel]))
                           for name in ABLATIONS},
                        "leave this set out": float(np.mean((loso[sel] >= GATE_THRESHOLD) == p.gate_y[sel]))}
    return out


def _gate_row(pred: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    s = gate_from_flags(pred.tolist(), gold.tolist())
    return {"accuracy": s.accuracy, "precision": s.precision, "recall": s.recall, "f1": s.f1}


def _ece(prob: np.ndarray, gold: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error over equal-width probability bins."""
    edges = np.minimum((prob * bins).astype(int), bins - 1)
    return float(sum(abs(prob[edges == b].mean() - gold[edges == b].mean()) * np.sum(edges == b)
                     for b in range(bins) if np.any(edges == b)) / len(prob))


def _term_row(pred: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    s = prf(int(np.sum(pred & gold)), int(np.sum(pred)), int(np.sum(gold)))
    return {"precision": s.precision, "recall": s.recall, "f1": s.f1}


def report(p: Prepared, oof: dict[str, np.ndarray]) -> dict[str, Any]:
    """The out-of-fold scores per training set (and over all, zh, en)."""
    owner = np.concatenate([np.full(len(y), i) for i, y in enumerate(p.term_y)]).astype(int)
    ty = np.concatenate(p.term_y)
    focus = np.concatenate([np.array([c.is_focus and not c.in_query for c in v.candidates], dtype=bool)
                            for v in p.views])
    rules_term = focus & p.rules[owner]
    groups: dict[str, np.ndarray] = {}
    names = [ds.name for ds in TRAIN_SETS] + [ds.name + SUFFIX for ds in TRAIN_SETS]
    for name in names:
        groups[name] = np.array([t.dataset == name for t in p.turns])
    # (the report's rows per trained language: real turns only, the synthetic ones have their own row)
    real = np.array([not t.dataset.endswith(SUFFIX) for t in p.turns])
    groups["all (en)"] = real & np.array([t.lang != "zh" for t in p.turns])
    groups["all (zh)"] = real & np.array([t.lang == "zh" for t in p.turns])
    groups["all"] = real
    zh = np.array([t.lang == "zh" for t in p.turns])
    out: dict[str, Any] = {}
    for name, sel in groups.items():
        if not sel.any():
            continue
        gold = p.gate_y[sel]
        prob = oof["gate_p"][sel]
        rows = sel[owner] & p.gate_y[owner]
        needed_turns = np.flatnonzero(sel & p.gate_y)
        covered = sum(bool(p.term_y[i].any()) for i in needed_turns)
        out[name] = {
            "turns": int(sel.sum()), "rewritten": float(gold.mean()),
            "rules_gate": _gate_row(p.rules[sel], gold),
            "combined_gate": _gate_row(gate_verdicts(prob, p.rules[sel], zh[sel]), gold),
            "learned_gate": {**_gate_row(prob >= GATE_THRESHOLD, gold), "brier": float(np.mean((prob - gold) ** 2)),
                             "ece": _ece(prob, gold.astype(float))},
            "term_candidates": int(rows.sum()), "term_positives": int(ty[rows].sum()),
            "term_coverage": covered / len(needed_turns) if len(needed_turns) else 0.0,
            "learned_terms": _term_row(oof["term_pred"][rows], ty[rows]),
            "rules_focus_terms": _term_row(rules_term[rows], ty[rows]),
        }
    return out


def load_eval_only(ds: DataSet, root: Path) -> tuple[list[Turn], list[str]]:
    """The turns of an evaluation-only set and the half (tune / frozen, ``eval.split``) of each."""
    turns, halves = [], []
    for name in ds.files:
        for r in load_records(root / name):
            if r.question.strip() and r.rewrite.strip():
                turns.append(turn_of(r, ds.name, source=Path(name).stem))
                halves.append(half_of_dialog(dialog_key(r.history, r.question)))
    return turns, halves


def score_eval_only(models: dict[str, Fitted], root: Path) -> dict[str, Any]:
    """Gate scores of the rules and of each model on the evaluation-only sets (whole, tune half, frozen half)."""
    out: dict[str, Any] = {}
    for ds in EVAL_ONLY:
        turns, halves = load_eval_only(ds, root)
        p = prepare(turns)
        probs = {name: f.gate.proba(design(p, f.idf)[0]) for name, f in models.items()}
        zh = np.array([t.lang == "zh" for t in p.turns])
        per: dict[str, Any] = {}
        for half in ("all", "tune", "frozen"):
            sel = np.array([half == "all" or h == half for h in halves])
            per[half] = {"turns": int(sel.sum()), "rewritten": float(p.gate_y[sel].mean()),
                         "rules_gate": _gate_row(p.rules[sel], p.gate_y[sel]),
                         **{name: _gate_row(prob[sel] >= GATE_THRESHOLD, p.gate_y[sel])
                            for name, prob in probs.items()},
                         "combined_gate": _gate_row(gate_verdicts(probs["learned_gate"][sel], p.rules[sel],
                                                                  zh[sel]), p.gate_y[sel])}
        out[ds.name] = per
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def markdown(oof: dict[str, Any], eval_only: dict[str, Any]) -> str:
    lines = ["Out-of-fold (5 folds by dialog); gate: accuracy / precision / recall; terms: precision / recall / F1 on "
             "the candidates of the turns the human rewrote", "",
             "| set | turns | rewritten % | rules gate acc / P / R | learned gate acc / P / R / F1 | Brier / ECE | "
             "combined gate acc (zh: rules unless sure) | term coverage % | learned terms P / R / F1 | "
             "focus baseline P / R / F1 |",
             "|---|---:|---:|---|---|---|---:|---:|---|---|"]
    for name, r in oof.items():
        rg, lg, lt, ft = r["rules_gate"], r["learned_gate"], r["learned_terms"], r["rules_focus_terms"]
        lines.append(f"| {name} | {r['turns']} | {_pct(r['rewritten'])} | {_pct(rg['accuracy'])} / "
                     f"{_pct(rg['precision'])} / {_pct(rg['recall'])} | {_pct(lg['accuracy'])} / "
                     f"{_pct(lg['precision'])} / {_pct(lg['recall'])} / {_pct(lg['f1'])} | "
                     f"{lg['brier']:.3f} / {lg['ece']:.3f} | {_pct(r['combined_gate']['accuracy'])} | "
                     f"{_pct(r['term_coverage'])} | {_pct(lt['precision'])} / {_pct(lt['recall'])} / "
                     f"{_pct(lt['f1'])} | {_pct(ft['precision'])} / {_pct(ft['recall'])} / {_pct(ft['f1'])} |")
    if not eval_only:  # (the shipped card: the evaluation-only sets are scored by `make train`'s report)
        return "\n".join(lines) + "\n"
    lines += ["", "Evaluation only (a model fitted on every training fold; nothing fitted or chosen here); gate "
              "accuracy / precision / recall", "",
              "| set | half | turns | rewritten % | rules gate | learned gate | learned gate, English sets only | "
              f"combined: rules unless the learned gate is sure (margin {ZH_MARGIN}) |",
              "|---|---|---:|---:|---|---|---|---|"]
    for name, per in eval_only.items():
        for half, r in per.items():
            cells = " | ".join(f"{_pct(g['accuracy'])} / {_pct(g['precision'])} / {_pct(g['recall'])}"
                               for g in (r["rules_gate"], r["learned_gate"], r["learned_gate_en"],
                                         r["combined_gate"]))
            lines.append(f"| {name} | {half} | {r['turns']} | {_pct(r['rewritten'])} | {cells} |")
    return "\n".join(lines) + "\n"


KIND_TEXT = {"logistic": f"logistic regression (L2 = {L2} on standardised features, Newton's method)",
              "gbdt": "gradient-boosted trees (150 trees of depth 4, rate 0.1, 32 quantile bins; learned.alt_models)",
              "mlp": "an MLP (one tanh layer of 32, Adam, 30 epochs, seed 0; learned.alt_models)"}


def _card(fitted: Fitted, md: str, command: str, counts: dict[str, int], sha: str, kinds: dict[str, str]) -> str:
    sets = "\n".join(f"- {ds.name} ({counts.get(ds.name, 0)} turns): {', '.join(ds.files)}; licence {ds.license}; "
                     f"{ds.attribution}" for ds in TRAIN_SETS)
    synth = counts.get("crosswoz-zh" + SUFFIX, 0)
    return f"""# Learned gate and term selector (issue 26)

Rebuild: `{command}` (deterministic; model.json sha256 {sha}).

## Data
{sets}

The model file derives from CANARD (CC BY-SA 4.0) and so carries CC BY-SA 4.0. CrossWOZ labels are weak (derived
from dialog acts). Evaluation-only sets (Restoration-200K, Su 2019, MuDoCo, search-followups) are never fitted on.

Synthetic: {synth} Chinese ellipsis turns made by `synth` from the CrossWOZ turns above (a word the question
or the answer before it repeats from the turn before is left out; the original is the rewrite), in their source
dialog's fold; {100 * synth / max(counts.get("crosswoz-zh", 1), 1):.1f}% of CrossWOZ (the data README: under half).

## Models
Gate: {KIND_TEXT[kinds["gate_model"]]}. Term selector: {KIND_TEXT[kinds["term_model"]]}. Numpy only at inference.
Chinese turns: the rules' verdict unless the gate is sure (p >= {ZH_MARGIN} or <= {1 - ZH_MARGIN:.1f}; learned.policy,
`zh_rules_margin` in model.json); other languages: the gate at {GATE_THRESHOLD}.
Gate: {len(TURN_NAMES)} turn features, threshold {GATE_THRESHOLD}. Term selector: {len(CANDIDATE_NAMES)} candidate
features (the turn's included), threshold {fitted.term_threshold:.2f} (best F1 on the training rows).
IDF table: {fitted.idf.n_docs} distinct training texts, {len(fitted.idf.df)} words.

Turn features: {", ".join(TURN_NAMES)}.

Candidate features: {", ".join(CANDIDATE_NAMES)}.

## Scores
{md}"""


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m research.learned.train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA_ROOT, help="the shared data root (default ../shared/data)")
    ap.add_argument("--out", type=Path, default=None, help="write report.json, model.json and MODEL_CARD.md here")
    ap.add_argument("--limit", type=int, default=None, help="at most this many turns per file (a quick look)")
    ap.add_argument("--no-eval-only", action="store_true", help="skip the evaluation-only sets")
    ap.add_argument("--ablation", action="store_true", help="also print out-of-fold gate accuracy per feature group")
    ap.add_argument("--gate-model", choices=MODELS, default=GATE_MODEL, help=f"the gate's model (default {GATE_MODEL})")
    ap.add_argument("--term-model", choices=MODELS, default=TERM_MODEL,
                    help=f"the term selector's model (default {TERM_MODEL})")
    ap.add_argument("--ellipsis", type=float, default=SHARE, metavar="SHARE",
                    help=f"synthetic Chinese ellipsis turns made from CrossWOZ (learned.synth), at most this share "
                         f"of it (default {SHARE}; 0: none)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    turns = training_turns(args.data, limit=args.limit, ellipsis=args.ellipsis, log=True)
    p = prepare(turns)
    _log(f"read {len(turns)} turns, {sum(len(y) for y in p.term_y)} candidates ({time.perf_counter() - t0:.1f} s)")
    kinds = {"gate_model": args.gate_model, "term_model": args.term_model}
    oof = report(p, cross_validate(p, **kinds))
    fitted = fit(p, np.arange(len(turns)), **kinds)[0]
    # a diagnostic beside it: the same model fitted on the English sets alone (does the zh gate transfer from en?)
    english = np.flatnonzero(np.array([t.lang != "zh" for t in turns]))  # (the English-only diagnostic's turns)
    eval_only = {} if args.no_eval_only else score_eval_only(
        {"learned_gate": fitted, "learned_gate_en": fit(p, english, **kinds)[0]}, args.data)
    md = markdown(oof, eval_only)
    if args.ablation:
        ab = gate_ablation(p)
        names = ["rules", *ABLATIONS, "leave this set out"]
        md += ("\nGate ablation: out-of-fold accuracy % by feature group (logistic regression, same folds); the last "
               "column fits on the other sets only\n\n| set | "
               + " | ".join(names) + " |\n|---|" + "---:|" * len(names) + "\n"
               + "".join(f"| {ds} | " + " | ".join(_pct(r[n]) for n in names) + " |\n" for ds, r in ab.items()))
    print(md)
    model = json.dumps(fitted.to_dict(), ensure_ascii=False, sort_keys=True)
    sha = hashlib.sha256(model.encode("utf-8")).hexdigest()
    _log(f"model.json sha256 {sha}; {time.perf_counter() - t0:.1f} s in all")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "model.json").write_text(model, encoding="utf-8")
        (args.out / "report.json").write_text(json.dumps({"oof": oof, "eval_only": eval_only}, indent=1,
                                                         sort_keys=True), encoding="utf-8")
        counts = {name: sum(t.dataset == name for t in turns)
                  for ds in TRAIN_SETS for name in (ds.name, ds.name + SUFFIX)}
        command = ("python -m research.learned.train" + (f" --limit {args.limit}" if args.limit else "")
                   + (" --ablation" if args.ablation else "") + (" --no-eval-only" if args.no_eval_only else "")
                   + (f" --ellipsis {args.ellipsis}" if args.ellipsis != SHARE else "")
                   + (f" --gate-model {args.gate_model}" if args.gate_model != GATE_MODEL else "")
                   + (f" --term-model {args.term_model}" if args.term_model != TERM_MODEL else "")
                   + f" --out {args.out}")
        (args.out / "MODEL_CARD.md").write_text(_card(fitted, md, command, counts, sha, kinds), encoding="utf-8")
    return 0


if __name__ == "__main__":
    with one_blas_thread():
        raise SystemExit(main())
