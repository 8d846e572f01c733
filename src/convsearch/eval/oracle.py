"""``auto`` with an oracle: how many LLM calls buy how much retrieval (issue 26, item 4).

The human rewrite of each record stands in for the LLM's answer (``Oracle``: an enhancer of the evaluation, never
of the product path, fed the record before each turn). ``auto`` on the learned rewriter (``learned.auto``) asks the
LLM only where the learned confidence is below its threshold; so for a threshold ``t`` a turn is searched with the
human rewrite when ``auto`` would ask (``Assessed.asks(t)``: the rules are not sure and the confidence is below
``t``) and with the offline (learned) answer otherwise. The oracle's answer skips the LLM guard: the point is the
ceiling an LLM that answers like the annotator would reach, so "the oracle on every turn" is the human row.

Per file (``evaluate_oracle``) the retrieval task is ``retrieval_eval``'s (gold passages, or each dialog's own
document; BM25), every turn is assessed once (out of fold on a training file: the fold models that never saw its
dialog score it) and searched with its raw question, the rules' rewrite, the offline answer and the human rewrite;
the curve mixes the last two per threshold, no search repeated. Rows: raw, rules (0 calls), learned offline (0
calls), the rules' ``auto`` (the LLM wherever the rules' gate sends a turn on and is not sure: ``rules_auto``),
``auto`` at every threshold of ``GRID``, and the oracle on every turn (100 calls per 100 turns); ``shipped``: the
point at the threshold the setting ships with (``learned.auto.UNSURE_BELOW``, a regression row reads it).

**Choosing the threshold on folds** (``choose``): every turn carries the fold of its dialog (``learned.oof.fold_of``:
the fold the learned model held it out of). For each fold k, the threshold is the smallest of ``CHOICE_GRID`` (steps of
0.01) from which on, on the turns of the other four folds of **every** file of the choice, recall@10 stays at most
``MAX_DROP`` (1 point) below the oracle on every turn of those turns, at that threshold and at every larger one
(``pick``); fold k's turns are then scored at that threshold. The held-out point of a file pools its five folds,
each at its own threshold. The threshold to ship is the same rule on all the turns. The choice is made on the
``CHOOSE_ON`` files (iKAT 2023 train, CANARD dev: the target's) or on the training-pool files given; never on an
evaluation-only set (``EVAL_ONLY``: refused by name).

Example::

    rep = evaluate_oracle(load_records(path), index_dir=Path(tmp), data_path=path)
    rep["rows"][-1]   # the oracle on every turn
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConvsearchError
from ..learned.auto import ALWAYS, UNSURE_BELOW, AskWhenUnsure
from ..learned.oof import FOLDS, dialog_of_id, fold_of
from ..learned.rewriter import LearnedRewriter
from ..resolve.rules import RuleRewriter
from ..rewrite.enhance import Enhanced, EnhanceRequest
from .data import EvalRecord, topic_text
from .retrieval_eval import IndexFactory, _search, build_task, local_index

GRID: tuple[float, ...] = tuple(round(i * 0.05, 2) for i in range(21))  # 0, 0.05, …, 1.0: the curve's rows
CHOICE_GRID: tuple[float, ...] = tuple(round(i * 0.01, 2) for i in range(101))  # the thresholds a choice tries
MAX_DROP = 1.0  # points of recall@10 below the oracle on every turn that a chosen threshold may give up
TOP_K = 10


class Oracle:
    """An enhancer standing in for the LLM: answers with the human rewrite it was last fed (``feed``), and counts
    the times it was asked. Evaluation only."""

    name = "oracle"

    def __init__(self) -> None:
        self.answer: str | None = None
        self.calls = 0

    def feed(self, rewrite: str) -> None:
        self.answer = rewrite

    def enhance(self, request: EnhanceRequest) -> Enhanced:
        self.calls += 1
        if self.answer is None:
            return Enhanced(request.query, request.query, "oracle", "oracle: no human rewrite fed", fell_back=True)
        return Enhanced(request.query, self.answer, "oracle", "the human rewrite")

    def close(self) -> None:
        """Nothing to release."""


@dataclass(frozen=True, slots=True)
class TurnScore:
    """One scored turn: its fold, the offline side's confidence and whether ``auto`` may ask at all, and
    recall@10 / reciprocal rank@10 of each query."""

    fold: int
    confidence: float
    askable: bool
    recall: Mapping[str, float]  # raw, rules, offline, human
    rr: Mapping[str, float]
    rules_asks: bool = False  # the rules' ``auto`` calls the LLM here (their gate says rewrite, not sure)

    def asks(self, t: float) -> bool:
        return self.askable and self.confidence < t


def per_query(ranking: Sequence[str], gold: Iterable[str], k: int = TOP_K) -> tuple[float, float]:
    """(recall@k, reciprocal rank@k) of one ranking against a set of relevant ids (binary relevance)."""
    rel = set(gold)
    top = list(dict.fromkeys(ranking))[:k]
    if not rel:
        return 0.0, 0.0
    found = sum(1 for d in top if d in rel)
    rr = next((1.0 / (i + 1) for i, d in enumerate(top) if d in rel), 0.0)
    return found / len(rel), rr


def point(turns: Sequence[TurnScore], t: float | None) -> dict[str, float]:
    """calls per 100 turns, recall@10 and MRR@10 (in points, ×100) of ``auto`` at threshold ``t`` on ``turns``
    (``t=None``: the oracle on every turn)."""
    n = len(turns) or 1
    calls = rec = rr = 0.0
    for s in turns:
        asked = True if t is None else s.asks(t)
        side = "human" if asked else "offline"
        calls += asked
        rec += s.recall[side]
        rr += s.rr[side]
    return {"calls_per_100": 100.0 * calls / n, "recall@10": 100.0 * rec / n, "mrr@10": 100.0 * rr / n}


def rules_auto(turns: Sequence[TurnScore]) -> dict[str, float]:
    """The rules' ``auto`` (no learned model): the LLM (here the oracle) on every turn their gate says needs a
    rewrite and they are not sure of, the rules' answer elsewhere (the question as typed where they call it
    standalone)."""
    n = len(turns) or 1
    calls = sum(s.rules_asks for s in turns)
    side = ["human" if s.rules_asks else "rules" for s in turns]
    return {"calls_per_100": 100.0 * calls / n,
            "recall@10": 100.0 * sum(s.recall[k] for s, k in zip(turns, side)) / n,
            "mrr@10": 100.0 * sum(s.rr[k] for s, k in zip(turns, side)) / n}


def fixed(turns: Sequence[TurnScore], side: str) -> dict[str, float]:
    """A row with no LLM call: every turn searched with ``side`` (raw, rules, offline)."""
    n = len(turns) or 1
    return {"calls_per_100": 0.0, "recall@10": 100.0 * sum(s.recall[side] for s in turns) / n,
            "mrr@10": 100.0 * sum(s.rr[side] for s in turns) / n}


def fold_of_record(r: EvalRecord, learned: LearnedRewriter) -> int:
    """The fold of the record's dialog: the fold model that scored it when the file is in the training pool, else
    the dialog's hash fold (``learned.oof.fold_of``)."""
    k = learned.folds.fold(r.messages(), r.question) if learned.folds else None
    return k if k is not None else fold_of(f"{r.dataset}/{dialog_of_id(r.id)}", FOLDS)


