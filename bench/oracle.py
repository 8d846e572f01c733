"""Section: ``auto`` with an oracle, LLM calls per 100 turns vs retrieval (`convsearch eval oracle`), from data.

    .venv/bin/python bench/run.py --only oracle                 # through the benchmark runner
    convsearch eval oracle --markdown docs/BENCHMARKS.md        # the same section, replaced in place

BM25 only, no LLM: the human rewrite stands in for the LLM's answer (convsearch.eval.oracle). ``--quick`` scores
the first 300 turns of each file.
"""

from __future__ import annotations

from common import DATA


def run(quick: bool = False) -> dict:
    from convsearch.eval.oracle import DEV_SETS, oracle_report

    root = DATA.parent  # DEV_SETS are under the shared data root (conv-rewrite/…)
    report = oracle_report([root / p for p in DEV_SETS], limit=300 if quick else None)
    for rep in report["sets"].values():  # the per-turn scores (thousands of rows) served the choice: not kept
        rep.pop("turns", None)
    return report


def render(r: dict) -> str:
    from convsearch.eval.oracle import render_markdown

    return render_markdown(r)
