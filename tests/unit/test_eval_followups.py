"""`eval followups` (substring checks per category), the tune/frozen split by dialog, and its regress row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from convsearch.errors import DataFileError
from convsearch.eval.cli import eval_app
from convsearch.eval.followups import (
    evaluate_followups,
    followups_half,
    load_followups,
    parse_case,
    passes,
)
from convsearch.eval.regress import run_regress
from convsearch.eval.split import dialog_key, half_of_dialog, select_half
from convsearch.rewrite.base import Passthrough, Scripted

CASES = [
    {"id": "z-swap-1", "lang": "zh", "category": "swap", "history": ["北京明天天气怎么样？", "北京明天晴。"],
     "history_roles": ["user", "assistant"], "question": "那广州呢？", "rewrite": "广州明天天气怎么样",
     "needs_rewrite": True, "must": ["广州"], "must_any": [["明天"], ["天气", "气温"]], "must_not": ["北京"]},
    {"id": "e-noise-1", "lang": "en", "category": "noise",
     "history": ["You are a travel assistant.", "Will it be hot in Lisbon?", '{"high_c": 31}', "Yes, 31°C."],
     "history_roles": ["system", "user", "tool", "assistant"], "question": "Are the beaches crowded?",
     "rewrite": "Are the beaches near Lisbon crowded?", "needs_rewrite": True, "must": ["Lisbon"],
     "must_not": ["high_c"]},
    {"id": "e-keep-1", "lang": "en", "category": "keep", "history": ["How do I renew a passport?", "Form DS-82."],
     "history_roles": ["user", "assistant"], "question": "How long should I boil an egg?",
     "rewrite": "How long should I boil an egg?", "needs_rewrite": False, "exact": "How long should I boil an egg?"},
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    p = tmp_path / "followups.jsonl"
    p.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in CASES) + "\n", encoding="utf-8")
    return p


def test_checks_must_must_any_must_not_exact() -> None:
    swap, _, keep = (parse_case(c) for c in CASES)
    assert passes(swap, "广州明天天气怎么样")
    assert passes(swap, "广州明天气温")  # one string of each must_any group is enough
    assert not passes(swap, "广州天气怎么样")  # a must_any group unmet
    assert not passes(swap, "北京和广州明天天气")  # a must_not string present
    assert not passes(swap, "那广州呢？")  # the raw question fails
    assert passes(keep, "How long should I boil an egg?")
    assert not passes(keep, "How long should I boil an egg for a passport?")  # exact


def test_checks_are_case_insensitive() -> None:
    noise = parse_case(CASES[1])
    assert passes(noise, "are the beaches near LISBON crowded?")


def test_evaluate_reports_categories_copy_and_failures(data_file: Path) -> None:
    cases = load_followups(data_file)
    rw = Scripted({"那广州呢？": "广州明天天气怎么样",
                   "Are the beaches crowded?": "Are the beaches near Lisbon crowded?"})
    report = evaluate_followups(cases, rw)
    s = report["systems"]
    assert s["copy"]["pass"] == pytest.approx(1 / 3) and s["copy"]["categories"]["keep"] == 1.0
    assert s["scripted"]["pass"] == 1.0 and s["scripted"]["failed"] == [] and s["scripted"]["min_category"] == 1.0
    assert s["copy"]["failed"] == ["z-swap-1", "e-noise-1"]
    assert s["scripted"]["langs"] == {"en": 1.0, "zh": 1.0}


def test_system_and_tool_turns_never_reach_the_rewriter(data_file: Path) -> None:
    rw = Scripted({})
    evaluate_followups(load_followups(data_file), rw)
    roles = {m.role for history, _ in rw.calls for m in history}
    assert roles == {"user", "assistant"}
    assert all("high_c" not in m.content for history, _ in rw.calls for m in history)


@pytest.mark.parametrize("patch, problem", [
    ({"history_roles": ["user", "robot"]}, "unknown history role(s) 'robot'"),
    ({"history_roles": ["user"]}, "history has 2 turns but history_roles has 1"),
    ({"must_any": ["广州"]}, "must_any"),
    ({"category": 3}, "'category' must be a string"),
])
def test_bad_case_is_one_clear_error(patch: dict, problem: str) -> None:
    with pytest.raises(DataFileError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_case({**CASES[0], **patch}, path="f.jsonl", line=3)


def test_split_is_by_dialog_and_deterministic() -> None:
    # every turn of one dialog shares its first message, so it lands in one half
    assert dialog_key(["北京明天天气怎么样？", "晴"], "那广州呢？") == dialog_key(["北京明天天气怎么样？"], "x")
    assert dialog_key([], "北京明天天气怎么样？") == "北京明天天气怎么样？"
    keys = [f"dialog {i}" for i in range(400)]
    halves = [half_of_dialog(k) for k in keys]
    assert halves == [half_of_dialog(k) for k in keys]
    assert 150 < halves.count("tune") < 250  # about half each
    items = [([k], "q") for k in keys]
    tune = select_half(items, "tune", key=lambda it: it)
    frozen = select_half(items, "frozen", key=lambda it: it)
    assert len(tune) + len(frozen) == 400 and not set(map(id, tune)) & set(map(id, frozen))
    with pytest.raises(ValueError, match="unknown half"):
        select_half(items, "train", key=lambda it: it)


def test_halves_partition_the_cases(data_file: Path) -> None:
    cases = load_followups(data_file)
    ids = [c.id for c in followups_half(cases, "tune")] + [c.id for c in followups_half(cases, "frozen")]
    assert sorted(ids) == sorted(c["id"] for c in CASES)


def test_cli_table_json_and_errors(data_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(eval_app, ["followups", "--data", str(data_file), "--rewriter", "passthrough"])
    assert res.exit_code == 0, res.output
    assert "keep" in res.output and "swap" in res.output and "failed (2)" in res.output
    res = runner.invoke(eval_app, ["followups", "--data", str(data_file), "--half", "tune", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["half"] == "tune"
    res = runner.invoke(eval_app, ["followups", "--data", str(tmp_path / "none.jsonl")])
    assert res.exit_code != 0 and "no such file" in res.output and "Traceback" not in res.output


def test_regress_runs_a_followups_row(data_file: Path, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    expected = tmp_path / "expected.yaml"
    expected.write_text("rows:\n- name: followups/toy\n  command: eval followups --data followups.jsonl "
                        "--rewriter passthrough --json\n  expected: {}\n", encoding="utf-8")
    lines: list[str] = []
    assert run_regress(expected, update=True, echo=lines.append) == 0
    text = expected.read_text(encoding="utf-8")
    assert "systems.copy.pass" in text and "systems.passthrough.categories.keep" in text
    assert run_regress(expected, echo=lines.append) == 0


def test_passthrough_on_the_cases_equals_copy(data_file: Path) -> None:
    report = evaluate_followups(load_followups(data_file), Passthrough())
    assert report["systems"]["passthrough"]["pass"] == report["systems"]["copy"]["pass"]