def evaluate_oracle(records: Sequence[EvalRecord], *, index_dir: Path, data_path: Path | str | None = None,
                    limit: int | None = None, use_topic: bool = True, index_factory: IndexFactory | None = None,
                    model_path: Path | str | None = None, grid: Sequence[float] = GRID) -> dict[str, Any]:
    """The calls-vs-retrieval curve of ``auto`` with an oracle on one file (see the module docstring);
    ``data_path``: the file the records came from (a training file is scored out of fold)."""
    learned = LearnedRewriter(model_path)
    oof = learned.out_of_fold(data_path) if data_path is not None else None
    oracle = Oracle()
    auto = AskWhenUnsure(oracle, learned, below=ALWAYS)
    rules = RuleRewriter()
    task = build_task(records)
    eligible = task.turns[:limit] if limit is not None else task.turns
    depth = max(TOP_K * 2, 10)
    index = (index_factory or local_index)(Path(index_dir))
    scores: list[TurnScore] = []
    errors = 0
    t0 = time.perf_counter()
    try:
        if task.docs:
            index.add(task.docs)
        for turn in eligible:
            r = turn.record
            topic = topic_text(r) if use_topic else None
            req = EnhanceRequest(r.question, tuple(r.messages()), topic)
            try:
                a = auto.assess(req)
                offline, conf, askable = a.offline.query, a.confidence, a.askable
                ruled = rules.rewrite(req.history, r.question, topic=topic).rewritten
                rules_asks = askable and a.decision.needed
            except ConvsearchError:  # fail open, as the retrieval harness does: the raw question
                offline, conf, askable, ruled, rules_asks = r.question, 0.0, True, r.question, True
                errors += 1
            queries = {"raw": r.question, "rules": ruled, "offline": offline, "human": r.rewrite}
            hits: dict[str, list[str]] = {}
            for side, q in queries.items():
                same = next((s for s, q2 in queries.items() if s in hits and q2 == q), None)
                hits[side] = hits[same] if same else [h.id for h in _search(index, q, depth)]
            pq = {side: per_query(ids, turn.qrels) for side, ids in hits.items()}
            scores.append(TurnScore(fold_of_record(r, learned), conf, askable,
                                    {s: v[0] for s, v in pq.items()}, {s: v[1] for s, v in pq.items()}, rules_asks))
    finally:
        index.close()
        auto.close()
        rules.close()
    rows = [{"row": "raw", **fixed(scores, "raw")}, {"row": "rules", **fixed(scores, "rules")},
            {"row": "learned (offline)", **fixed(scores, "offline")}]
    rows.append({"row": "rules' auto", **rules_auto(scores)})
    rows += [{"row": f"auto t={t:.2f}", "threshold": t, **point(scores, t)} for t in grid]
    rows.append({"row": "oracle every turn", **point(scores, None)})
    # at the threshold the setting ships with (a regression row of eval/expected.yaml reads it)
    shipped = {"threshold": UNSURE_BELOW, **point(scores, UNSURE_BELOW),
               "oracle_recall@10": point(scores, None)["recall@10"], "rules_auto": rules_auto(scores)}
    return {
        "mode": task.mode,
        "datasets": sorted({t.record.dataset for t in eligible}),
        "n_queries": len(scores),
        "n_docs": len(task.docs),
        "out_of_fold": oof,
        "askable_per_100": 100.0 * sum(s.askable for s in scores) / (len(scores) or 1),
        "errors": errors,
        "rows": rows,
        "shipped": shipped,
        "by_confidence": by_confidence(scores),
        "turns": [[s.fold, round(s.confidence, 6), int(s.askable), *(round(s.recall[k], 6) for k in SIDES),
                   *(round(s.rr[k], 6) for k in SIDES), int(s.rules_asks)] for s in scores],
        "seconds": time.perf_counter() - t0,
    }


