"""The quality rows of eval/expected.yaml are rerun in CI: a rewriter change that moves a metric past its
tolerance fails here until `convsearch eval regress --update` records the new numbers on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest

from convsearch.eval.regress import run_regress

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "conv-rewrite"

pytestmark = [pytest.mark.integration, pytest.mark.data]


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared data not found at {SHARED}")
def test_expected_quality_rows_hold(tmp_path):
    lines: list[str] = []
    code = run_regress(ROOT / "eval" / "expected.yaml", markdown=tmp_path / "q.md", echo=lines.append)
    failed = [line for line in lines if line.startswith(("FAIL", "ERROR"))]
    assert code == 0 and not failed, "\n".join(failed or lines[-3:])
    assert lines[-1].startswith("wrote") and "0 FAIL, 0 ERROR" in lines[-2]
    assert "| " in (tmp_path / "q.md").read_text(encoding="utf-8")
