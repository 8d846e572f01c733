"""Out-of-fold comparisons behind the shipped configuration (docs/LEARNED_MODEL.md): data (synthetic Chinese
ellipsis or not), features (the ellipsis shape, the embedder's similarities), model (logistic regression, boosted
trees, an MLP), and the Chinese gate combined with the rules. Not the shipped path: ``research.learned.train`` is.

``python -m research.learned.experiments [--data ../shared/data] [--emb-cache DIR] [--models logistic,gbdt,mlp]``

Every training turn is read once; per fold the IDF table is built from the training folds and the design rebuilt;
every variant is fitted on the same folds (5, by dialog) and scored on the held-out fold. The evaluation-only sets
(Restoration-200K valid, Su 2019 dev) are scored by the variant fitted on every training turn, per half; nothing is
fitted on them. Synthetic turns are scored in their own row and never counted in a real set's row.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from convsearch.eval.metrics import prf
from convsearch.learned.features import _TURN_ELLIPSIS, IdfTable

from . import one_blas_thread
from .data import DATA_ROOT, EVAL_ONLY, TRAIN_SETS, by_fold, load_set
from .fit import fit_gbdt, fit_logistic, fit_mlp
from .semantic import SEM_CAND_NAMES, SEM_TURN_NAMES, embedding_texts, feature_names, featurize_with
from .synth import SHARE, SUFFIX, ellipsis_set
from .train import Prepared, best_threshold, load_eval_only, prepare

FOLDS = 5


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Design:
    G: np.ndarray
    C: np.ndarray
    owner: np.ndarray


def design(p: Prepared, idf: IdfTable, emb: Callable[[list[str]], np.ndarray] | None) -> Design:
    gates, cands, owner = [], [], []
    for i, v in enumerate(p.views):
        e = emb(embedding_texts(v)) if emb is not None else None
        g, c = featurize_with(v, idf, e)
        gates.append(g)
        cands.append(c)
        owner.append(np.full(len(c), i))
    return Design(np.vstack(gates), np.vstack(cands), np.concatenate(owner).astype(int))


Fitter = Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]]


def fitter(kind: str) -> Fitter:
    def fit(X: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        if kind == "logistic":
            return fit_logistic(X, y, l2=1.0).proba
        if kind == "gbdt":
            return fit_gbdt(X, y).proba
        if kind == "mlp":
            return fit_mlp(X, y).proba
        raise ValueError(kind)
    return fit


def _cols(names: Sequence[str], drop: Sequence[str]) -> np.ndarray:
    return np.array([i for i, n in enumerate(names) if n not in set(drop)])


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m research.learned.experiments")
    ap.add_argument("--data", type=Path, default=DATA_ROOT)
    ap.add_argument("--emb-cache", type=Path, default=None, help="an EmbeddingCache folder holding every text")
    ap.add_argument("--models", default="logistic", help="comma list of logistic, gbdt, mlp")
    ap.add_argument("--terms", action="store_true", help="also compare term selection")
    ap.add_argument("--term-models", default=None, help="comma list for term selection (default: --models)")
    ap.add_argument("--gate-only-variants", default=None, help="comma list of substrings: only these gate variants")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--sets", default=None, help="comma list: only these training sets (a subset comparison)")
    ap.add_argument("--no-eval-only", action="store_true", help="skip the evaluation-only sets")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    turns = []
    chosen = [ds for ds in TRAIN_SETS if not args.sets or ds.name in args.sets.split(",")]
    for ds in chosen:
        got = load_set(ds, args.data, limit=args.limit)
        turns.extend(got)
        if ds.name == "crosswoz-zh":
            turns.extend(ellipsis_set(got, SHARE))
    p = prepare(turns)
    evals = {}
    for ds in [] if args.no_eval_only else EVAL_ONLY:
        et, halves = load_eval_only(ds, args.data)
        if args.limit:
            et, halves = et[: args.limit], halves[: args.limit]
        evals[ds.name] = (prepare(et), np.array(halves))
    _log(f"prepared {len(turns)} + {sum(len(e[0].turns) for e in evals.values())} turns "
         f"({time.perf_counter() - t0:.0f} s)")
    emb = None
    if args.emb_cache:
        from .embcache import EmbeddingCache

        cache = EmbeddingCache(args.emb_cache)
        emb = cache.get
    semantic = emb is not None
    turn_names, cand_names = feature_names(semantic)
    fold = np.array(by_fold(p.turns, FOLDS))
    synth = np.array([t.dataset.endswith(SUFFIX) for t in p.turns])
    zh = np.array([t.lang == "zh" for t in p.turns])
    # designs per fold and for the full fit
    designs = []
    for k in range(FOLDS):
        idf = IdfTable.build(p.texts(np.flatnonzero(fold != k).tolist()))
        designs.append(design(p, idf, emb))
    full_idf = IdfTable.build(p.texts(list(range(len(p.turns)))))
    full = design(p, full_idf, emb)
    eval_designs = {name: design(ep, full_idf, emb) for name, (ep, _) in evals.items()}
    _log(f"designs built ({time.perf_counter() - t0:.0f} s)")

    lexical = list(SEM_TURN_NAMES)
    no_ell = lexical + list(_TURN_ELLIPSIS)
    answer_side = np.array([t.id.endswith("~answer") for t in p.turns])
    none, every, answers = ~synth, np.ones(len(synth), dtype=bool), ~synth | answer_side
    gate_variants: list[tuple[str, np.ndarray, np.ndarray, str]] = [
        ("phase 1 (lexical, no synthetic)", _cols(turn_names, no_ell), none, "logistic"),
        ("+ ellipsis features", _cols(turn_names, lexical), none, "logistic"),
        ("+ synthetic ellipsis", _cols(turn_names, no_ell), every, "logistic"),
        ("+ both", _cols(turn_names, lexical), every, "logistic"),
        ("+ ellipsis features + answer-side synthetic only", _cols(turn_names, lexical), answers, "logistic"),
    ]
    if semantic:
        gate_variants += [("lexical + embedder", _cols(turn_names, _TURN_ELLIPSIS), none, "logistic"),
                          ("+ both + embedder", _cols(turn_names, ()), every, "logistic")]
    for kind in args.models.split(","):
        if kind != "logistic":
            gate_variants += [(f"{kind}: lexical, no synthetic", _cols(turn_names, no_ell), none, kind),
                              (f"{kind}: + ellipsis features", _cols(turn_names, lexical), none, kind),
                              (f"{kind}: + both", _cols(turn_names, lexical), every, kind)]
            if semantic:
                gate_variants += [(f"{kind}: + both + embedder", _cols(turn_names, ()), every, kind)]
    if args.gate_only_variants is not None:
        keep = [x for x in args.gate_only_variants.split(",") if x]
        gate_variants = [g for g in gate_variants if any(x in g[0] for x in keep)]
    rows: dict[str, Any] = {}
    for name, cols, use, kind in gate_variants:
        t1 = time.perf_counter()
        oof = np.zeros(len(p.turns))
        for k in range(FOLDS):
            tr = (fold != k) & use
            model = fitter(kind)(designs[k].G[tr][:, cols], p.gate_y[tr])
            oof[fold == k] = model(designs[k].G[fold == k][:, cols])
        tr = use
        model = fitter(kind)(full.G[tr][:, cols], p.gate_y[tr])
        ev = {n: model(d.G[:, cols]) for n, d in eval_designs.items()}
        rows[name] = (oof, ev)
        _log(f"gate {name}: {time.perf_counter() - t1:.0f} s")
    print(gate_table(p, rows, evals, synth))
    print(combination_table(p, rows, evals, synth, zh, only=("+ both",)))
    if args.terms:
        print(term_table(p, designs, fold, synth, cand_names, semantic,
                         (args.term_models or args.models).split(",")))
    _log(f"{time.perf_counter() - t0:.0f} s in all")
    return 0


def _acc(pred: np.ndarray, gold: np.ndarray) -> str:
    return f"{100 * float(np.mean(pred == gold)):.1f}" if len(gold) else "-"


def gate_table(p: Prepared, rows: dict[str, Any], evals: dict[str, Any], synth: np.ndarray) -> str:
    sets = [ds.name for ds in TRAIN_SETS]
    head = ["variant", *sets, "all en", "all zh", "synthetic", *[f"{e} {h}" for e in evals for h in ("tune", "frozen")]]
    out = ["Gate accuracy %, out of fold (training sets) / fitted on all training turns (evaluation-only, per half)",
           "", "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    real = ~synth
    lang = np.array([t.lang for t in p.turns])
    dsn = np.array([t.dataset for t in p.turns])

    def line(name: str, oof: np.ndarray, ev: dict[str, np.ndarray]) -> str:
        cells = [_acc(oof[dsn == s] >= 0.5, p.gate_y[dsn == s]) for s in sets]
        cells += [_acc(oof[real & (lang != "zh")] >= 0.5, p.gate_y[real & (lang != "zh")]),
                  _acc(oof[real & (lang == "zh")] >= 0.5, p.gate_y[real & (lang == "zh")]),
                  _acc(oof[synth] >= 0.5, p.gate_y[synth])]
        for e, (ep, halves) in evals.items():
            for h in ("tune", "frozen"):
                cells.append(_acc(ev[e][halves == h] >= 0.5, ep.gate_y[halves == h]))
        return f"| {name} | " + " | ".join(cells) + " |"

    rules_ev = {e: ep.rules.astype(float) for e, (ep, _) in evals.items()}
    out.append(line("rules", p.rules.astype(float), rules_ev))
    for name, (oof, ev) in rows.items():
        out.append(line(name, oof, ev))
    return "\n".join(out) + "\n"


def combination_table(p: Prepared, rows: dict[str, Any], evals: dict[str, Any], synth: np.ndarray,
                      zh: np.ndarray, only: Sequence[str] = ()) -> str:
    """Chinese turns: the rules' verdict unless the model is sure (p ≥ hi: rewrite; p ≤ lo: keep); English turns:
    the model. Margins fixed in advance (0.9/0.1, 0.8/0.2, 0.95/0.05), not chosen on any score. "both": the model
    overrides the rules either way when sure; "add": it only turns a "keep" of the rules into a rewrite."""
    out = ["Gate accuracy %: Chinese turns take the rules' verdict unless the model is sure (p >= hi or p <= 1-hi)",
           "", "| variant | hi | crosswoz-zh | all en | " + " | ".join(f"{e} {h}" for e in evals
                                                                    for h in ("tune", "frozen")) + " |",
           "|---|---:|---:|---:|" + "---:|" * (2 * len(evals))]
    dsn = np.array([t.dataset for t in p.turns])
    for name, (oof, ev) in rows.items():
        if only and not any(o in name for o in only):
            continue
        for hi, how in ((0.8, "both"), (0.9, "both"), (0.95, "both"), (0.8, "add"), (0.9, "add"), (0.95, "add")):
            def comb(prob: np.ndarray, rules: np.ndarray, is_zh: np.ndarray, hi: float = hi,
                     how: str = how) -> np.ndarray:
                pred = prob >= 0.5
                if how == "both":  # the model overrides the rules either way when sure
                    z = np.where(prob >= hi, True, np.where(prob <= 1 - hi, False, rules))
                else:  # the model only adds rewrites the rules missed
                    z = rules | (prob >= hi)
                return np.where(is_zh, z, pred)
            pred = comb(oof, p.rules, zh)
            cells = [_acc(pred[dsn == "crosswoz-zh"], p.gate_y[dsn == "crosswoz-zh"]),
                     _acc(pred[~zh & ~synth], p.gate_y[~zh & ~synth])]
            for e, (ep, halves) in evals.items():
                pe = comb(ev[e], ep.rules, np.ones(len(ep.turns), dtype=bool))
                for h in ("tune", "frozen"):
                    cells.append(_acc(pe[halves == h], ep.gate_y[halves == h]))
            out.append(f"| {name} | {hi} {how} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _weighted_threshold(prob: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """``train.best_threshold`` with row weights (a subsampled negative counts as the rows it stands for)."""
    best, best_f = 0.5, -1.0
    for t in np.round(np.arange(0.05, 0.96, 0.05), 2):
        pred = prob >= t
        tp, pp, pos = float(np.sum(w[pred & y])), float(np.sum(w[pred])), float(np.sum(w[y]))
        f = 2 * tp / (pp + pos) if pp + pos else 0.0
        if f > best_f + 1e-12:
            best, best_f = float(t), f
    return best


def term_table(p: Prepared, designs: list[Design], fold: np.ndarray, synth: np.ndarray, cand_names: Sequence[str],
               semantic: bool, kinds: Sequence[str]) -> str:
    """Term selection out of fold (candidates of the turns the human rewrote; fitted on the same, synthetic turns
    included in training, scored on real turns only): precision / recall / F1 per set."""
    ty = np.concatenate(p.term_y)
    sem = list(SEM_CAND_NAMES) + list(SEM_TURN_NAMES)
    variants = [(f"{k}: lexical", _cols(cand_names, sem), k) for k in kinds]
    if semantic:
        variants += [(f"{k}: + embedder", _cols(cand_names, ()), k) for k in kinds]
    sets = [ds.name for ds in TRAIN_SETS]
    head = ["variant", *sets, "all"]
    out = ["Term selection, out of fold: precision / recall / F1 % (threshold: best F1 on the fold's training rows)",
           "", "| " + " | ".join(head) + " |", "|---|" + "---|" * (len(head) - 1)]
    owner = designs[0].owner
    dsn = np.array([t.dataset for t in p.turns])[owner]
    pos_turn = p.gate_y[owner]
    real = ~synth[owner]
    for name, cols, kind in variants:
        t1 = time.perf_counter()
        pred = np.zeros(len(ty), dtype=bool)
        for k in range(FOLDS):
            d = designs[k]
            tr = (fold[owner] != k) & pos_turn
            if kind == "gbdt":  # every positive and every 4th negative (weight 4): the trees fit 4x fewer rows
                tr &= ty | (np.arange(len(ty)) % 4 == 0)
                wt = np.where(ty[tr], 1.0, 4.0)
                trees = fit_gbdt(d.C[tr][:, cols], ty[tr], weight=wt, trees=100)
                model = trees.proba
                thr = _weighted_threshold(model(d.C[tr][:, cols]), ty[tr], wt)  # F1 as on every row
            else:
                model = fitter(kind)(d.C[tr][:, cols], ty[tr])
                thr = best_threshold(model(d.C[tr][:, cols]), ty[tr])
            held = (fold[owner] == k)
            pred[held] = model(d.C[held][:, cols]) >= thr
        cells = []
        for s in [*sets, "all"]:
            sel = pos_turn & real & ((dsn == s) | (s == "all"))
            r = prf(int(np.sum(pred[sel] & ty[sel])), int(np.sum(pred[sel])), int(np.sum(ty[sel])))
            cells.append(f"{100 * r.precision:.1f} / {100 * r.recall:.1f} / {100 * r.f1:.1f}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
        _log(f"terms {name}: {time.perf_counter() - t1:.0f} s")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    with one_blas_thread():
        raise SystemExit(main())