SIDES = ("raw", "rules", "offline", "human")


def turns_of(report: Mapping[str, Any]) -> list[TurnScore]:
    """The per-turn scores a report carries (``evaluate_oracle``'s compact ``turns``)."""
    n = len(SIDES)
    return [TurnScore(int(row[0]), float(row[1]), bool(row[2]), dict(zip(SIDES, row[3:3 + n])),
                      dict(zip(SIDES, row[3 + n:3 + 2 * n])), bool(row[3 + 2 * n]) if len(row) > 3 + 2 * n else False)
            for row in report["turns"]]


def pick(sets: Sequence[Sequence[TurnScore]], grid: Sequence[float] = CHOICE_GRID,
         max_drop: float = MAX_DROP) -> float:
    """The smallest threshold of ``grid`` from which on recall@10 on every one of ``sets`` is at most ``max_drop``
    points below the oracle on every turn: at it **and at every larger threshold of the grid** (a lucky dip of the
    curve below the line, on a small set, is not a choice); the largest of ``grid`` when none is."""
    g = sorted(grid)
    ok = [all(point(s, t)["recall@10"] >= point(s, None)["recall@10"] - max_drop - 1e-9 for s in sets if s)
          for t in g]
    for i, t in enumerate(g):
        if all(ok[i:]):
            return t
    return g[-1]


