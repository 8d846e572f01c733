"""The grid that chose how the ``learned`` rewriter combines with the rules (docs/LEARNED.md, "Precision first").

Every configuration is a ``LearnedRewriter(rewrite_at=, standalone_below=, rules_append_min=, placements=,
keep_named=, fill_rule_gaps=)``; the
expensive parts of a turn (the rules' Decision and rewrite, the learned resolver) do not depend on those knobs, so
they are computed once per turn and cached, and each configuration replays only the combination logic.
Selection uses out-of-fold numbers of the TRAINING sets only; evaluation-only sets are scored by ``--final``.

    .venv/bin/python -m research.learned.combine_grid            # the grid, training sets (OOF)
    .venv/bin/python -m research.learned.combine_grid --final 1.01,0,0.5,sub,False,True  # every set
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import convsearch.learned.rewriter as lrw
from convsearch.eval.data import load_records, topic_text
from convsearch.eval.rewrite_eval import _Tokens, session_context, system_metrics
from convsearch.learned.compose import How
from convsearch.learned.rewriter import ALL_PLACEMENTS, NEVER, LearnedRewriter
from convsearch.resolve.rules import RuleRewriter
from convsearch.window import in_window

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
TRAIN_EN = {"canard": "conv-rewrite/canard/dev.jsonl", "cast2019": "conv-rewrite/trec-cast/cast2019_eval.jsonl",
            "cast2021": "conv-rewrite/trec-cast/cast2021_eval.jsonl",
            "ikat2023": "conv-rewrite/trec-ikat/ikat2023_train.jsonl",
            "ikat2024": "conv-rewrite/trec-ikat/ikat2024_test.jsonl",
            "camrest": "conv-rewrite/camrest676-gecor/dev.jsonl", "alexa": "conv-rewrite/alexa-cqr-kvret/dev.jsonl"}
TRAIN_ZH = {"crosswoz": "conv-rewrite-train/crosswoz-zh/val.jsonl"}
EVAL_ONLY = {"mudoco": "conv-rewrite/mudoco-qr-cread/dev.jsonl", "su2019": "conv-rewrite/rewrite-su2019-zh/dev.jsonl",
             "r200k": "conv-rewrite/restoration-200k-zh/valid.jsonl"}
FLUENT = frozenset({How.SUBSTITUTION, How.SLOT_SWAP, How.INSERTION})
PLACES = {"all": ALL_PLACEMENTS, "fluent": FLUENT, "sub+swap": frozenset({How.SUBSTITUTION, How.SLOT_SWAP}),
          "sub": frozenset({How.SUBSTITUTION})}
GRID = {"rewrite_at": [0.5, 0.7, 0.9, NEVER], "standalone_below": [0.5, 0.0], "rules_append_min": [0.5, 0.7, NEVER],
        "placements": ["all", "fluent", "sub"], "keep_named": [False, True], "fill_rule_gaps": [True, False]}


class Cached:
    """A ``LearnedRewriter`` whose per-turn expensive parts are memoised (keyed by set, turn and argument)."""

    def __init__(self) -> None:
        self.rw = LearnedRewriter()
        self.set = ""
        memo: dict[Any, Any] = {}
        resolve, rules_rewrite, needs = self.rw.resolve, self.rw.rules.rewrite, lrw.needs_rewrite

        def key(history: Any, query: str, **kw: Any) -> Any:
            return (self.set, query, tuple((m.role, m.content) for m in history), tuple(sorted(
                (k, repr(v)) for k, v in kw.items())))

        def c_resolve(history: Any, query: str, **kw: Any) -> Any:
            k = ("res", key(history, query, **kw))
            if k not in memo:
                memo[k] = resolve(history, query, **kw)
            return memo[k]

        def c_rules(history: Any, query: str, **kw: Any) -> Any:
            k = ("rules", key(history, query, **kw))
            if k not in memo:
                memo[k] = rules_rewrite(history, query, **kw)
            return memo[k]

        def c_needs(history: Any, query: str, **kw: Any) -> Any:
            k = ("needs", key(history, query, **kw))
            if k not in memo:
                memo[k] = needs(history, query, **kw)
            return memo[k]

        self.rw.resolve = c_resolve  # type: ignore[method-assign]
        self.rw.rules.rewrite = c_rules  # type: ignore[method-assign]
        lrw.needs_rewrite = c_needs  # type: ignore[assignment]

    def configure(self, **knobs: Any) -> LearnedRewriter:
        for k, v in knobs.items():
            setattr(self.rw, k, PLACES[v] if k == "placements" else v)
        return self.rw


def turns(path: Path) -> tuple[list[Any], list[Any], list[str], str]:
    recs = [r for r in load_records(path) if r.question.strip() and r.rewrite.strip()]
    topics = [topic_text(r) for r in recs]
    lang = max({r.lang for r in recs}, key=[r.lang for r in recs].count)
    return recs, topics, [session_context(r, t) for r, t in zip(recs, topics)], lang


def score(c: Cached, name: str, rel: str, configs: list[dict[str, Any]], rules: bool = True) -> list[dict[str, Any]]:
    path = DATA / rel
    recs, topics, ctx, lang = turns(path)
    c.set = name
    c.rw.out_of_fold(path)
    tok = _Tokens()
    out = []
    hist = [[m for m in r.messages() if in_window(m)] for r in recs]
    if rules:
        rr = RuleRewriter()
        preds = [rr.rewrite(h, r.question, topic=t).rewritten for h, r, t in zip(hist, recs, topics)]
        out.append({"set": name, "config": "rules", **pick(system_metrics(preds, recs, ctx, lang=lang, tokens=tok))})
    for cfg in configs:
        rw = c.configure(**cfg)
        preds = [rw.rewrite(h, r.question, topic=t).rewritten for h, r, t in zip(hist, recs, topics)]
        out.append({"set": name, "config": cfg, **pick(system_metrics(preds, recs, ctx, lang=lang, tokens=tok))})
    return out


def pick(m: dict[str, Any]) -> dict[str, float]:
    return {"f1": round(100 * m["rest_f1"], 2), "em": round(100 * m["em"], 2), "gate": round(100 * m["gate_acc"], 2),
            "bleu": round(m["bleu"], 2)}


def main(argv: list[str]) -> None:
    c = Cached()
    if argv[:1] == ["--final"]:  # each further argument: RA,SB,RAM,PLACES,KEEP,FILL (the merged behaviour added)
        cfgs = [{"rewrite_at": float(ra), "standalone_below": float(sb), "rules_append_min": float(ram),
                 "placements": places, "keep_named": keep == "True", "fill_rule_gaps": fill == "True"}
                for ra, sb, ram, places, keep, fill in (a.split(",") for a in argv[1:])]
        cfgs.append({"rewrite_at": 0.5, "standalone_below": 0.5, "rules_append_min": 0.5, "placements": "all",
                     "keep_named": False, "fill_rule_gaps": True})
        for name, rel in {**TRAIN_EN, **TRAIN_ZH, **EVAL_ONLY}.items():
            for row in score(c, name, rel, cfgs):
                print(json.dumps(row), flush=True)
        return
    cfgs = [dict(zip(GRID, vals)) for vals in itertools.product(*GRID.values())]
    for name, rel in TRAIN_EN.items():
        for row in score(c, name, rel, cfgs):
            print(json.dumps(row), flush=True)
    zh = [{"rules_append_min": v} for v in GRID["rules_append_min"]]
    for name, rel in TRAIN_ZH.items():
        for row in score(c, name, rel, zh):
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
