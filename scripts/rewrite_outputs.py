"""Every rule rewrite on every dev set (all dialogs), every follow-up set and every perturbation, one line per call.

A refactor of the rule layer that must not change behaviour is checked with it: dump before, dump after, compare
the digests (or ``diff`` the files). Each line is ``original → rewritten | reason | fell_back`` with the call's
number; the last line gives the count and a SHA-256 of the rest. Nothing is scored and nothing is printed per case
unless ``--out`` is given, so running it tunes nothing.

    python scripts/rewrite_outputs.py --out /tmp/before.txt      # ~2 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from convsearch.eval.data import load_records
from convsearch.eval.followups import load_followups
from convsearch.eval.halves import dev_sets, followups_file, other_followups
from convsearch.eval.perturb import evaluate_perturbations
from convsearch.eval.rewrite_eval import evaluate_rewrite
from convsearch.rewrite import get_rewriter


class Recorder:
    """A rewriter (the rules by default), writing down every call (the learned rewriter's reasons carry its gate's
    probability to two places)."""

    uncertain_below = 0.0

    def __init__(self, rewriter: str = "rules") -> None:
        self.name = rewriter
        self.inner = get_rewriter(rewriter)
        self.lines: list[str] = []

    def rewrite(self, history: Any, query: str, **kw: Any) -> Any:
        r = self.inner.rewrite(history, query, **kw)
        self.lines.append(f"{query!r} → {r.rewritten!r} | {r.reason} | {r.fell_back}")
        return r

    def close(self) -> None:
        self.inner.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--expected", type=Path, default=Path("eval/expected.yaml"))
    ap.add_argument("--out", type=Path, help="write every call here (else only the count and digest)")
    ap.add_argument("--rewriter", default="rules", choices=("rules", "learned"),
                    help="the offline rewriter to record (learned: the shipped model, no LLM)")
    args = ap.parse_args(argv)
    rec = Recorder(args.rewriter)
    for name, data, topic in dev_sets(args.expected):
        for use_topic in (True, False) if topic else (False,):  # the --no-topic rows read a set a second time
            rec.lines.append(f"## {name} topic={use_topic}")
            evaluate_rewrite(load_records(data), rec, use_topic=use_topic)
    fups = [("followups", followups_file(args.expected))] + other_followups(args.expected)
    for name, path in fups:
        if path is None:
            continue
        rec.lines.append(f"## {name} + perturbations")
        evaluate_perturbations(load_followups(path), rec)
    calls = sum(1 for line in rec.lines if not line.startswith("## "))
    digest = hashlib.sha256("\n".join(rec.lines).encode()).hexdigest()
    if args.out:
        args.out.write_text("\n".join(rec.lines) + f"\n# {calls} calls sha256 {digest}\n", encoding="utf-8")
    print(f"{calls} calls sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