def choose(reports: Mapping[str, Mapping[str, Any]], *, on: Sequence[str] | None = None,
           grid: Sequence[float] = CHOICE_GRID,
           max_drop: float = MAX_DROP, folds: int = FOLDS) -> dict[str, Any]:
    """The threshold chosen on folds (see the module docstring) on the files named ``on`` (default: all): per fold
    the threshold picked on the other folds of those files, each file's held-out point at those thresholds (against
    its oracle on every turn; a file outside ``on`` took no part in any choice), and the threshold picked on all
    turns of ``on`` (the one to ship) with every file's point at it."""
    sets = {name: turns_of(rep) for name, rep in reports.items()}
    names = list(on) if on is not None else list(sets)
    unknown = [n for n in names if n not in sets]
    if unknown:
        raise ValueError(f"no report for {', '.join(unknown)}")
    per_fold = {k: pick([[s for s in sets[n] if s.fold != k] for n in names], grid, max_drop) for k in range(folds)}
    held: dict[str, Any] = {}
    for name, ts in sets.items():
        n = len(ts) or 1
        calls = rec = rr = 0.0
        for s in ts:
            asked = s.asks(per_fold[s.fold])
            side = "human" if asked else "offline"
            calls += asked
            rec += s.recall[side]
            rr += s.rr[side]
        o = point(ts, None)
        held[name] = {"calls_per_100": 100.0 * calls / n, "recall@10": 100.0 * rec / n, "mrr@10": 100.0 * rr / n,
                      "oracle_recall@10": o["recall@10"], "drop": o["recall@10"] - 100.0 * rec / n, "n": len(ts)}
    ship = pick([sets[n] for n in names], grid, max_drop)
    return {"rule": f"smallest threshold (steps of {_step(grid):g}) from which on recall@10 stays within {max_drop:g} "
                    f"point of the oracle on every turn on each of {', '.join(names)}, chosen on {folds - 1} folds "
                    "and scored on the fifth",
            "on": names,
            "per_fold": per_fold, "held_out": held, "chosen": ship,
            "at_chosen": {name: point(ts, ship) for name, ts in sets.items()}}


def _step(grid: Sequence[float]) -> float:
    g = sorted(grid)
    return round(min((b - a for a, b in zip(g, g[1:])), default=0.0), 4)


# the dev sets of the curve (under the shared data root) and the ones the threshold is chosen on (the target's)
DEV_SETS = ("conv-rewrite/trec-ikat/ikat2023_train.jsonl", "conv-rewrite/canard/dev.jsonl",
            "conv-rewrite/trec-cast/cast2019_eval.jsonl",
            # evaluation-only sets (never trained on, no part in any choice), on each dialog's own document: does the
            # doubt carry to command-style English and to Chinese?
            "conv-rewrite/mudoco-qr-cread/dev.jsonl", "conv-rewrite/rewrite-su2019-zh/dev.jsonl",
            "conv-rewrite/restoration-200k-zh/valid.jsonl")
CHOOSE_ON = ("trec-ikat/ikat2023_train", "canard/dev")
# the folders of the sets that only measure (never fitted on, never chosen on): conv-rewrite-train/README.md
EVAL_ONLY = frozenset({"mudoco-qr-cread", "rewrite-su2019-zh", "restoration-200k-zh", "search-followups"})
TARGET_CALLS = 40.0  # issue 26: at most 40 LLM calls per 100 turns …
COMMAND = "convsearch eval oracle --markdown docs/BENCHMARKS.md"


def label(path: Path | str) -> str:
    """A file's name in the report: its folder and stem (``canard/dev``)."""
    p = Path(path)
    return f"{p.parent.name}/{p.stem}"


def oracle_report(paths: Sequence[Path | str], *, choose_on: Sequence[str] | None = None,
                  limit: int | None = None, model_path: Path | str | None = None) -> dict[str, Any]:
    """``evaluate_oracle`` on every file (each indexed into its own temporary BM25 index) and the threshold chosen on
    the folds of the files named ``choose_on`` (labels, ``label``; a name without a file is a ValueError). None:
    the ``CHOOSE_ON`` files among ``paths``, or all of them when it holds none."""
    import tempfile

    from .data import load_records

    unknown = [n for n in choose_on or () if n not in {label(p) for p in paths}]
    if unknown:  # before any work
        raise ValueError(f"no report for {', '.join(unknown)} (the sets: {', '.join(label(p) for p in paths)})")
    barred = [n for n in choose_on or () if n.split("/")[0] in EVAL_ONLY]
    if barred:
        raise ValueError(f"{', '.join(barred)}: evaluation only, a threshold is never chosen on it")
    reports: dict[str, dict[str, Any]] = {}
    for p in paths:
        with tempfile.TemporaryDirectory(prefix="convsearch-oracle-") as tmp:
            rep = evaluate_oracle(load_records(Path(p)), index_dir=Path(tmp) / "index", data_path=p, limit=limit,
                                  model_path=model_path)
        rep["data"] = str(p)
        reports[label(p)] = rep
    pool = [n for n, r in reports.items() if r["out_of_fold"]]  # the training-pool sets: never an eval-only one
    free = [n for n in reports if n.split("/")[0] not in EVAL_ONLY]
    on = list(choose_on) if choose_on else [n for n in CHOOSE_ON if n in reports] or pool or free or None
    if on is None:
        raise ValueError("every set given is evaluation only: a threshold is never chosen on them; add a training "
                         "file (e.g. ../shared/data/conv-rewrite/canard/dev.jsonl)")
    out = {"sets": reports, "choice": choose(reports, on=on), "max_drop": MAX_DROP, "target_calls": TARGET_CALLS}
    if pool and set(on) != set(pool):  # the same rule with every training-pool set taking part
        out["choice_all"] = choose(reports, on=pool)
    return out


BINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0)


def by_confidence(turns: Sequence[TurnScore], bins: Sequence[float] = BINS) -> list[dict[str, Any]]:
    """Where the oracle's gain lies: per confidence bin [lo, hi) of the turns ``auto`` may ask (the last bin holds
    1.0), how many turns, on how many the human rewrite retrieves better / worse than the offline answer (recall@10),
    and the net gain in turns."""
    out = []
    for i, (lo, hi) in enumerate(zip(bins, bins[1:])):
        last = i == len(bins) - 2
        b = [s for s in turns if s.askable and lo <= s.confidence and (s.confidence < hi or last)]
        out.append({"lo": lo, "hi": hi, "n": len(b),
                    "better": sum(s.recall["human"] > s.recall["offline"] for s in b),
                    "worse": sum(s.recall["human"] < s.recall["offline"] for s in b),
                    "net": sum(s.recall["human"] - s.recall["offline"] for s in b)})
    return out


def _below(drop: float) -> str:
    """"0.34 below" or "0.47 above" (points of recall@10 against the oracle)."""
    return f"{drop:.2f} below" if drop >= 0 else f"{-drop:.2f} above"


def _f(x: float) -> str:
    return f"{x:.1f}"


def render_markdown(report: Mapping[str, Any], *, command: str = COMMAND) -> str:
    """The section of docs/BENCHMARKS.md: the curve per set, then the threshold chosen on folds against the target."""
    sets = report["sets"]
    c = report["choice"]
    names = list(sets)
    head = ["row"] + [f"{n} {k}" for n in names for k in ("calls/100", "R@10", "MRR@10")]
    lines = ["## auto with an oracle: LLM calls vs retrieval (issue 26, item 4)", "",
             "`auto` on the learned rewriter asks the LLM only on turns whose learned confidence is below a "
             "threshold: the model file's doubt over the offline answer (`learned.ask`: the turn read with its "
             "offline answer, ranked among training turns of its language; 0.2 = a fifth of them looked more "
             "doubtful), or the resolver's threshold margins for a file without it. Here the human rewrite stands in "
             "for the LLM's answer (an oracle, evaluation only, without the LLM's guard), so \"oracle every turn\" is "
             "the human rewrite's retrieval. BM25 on each file's retrieval task (iKAT 2023: gold passages; the "
             "others: each dialog's own document). Every training-pool file is scored out of fold: each record's "
             "confidence and offline answer come from the fold models that never saw its dialog. \"rules' auto\" is "
             "the `auto` without the learned model (`CONVSEARCH_LLM_UNSURE_BELOW` negative): the LLM on every turn the "
             "rules' gate sends on and is not sure of. Recall@10 and MRR@10 in points; calls per 100 scored turns.",
             "",
             "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    rows = [r["row"] for r in sets[names[0]]["rows"]]
    for i, row in enumerate(rows):
        cells = [row]
        for n in names:
            r = sets[n]["rows"][i]
            cells += [_f(r["calls_per_100"]), f"{r['recall@10']:.2f}", f"{r['mrr@10']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Turns: " + ", ".join(f"{n} {sets[n]['n_queries']} ({sets[n]['mode']}, out of fold: "
                                       f"{sets[n]['out_of_fold'] or 'no'})" for n in names) + ".", ""]
    lines += ["**The threshold, chosen on folds.** " + c["rule"][0].upper() + c["rule"][1:] + " (the fold of a turn "
              "is the fold the learned model held its dialog out of). Threshold per held-out fold: "
              + ", ".join(f"fold {k}: {t:.2f}" for k, t in sorted(c["per_fold"].items(), key=lambda kv: int(kv[0])))
              + f". Chosen on all folds (the setting's value): **{c['chosen']:.2f}**. A set outside "
              f"{', '.join(c['on'])} took no part in any choice.", "",
              "| set | held out: calls/100 | R@10 | oracle R@10 | below oracle | at " + f"{c['chosen']:.2f}"
              + ": calls/100 | R@10 | target (≤ " + f"{report['target_calls']:g} calls, ≤ {report['max_drop']:g} "
              "point below) |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for n in names:
        h, a = c["held_out"][n], c["at_chosen"][n]
        if not sets[n]["out_of_fold"]:  # not a training-pool file: no folds of its own, its point at the choice
            lines.append(f"| {n} | — | — | {h['oracle_recall@10']:.2f} | — | {_f(a['calls_per_100'])} | "
                         f"{a['recall@10']:.2f} | evaluation only: {_below(h['oracle_recall@10'] - a['recall@10'])} "
                         f"the oracle at {c['chosen']:.2f} |")
            continue
        ok = h["calls_per_100"] <= report["target_calls"] and h["drop"] <= report["max_drop"]
        verdict = (f"{'**MET**' if ok else '**NOT MET**'} (held out)" if n in c["on"] else
                   f"{'within' if ok else 'not within'} (held out; no part in the choice)")
        lines.append(f"| {n} | {_f(h['calls_per_100'])} | {h['recall@10']:.2f} | {h['oracle_recall@10']:.2f} | "
                     f"{h['drop']:.2f} | {_f(a['calls_per_100'])} | {a['recall@10']:.2f} | {verdict} |")
    alt = report.get("choice_all")
    if alt:
        lines += ["", f"The same rule with every training-pool set ({', '.join(alt['on'])}) taking part in the "
                  f"choice: threshold {alt['chosen']:.2f} "
                  "(per held-out fold " + ", ".join(f"{t:.2f}" for _, t in sorted(alt["per_fold"].items(),
                                                                                 key=lambda kv: int(kv[0])))
                  + "); held out: " + "; ".join(f"{n} {_f(h['calls_per_100'])} calls/100, {_below(h['drop'])} the "
                                                "oracle" for n, h in alt["held_out"].items() if n in alt["on"]) + "."]
    if all("by_confidence" in sets[n] for n in names):
        lines += ["", "Where the oracle's gain lies, by learned confidence (turns `auto` may ask): turns, on how "
                  "many the human rewrite retrieves better / worse than the offline answer (recall@10), net gain in "
                  "turns. A confidence that found the turns worth asking would put the gains in the low bins and "
                  "no losses there.", "",
                  "| confidence | " + " | ".join(f"{n} turns | better / worse | net" for n in names) + " |",
                  "|---|" + "---:|---:|---:|" * len(names)]
        for i, b in enumerate(sets[names[0]]["by_confidence"]):
            cells = [f"[{b['lo']:.2f}, {b['hi']:.2f}{']' if i == len(BINS) - 2 else ')'}"]
            for n in names:
                x = sets[n]["by_confidence"][i]
                cells += [str(x["n"]), f"{x['better']} / {x['worse']}", f"{x['net']:+.1f}"]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Regenerate: `{command}` (or `.venv/bin/python bench/run.py --only oracle`).", ""]
    return "\n".join(lines)


SECTION = "## auto with an oracle"


def splice(doc: str, section: str) -> str:
    """``doc`` with its oracle section replaced by ``section`` (put before "## How to rerun", where
    ``bench/run.py`` renders it, when it has none; else appended)."""
    start = doc.find(SECTION)
    if start < 0:
        at = doc.find("\n## How to rerun")
        if at < 0:
            return doc.rstrip("\n") + "\n\n" + section
        return doc[:at + 1] + section.rstrip("\n") + "\n\n" + doc[at + 1:]
    end = doc.find("\n## ", start + 1)
    return doc[:start] + section.rstrip("\n") + "\n" + (doc[end:] if end >= 0 else "")


__all__ = ["BINS", "CHOICE_GRID", "CHOOSE_ON", "DEV_SETS", "EVAL_ONLY", "GRID", "MAX_DROP", "Oracle", "TurnScore",
           "by_confidence", "choose", "evaluate_oracle", "label", "oracle_report", "per_query", "pick", "point",
           "render_markdown", "rules_auto", "splice", "turns_of"]
