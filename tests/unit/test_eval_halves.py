"""`convsearch eval halves`: every dev set on its tuning and frozen half, rendered as section 5b."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from convsearch.errors import DataFileError
from convsearch.eval.commands import eval_app
from convsearch.eval.halves import HEADING, dev_sets, halves_report, load_report, render_markdown, splice_section
from convsearch.eval.split import dialog_key, half_of_dialog

# dialogs in both halves (the split is by the dialog's first turn): found, not assumed
OPENERS = [f"who founded company {i}?" for i in range(12)] + [f"公司 {i} 是谁创办的？" for i in range(12)]


def _records(lang: str) -> list[dict]:
    out = []
    for i, opener in enumerate(o for o in OPENERS if (o.isascii()) == (lang == "en")):
        answer = f"Jane Doe{i} founded it." if lang == "en" else f"张三{i}创办了它。"
        q, gold = ("when?", f"when did Jane Doe{i} found it?") if i % 3 else ("What is Python?", "What is Python?")
        out.append({"id": f"d{i}_q2", "dataset": f"toy-{lang}", "lang": lang, "history": [opener, answer],
                    "history_roles": ["user", "assistant"], "question": q, "rewrite": gold})
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "main"
    (root / "eval").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname='x'\n", encoding="utf-8")
    shared = tmp_path / "shared"
    shared.mkdir()
    for lang in ("en", "zh"):
        lines = [json.dumps(r, ensure_ascii=False) for r in _records(lang)]
        (shared / f"toy-{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "eval" / "expected.yaml").write_text(
        "rows:\n"
        "  - name: rewrite/toy-en/rules\n"
        "    command: eval rewrite --data ../shared/toy-en.jsonl --rewriter rules --json\n"
        "  - name: rewrite/toy-en-notopic/rules\n"
        "    command: eval rewrite --data ../shared/toy-en.jsonl --rewriter rules --no-topic --json\n"
        "  - name: rewrite/toy-en/passthrough\n"
        "    command: eval rewrite --data ../shared/toy-en.jsonl --rewriter passthrough --json\n"
        "  - name: rewrite/toy-zh/rules\n"
        "    command: eval rewrite --data ../shared/toy-zh.jsonl --rewriter rules --json\n",
        encoding="utf-8")
    return root


def test_the_sets_are_the_rules_rows_of_the_expected_file(repo: Path) -> None:
    sets = dev_sets(repo / "eval" / "expected.yaml")
    assert [(n, p.name, t) for n, p, t in sets] == [("toy-en", "toy-en.jsonl", True), ("toy-zh", "toy-zh.jsonl", True)]


def test_each_half_is_scored_against_copy_and_the_halves_add_up(repo: Path) -> None:
    report = halves_report(repo / "eval" / "expected.yaml")
    assert set(report["sets"]) == {"toy-en", "toy-zh"}
    en = report["sets"]["toy-en"]
    halves = {half_of_dialog(dialog_key([o], "")) for o in OPENERS if o.isascii()}
    assert halves == {"tune", "frozen"}
    assert en["tune"]["n"] + en["frozen"]["n"] == en["all"]["n"] == 12
    # "What is Python?" needed nothing and the rules leave it alone: keep-EM counts those turns
    assert en["all"]["n_keep"] == 4 and en["all"]["keep_em"] == 1.0
    assert en["all"]["copy_em"] == pytest.approx(4 / 12)
    assert en["all"]["rest_f1"] > 0  # "when?" gets Jane Doe back
    assert report["followups"] == {}


def test_markdown_shows_start_and_now_and_replaces_only_its_section(repo: Path, tmp_path: Path) -> None:
    report = halves_report(repo / "eval" / "expected.yaml")
    start = json.loads(json.dumps(report))
    start["commit"] = "abc1234"
    start["sets"]["toy-en"]["all"]["rest_f1"] -= 0.05
    text = render_markdown(report, start)
    assert text.startswith(HEADING) and "commit abc1234" in text and "(+5.00)" in text
    doc = f"# Benchmarks\n\n## 5. before\n\nx\n\n{HEADING}\n\nold table\n\n## 5c. after\n\ny\n"
    new = splice_section(doc, text)
    assert "old table" not in new and new.count(HEADING) == 1
    assert new.startswith("# Benchmarks\n\n## 5. before\n\nx\n\n") and new.endswith("## 5c. after\n\ny\n")
    with pytest.raises(DataFileError):
        splice_section("# nothing here\n", text)


def test_cli_writes_the_section_and_a_bad_start_file_is_one_clear_line(repo: Path) -> None:
    md = repo / "BENCH.md"
    md.write_text(f"# B\n\n{HEADING}\n\nstale\n\n## next\n", encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(eval_app, ["halves", "--expected", str(repo / "eval" / "expected.yaml"), "--start",
                                   str(repo / "missing.json"), "--markdown", str(md)])
    assert res.exit_code == 0, res.output
    body = md.read_text(encoding="utf-8")
    assert "stale" not in body and "| toy-zh | all |" in body and body.endswith("## next\n")
    bad = repo / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    res = runner.invoke(eval_app, ["halves", "--expected", str(repo / "eval" / "expected.yaml"), "--start", str(bad)])
    assert res.exit_code != 0 and "error:" in res.output and "Traceback" not in res.output
    with pytest.raises(DataFileError):
        load_report(bad)


def test_cli_never_replaces_a_whole_file_without_the_section(repo: Path) -> None:
    other = repo / "README.md"
    other.write_text("# Project\n\nprose that must stay\n", encoding="utf-8")
    res = CliRunner().invoke(eval_app, ["halves", "--expected", str(repo / "eval" / "expected.yaml"),
                                        "--markdown", str(other)])
    assert res.exit_code != 0 and "has no section '## 5b.'" in res.output and "Traceback" not in res.output
    assert other.read_text(encoding="utf-8") == "# Project\n\nprose that must stay\n"


def test_other_follow_up_rows_are_scored_whole_and_rendered(repo: Path) -> None:
    case = {"id": "x-en-swap-1", "lang": "en", "category": "swap",
            "history": ["Does AnySearch support Chinese?", "Yes."], "history_roles": ["user", "assistant"],
            "question": "What about NovaDB?",
            "rewrite": "Does NovaDB support Chinese?", "needs_rewrite": True, "must": ["NovaDB", "Chinese"]}
    for name in ("dev", "more"):
        (repo / "eval" / f"{name}.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    path = repo / "eval" / "expected.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "".join(
        f"  - name: followups/{n}/rules\n    command: eval followups --data eval/{n}.jsonl --rewriter rules --json\n"
        for n in ("dev", "more")), encoding="utf-8")
    report = halves_report(path)
    # the first follow-ups row is the dev set (split into halves); the others are scored whole
    assert report["followups"]["all"]["n"] == 1
    assert report["others"] == {"more": {"n": 1, "pass": 1.0, "copy_pass": 0.0}}
    md = render_markdown(report, {"others": {"more": {"n": 1, "pass": 0.0, "copy_pass": 0.0}}})
    assert "more 0.0% → **100.0%** (n 1, copy 0.0%)" in md
