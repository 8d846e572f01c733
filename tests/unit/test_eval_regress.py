"""The expected-scores runner: OK / FAIL / SKIP, --update, --markdown, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from convsearch.errors import DataFileError
from convsearch.eval.commands import eval_app
from convsearch.eval.regress import load_rows, lookup, markdown_report, matches, run_regress

RECORD = {"id": "d1_q2", "dataset": "toy", "lang": "en", "history": ["who founded Acme?", "Jane Doe."],
          "history_roles": ["user", "assistant"], "question": "when?", "rewrite": "when did Jane Doe found Acme?"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fake repo: pyproject.toml, eval/expected.yaml and a data file outside it (like ../shared)."""
    root = tmp_path / "main"
    (root / "eval").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname='x'\n", encoding="utf-8")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "toy.jsonl").write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    (root / "eval" / "expected.yaml").write_text(
        "# header comment kept on --update\n"
        "rows:\n"
        "  - name: toy/passthrough\n"
        "    command: eval rewrite --data ../shared/toy.jsonl --rewriter passthrough --json\n"
        "    tolerance: 0.001\n"
        "    expected:\n"
        "      datasets.toy.systems.passthrough.rest_f1: 0.0\n"
        "      datasets.toy.systems.passthrough.faithful: null\n"
        "      datasets.toy.systems.copy.em: 0.0\n", encoding="utf-8")
    return root


def run(repo: Path, *args: str) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = run_regress(repo / "eval" / "expected.yaml", echo=lines.append, **dict.fromkeys(args, True))  # type: ignore[arg-type]
    return code, lines


def test_all_ok(repo: Path) -> None:
    code, lines = run(repo)
    assert code == 0
    assert sum(line.startswith("OK") for line in lines) == 3
    assert lines[-1].startswith("3 OK, 0 FAIL, 0 ERROR, 0 SKIP")


def test_fail_then_update(repo: Path) -> None:
    path = repo / "eval" / "expected.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("copy.em: 0.0", "copy.em: 0.5"), encoding="utf-8")
    code, lines = run(repo)
    assert code == 1
    fail = [line for line in lines if line.startswith("FAIL")]
    assert len(fail) == 1 and "measured 0.0000" in fail[0] and "expected 0.5000" in fail[0]
    code, _ = run(repo, "update")
    assert code == 0
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# header comment kept on --update\n")
    row = yaml.safe_load(text)["rows"][0]
    assert row["expected"]["datasets.toy.systems.copy.em"] == 0.0
    assert row["tolerance"] == 0.001
    assert run(repo)[0] == 0


def test_update_fills_default_metrics_for_new_rows(repo: Path) -> None:
    path = repo / "eval" / "expected.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["rows"][0]["expected"] = {}
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    code, lines = run(repo, "update")
    assert code == 0 and any(line.startswith("NEW") for line in lines)
    expected = yaml.safe_load(path.read_text(encoding="utf-8"))["rows"][0]["expected"]
    assert "datasets.toy.systems.passthrough.bleu" in expected
    assert expected["datasets.toy.systems.passthrough.faithful"] is None


def test_missing_data_is_skipped_visibly(repo: Path) -> None:
    (repo.parent / "shared" / "toy.jsonl").unlink()
    code, lines = run(repo)
    assert code == 2
    assert any(line.startswith("SKIP  toy/passthrough: data not found") for line in lines)
    assert run(repo, "allow_missing_data")[0] == 0


def test_bad_command_is_an_error_row(repo: Path) -> None:
    path = repo / "eval" / "expected.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("--rewriter passthrough", "--rewriter nope"),
                    encoding="utf-8")
    code, lines = run(repo)
    assert code == 1
    assert any(line.startswith("ERROR toy/passthrough: bad arguments") for line in lines)


def test_markdown_and_cli(repo: Path, tmp_path: Path) -> None:
    md = tmp_path / "docs" / "BENCHMARKS.md"
    res = CliRunner().invoke(eval_app, ["regress", "--expected", str(repo / "eval" / "expected.yaml"),
                                        "--markdown", str(md)])
    assert res.exit_code == 0, res.output
    text = md.read_text(encoding="utf-8")
    assert "| toy/passthrough |" in text and "## Rewrite quality" in text
    assert "`convsearch eval rewrite --data ../shared/toy.jsonl --rewriter passthrough --json`" in text


def test_cli_missing_expected_file(tmp_path: Path) -> None:
    res = CliRunner().invoke(eval_app, ["regress", "--expected", str(tmp_path / "nope.yaml")])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: ") and "no such file" in res.stderr


def test_load_rows_validation(tmp_path: Path) -> None:
    p = tmp_path / "e.yaml"
    p.write_text("rows:\n  - name: x\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="needs 'name' and 'command'"):
        load_rows(p)
    p.write_text("rows:\n  - name: x\n    command: [eval, rewrite]\n    tolerance: -1\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="tolerance"):
        load_rows(p)
    p.write_text("rows: [\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="invalid YAML"):
        load_rows(p)


def test_matches_and_lookup() -> None:
    assert matches(0.5, 0.505, 0.01) and not matches(0.5, 0.52, 0.01)
    assert matches(None, None, 0.0) and not matches(None, 0.0, 1.0) and not matches(0.0, None, 1.0)
    assert matches(76, 76, 0.0)
    assert lookup({"a": {"b.c": 1, "b": {"c": 2}}}, "a.b.c") == 2
    with pytest.raises(KeyError):
        lookup({"a": {}}, "a.x")


def test_markdown_report_of_unrun_rows_uses_expected(repo: Path) -> None:
    rows = load_rows(repo / "eval" / "expected.yaml")
    text = markdown_report(rows)
    assert "| toy/passthrough | 0.0000 | null | 0.0000 |" in text


def test_an_oracle_row_records_the_shipped_point_and_skips_a_missing_file(repo: Path, tmp_path: Path) -> None:
    path = repo / "eval" / "expected.yaml"
    path.write_text("rows:\n"
                    "  - name: oracle/toy\n"
                    "    command: eval oracle --data ../shared/toy.jsonl --json\n"
                    "    tolerance: 0.5\n"
                    "    expected: {}\n"
                    "  - name: oracle/two\n"
                    "    command: eval oracle --data ../shared/toy.jsonl --data ../shared/gone.jsonl --json\n"
                    "    tolerance: 0.5\n"
                    "    expected: {}\n", encoding="utf-8")
    lines: list[str] = []
    code = run_regress(path, update=True, echo=lines.append, allow_missing_data=True)
    assert code == 0
    assert any(line.startswith("SKIP  oracle/two: data not found") and "gone.jsonl" in line for line in lines)
    expected = yaml.safe_load(path.read_text(encoding="utf-8"))["rows"][0]["expected"]
    from convsearch.learned.auto import UNSURE_BELOW

    assert expected["sets.shared/toy.shipped.threshold"] == UNSURE_BELOW
    assert 0.0 <= expected["sets.shared/toy.shipped.calls_per_100"] <= 100.0
    assert "sets.shared/toy.shipped.rules_auto.recall@10" in expected
    md = tmp_path / "q.md"
    assert run_regress(path, markdown=md, echo=lambda _: None, allow_missing_data=True) == 0
    text = md.read_text(encoding="utf-8")
    assert "## auto with an oracle" in text and "| rules_auto calls_per_100 |" in text
