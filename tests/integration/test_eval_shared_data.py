"""The rewrite eval on the real shared data (first 50 records), through the CLI.

Needs ``<repo>/../shared/data/conv-rewrite``; skipped with a visible reason when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from convsearch.eval.cli import eval_app

pytestmark = pytest.mark.data

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data" / "conv-rewrite"

CASES = [("canard/dev.jsonl", "canard", "en"), ("rewrite-su2019-zh/dev.jsonl", "rewrite-su2019-zh", "zh")]


@pytest.mark.parametrize(("rel", "dataset", "lang"), CASES)
def test_rewrite_eval_first_50(rel: str, dataset: str, lang: str) -> None:
    path = SHARED / rel
    if not path.is_file():
        pytest.skip(f"shared data not found: {path} (expected at <repo>/../shared/data/conv-rewrite)")
    res = CliRunner().invoke(eval_app, ["rewrite", "--data", str(path), "--rewriter", "passthrough", "--limit", "50",
                                        "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["n_records"] == 50
    ds = rep["datasets"][dataset]
    assert ds["lang"] == lang and ds["n"] == 50
    assert set(ds["systems"]) == {"copy", "last_user+q", "passthrough"}
    for metrics in ds["systems"].values():
        for key in ("bleu", "em", "rest_p1", "rest_r1", "rest_f1", "rest_f2", "gate_acc", "gate_f1", "changed",
                    "faithful", "latency_mean_ms", "latency_p99_ms"):
            assert key in metrics
    copy = ds["systems"]["copy"]
    assert copy["rest_f1"] == 0.0 and copy["rest_f2"] == 0.0
    assert copy["bleu"] > 0
    assert ds["systems"]["passthrough"]["bleu"] == pytest.approx(copy["bleu"])
    assert ds["systems"]["last_user+q"]["rest_r1"] > 0
