"""`eval perturb`: the follow-ups re-typed, scored like `eval followups`, and its regress row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from convsearch.eval.cli import eval_app
from convsearch.eval.followups import load_followups, parse_case
from convsearch.eval.perturb import CASE_PERTURBATIONS, PERTURBATIONS, evaluate_perturbations
from convsearch.eval.regress import run_regress
from convsearch.rewrite.base import Passthrough, Scripted

CASES = [
    {"id": "z-swap-1", "lang": "zh", "category": "swap", "history": ["北京明天天气怎么样？", "北京明天晴。"],
     "history_roles": ["user", "assistant"], "question": "那广州呢？", "rewrite": "广州明天天气怎么样",
     "needs_rewrite": True, "must": ["广州", "天气"], "must_not": ["北京"]},
    {"id": "e-attr-1", "lang": "en", "category": "attr", "history": ["Is the Kindle Paperwhite waterproof?", "Yes."],
     "history_roles": ["user", "assistant"], "question": "How long does the battery last?",
     "rewrite": "How long does the Kindle Paperwhite battery last?", "needs_rewrite": True, "must": ["Kindle"]},
    {"id": "e-keep-1", "lang": "en", "category": "keep", "history": ["How do I renew a passport?", "Form DS-82."],
     "history_roles": ["user", "assistant"], "question": "How long should I boil an egg for ramen?",
     "rewrite": "How long should I boil an egg for ramen?", "needs_rewrite": False,
     "exact": "How long should I boil an egg for ramen?"},
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    p = tmp_path / "followups.jsonl"
    p.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in CASES) + "\n", encoding="utf-8")
    return p


def test_perturbations_apply_only_where_they_read_naturally() -> None:
    p = PERTURBATIONS
    assert p["no_final_mark"]("那广州呢？", "zh") == "那广州呢" and p["no_final_mark"]("and on Windows", "en") is None
    assert p["lower_case"]("What about DynamoDB?", "en") == "what about dynamodb?"
    assert p["lower_case"]("那广州呢？", "zh") is None
    assert p["courtesy_closer"]("那广州呢？", "zh") is None  # no 啊 after 呢
    assert p["courtesy_closer"]("有什么副作用？", "zh") == "有什么副作用啊？"
    assert p["courtesy_closer"]("And its price?", "en") == "And its price please?"
    assert p["question_wrapper"]("那广州呢？", "zh") is None  # no wrapper around a bare 呢-fragment
    assert p["question_wrapper"]("And its price?", "en") is None  # nor around an English fragment
    assert p["question_wrapper"]("How long does it last?", "en") == "can you tell me how long does it last?"
    assert p["courtesy_opener"]("What about X?", "en") == "hey, what about X?"
    assert p["courtesy_opener"]("DynamoDB vs Redis?", "en") == "hey, DynamoDB vs Redis?"  # a name keeps its case
    assert p["courtesy_closer"]("I'm done.", "en") is None  # a closer only on a question
    assert p["no_apostrophe"]("What is the fee? I don't know", "en") == "Whats the fee? I dont know"
    assert p["no_apostrophe"]("那广州呢？", "zh") is None


def test_lower_case_conversation_retypes_the_user_turns_and_the_question_only() -> None:
    retype = CASE_PERTURBATIONS["lower_case_conversation"]
    swap, attr, keep = (parse_case(c) for c in CASES)
    low = retype(attr)
    assert low is not None and low.question == "how long does the battery last?"
    assert low.history == ("is the kindle paperwhite waterproof?", "Yes.")  # the answer keeps its case
    assert low.must == attr.must  # the checks are the case's own (case-insensitive)
    assert retype(swap) is None  # Chinese
    lowered = parse_case({**CASES[1], "history": ["is the kindle waterproof?", "Yes, the Kindle is."]})
    assert retype(lowered) is None  # no user turn changes: that is `lower_case` of the question alone
    assert retype(keep) is not None


def test_a_case_perturbation_is_scored_on_its_retyped_history() -> None:
    attr = parse_case(CASES[1])
    # knows the question only after the history it was asked in as typed: lower-case history loses the case
    class ByHistory:
        name = "by-history"

        def rewrite(self, history, query, **kw):  # type: ignore[no-untyped-def]
            from convsearch.types import RewriteResult
            named = "Kindle" in history[0].content
            out = "How long does the Kindle battery last?" if named else query
            return RewriteResult(query, out, self.name, "scripted", False)

    report = evaluate_perturbations([attr], ByHistory())  # type: ignore[arg-type]
    conv = report["perturbations"]["lower_case_conversation"]
    assert report["pass_as_typed"] == 1.0 and conv["n"] == 1 and conv["lost"] == 1 and conv["pass"] == 0.0
    assert report["perturbations"]["lower_case"]["lost"] == 0  # the question alone in lower case: history intact


def test_lost_counts_cases_that_pass_as_typed_and_fail_re_typed(data_file: Path) -> None:
    cases = load_followups(data_file)
    # a rewriter that only knows the questions as typed: every re-typed needs-rewrite case fails
    rw = Scripted({"那广州呢？": "广州明天天气怎么样",
                   "How long does the battery last?": "How long does the Kindle battery last?"})
    report = evaluate_perturbations(cases, rw)
    assert report["pass_as_typed"] == 1.0
    opener = report["perturbations"]["courtesy_opener"]
    assert opener["n"] == 3 and opener["pass_as_typed"] == 1.0
    assert opener["lost"] == 2 and sorted(opener["lost_ids"]) == ["e-attr-1", "z-swap-1"]
    assert opener["pass"] == pytest.approx(1 / 3)  # the keep case passes: it comes back as re-typed


def test_keep_case_must_come_back_as_re_typed() -> None:
    keep = parse_case(CASES[2])
    report = evaluate_perturbations([keep], Passthrough())
    assert all(p["pass"] == 1.0 and p["lost"] == 0 for p in report["perturbations"].values() if p["n"])


def test_rules_read_courtesy_words(data_file: Path) -> None:
    from convsearch import RuleRewriter
    report = evaluate_perturbations(load_followups(data_file), RuleRewriter())
    assert report["pass_as_typed"] == 1.0 and report["errors"] == 0  # so a lost case below could show
    for name in ("courtesy_opener", "interjection", "courtesy_closer"):
        assert report["perturbations"][name]["lost"] == 0, name


def test_cli_table_json_errors_and_regress_row(data_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(eval_app, ["perturb", "--data", str(data_file), "--rewriter", "passthrough"])
    assert res.exit_code == 0, res.output
    assert "courtesy_opener" in res.output and "pass as typed=" in res.output
    res = runner.invoke(eval_app, ["perturb", "--data", str(data_file), "--json"])
    assert res.exit_code == 0 and set(json.loads(res.output)["perturbations"]) == {
        *PERTURBATIONS, *CASE_PERTURBATIONS}
    res = runner.invoke(eval_app, ["perturb", "--data", str(tmp_path / "none.jsonl")])
    assert res.exit_code != 0 and "no such file" in res.output and "Traceback" not in res.output
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    expected = tmp_path / "expected.yaml"
    expected.write_text("rows:\n- name: perturb/toy\n  command: eval perturb --data followups.jsonl "
                        "--rewriter passthrough --json\n  expected: {}\n", encoding="utf-8")
    lines: list[str] = []
    assert run_regress(expected, update=True, echo=lines.append) == 0
    text = expected.read_text(encoding="utf-8")
    assert "perturbations.courtesy_opener.lost" in text and "pass_as_typed" in text
    assert run_regress(expected, echo=lines.append) == 0
