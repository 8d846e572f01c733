"""The quality rows of eval/expected.yaml are rerun in CI: a rewriter change that moves a metric past its
tolerance fails here until `convsearch eval regress --update` records the new numbers on purpose.

Every row runs, in one of SHARDS tests (rows i, i + SHARDS, …), so that parallel test workers share the ~70 s of
CPU the rows take (rows differ widely in cost: more shards than workers balance them); a test checks that the
shards cover every row exactly once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from convsearch.eval.regress import load_rows, run_regress

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "conv-rewrite"
EXPECTED = ROOT / "eval" / "expected.yaml"
SHARDS = 8

pytestmark = [pytest.mark.integration, pytest.mark.data]


def _shard(i: int) -> list[str]:
    return [r.name for r in load_rows(EXPECTED)][i::SHARDS]


def test_the_shards_cover_every_row_once():
    names = [r.name for r in load_rows(EXPECTED)]
    assert len(names) == len(set(names)), "row names must be unique: a shard selects rows by name"
    shards = [_shard(i) for i in range(SHARDS)]
    assert sorted(n for s in shards for n in s) == sorted(names)
    assert all(shards), "a shard with no row: lower SHARDS"


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared data not found at {SHARED}")
@pytest.mark.parametrize("shard", range(SHARDS))
def test_expected_quality_rows_hold(tmp_path, shard):
    names = _shard(shard)
    lines: list[str] = []
    # CI installs every row's data (.ci/run: the shared sets, scripts/kb-docs.sh for the Debian documentation); on a
    # developer's machine a row whose data is missing says SKIP and why, and the others still have to hold
    missing_ok = os.environ.get("CI") != "true"
    code = run_regress(EXPECTED, markdown=tmp_path / "q.md", echo=lines.append, names=names,
                       allow_missing_data=missing_ok)
    failed = [line for line in lines if line.startswith(("FAIL", "ERROR"))]
    assert code == 0 and not failed, "\n".join(failed or lines[-3:])
    assert lines[-1].startswith("wrote") and "0 FAIL, 0 ERROR" in lines[-2]
    assert sorted(line.split()[1] for line in lines if line.startswith("== ")) == sorted(names), "a row did not run"
    assert "| " in (tmp_path / "q.md").read_text(encoding="utf-8")


def test_a_subset_cannot_be_written_back(tmp_path):
    with pytest.raises(ValueError, match="whole file"):
        run_regress(EXPECTED, update=True, names=_shard(0), echo=lambda _: None)
    with pytest.raises(ValueError, match="no such row"):
        run_regress(EXPECTED, names=["rewrite/no-such-row"], echo=lambda _: None)
