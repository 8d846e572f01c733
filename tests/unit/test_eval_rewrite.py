"""evaluate_rewrite and the `eval rewrite` / `eval retrieval` commands on synthetic files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from convsearch.errors import ConfigError, InputError
from convsearch.eval.cli import eval_app
from convsearch.eval.data import load_records, parse_record
from convsearch.eval.rewrite_eval import evaluate_rewrite, last_user_plus_question
from convsearch.rewrite.base import Passthrough, Scripted
from convsearch.types import Message, RewriteResult

RECORDS = [
    {"id": "d1_q2", "dataset": "toy-en", "lang": "en", "history": ["who founded Acme?", "Jane Doe founded it."],
     "history_roles": ["user", "assistant"], "question": "when did she found it?",
     "rewrite": "when did Jane Doe found Acme?", "topic": {"title": "Acme"}},
    {"id": "d1_q3", "dataset": "toy-en", "lang": "en", "history": [], "history_roles": [],
     "question": "What is Acme?", "rewrite": "What is Acme?"},
    {"id": "z_1", "dataset": "toy-zh", "lang": "zh", "history": ["你知道板泉井水吗", "知道"],
     "history_roles": ["user", "assistant"], "question": "她是歌手", "rewrite": "板泉井水是歌手"},
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    p = tmp_path / "toy.jsonl"
    p.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in RECORDS) + "\n", encoding="utf-8")
    return p


def test_baselines_and_system_side_by_side(data_file: Path) -> None:
    records = load_records(data_file)
    rw = Scripted({"when did she found it?": "when did Jane Doe found Acme?", "她是歌手": "板泉井水是歌手"})
    rep = evaluate_rewrite(records, rw)
    assert set(rep["datasets"]) == {"toy-en", "toy-zh"}
    en = rep["datasets"]["toy-en"]
    assert en["n"] == 2 and en["lang"] == "en" and en["gold_changed"] == 0.5
    assert list(en["systems"]) == ["copy", "last_user+q", "scripted"]
    copy, sys_ = en["systems"]["copy"], en["systems"]["scripted"]
    assert copy["rest_f1"] == 0.0 and copy["em"] == 0.5 and copy["faithful"] is None and copy["changed"] == 0.0
    assert sys_["em"] == 1.0 and sys_["rest_f1"] == 1.0 and sys_["gate_acc"] == 1.0 and sys_["faithful"] == 1.0
    assert sys_["bleu"] == pytest.approx(100.0)
    assert sys_["fell_back"] == 0.5  # Scripted falls back on the unscripted "What is Acme?"
    assert sys_["latency_mean_ms"] is not None and copy["latency_mean_ms"] is None
    zh = rep["datasets"]["toy-zh"]["systems"]
    assert zh["scripted"]["em"] == 1.0 and zh["copy"]["rest_f1"] == 0.0
    # last_user+q adds 你/知道/板泉/井水/吗 (5) where gold adds 板泉/井水 (2): P=2/5, R=1
    assert zh["last_user+q"]["rest_p1"] == pytest.approx(0.4) and zh["last_user+q"]["rest_r1"] == 1.0


def test_last_user_plus_question() -> None:
    rec = parse_record({**RECORDS[0], "history": ["a?", "b.", "c?", "d."], "history_roles": ["user", "assistant"] * 2})
    assert last_user_plus_question(rec) == "c? when did she found it?"
    assert last_user_plus_question(parse_record(RECORDS[1])) == "What is Acme?"


class _Recording:
    name = "recording"

    def __init__(self) -> None:
        self.seen: list[tuple[Sequence[Message], str, str | None]] = []

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None, decision: object = None) -> RewriteResult:
        self.seen.append((history, query, topic))
        if "歌手" in query:
            raise InputError("refuse")
        return RewriteResult(query, query, "recording", "", False)


def test_history_topic_and_errors_reach_the_report(data_file: Path) -> None:
    records = load_records(data_file)
    rw = _Recording()
    rep = evaluate_rewrite(records, rw)
    assert rw.seen[0] == ([Message("user", "who founded Acme?"), Message("assistant", "Jane Doe founded it.")],
                          "when did she found it?", "Acme")
    assert rep["datasets"]["toy-zh"]["systems"]["recording"]["errors"] == 1
    rw2 = _Recording()
    evaluate_rewrite(records, rw2, use_topic=False)
    assert rw2.seen[0][2] is None


def test_empty_question_or_rewrite_is_skipped() -> None:
    recs = [parse_record({**RECORDS[1], "question": ""}), parse_record(RECORDS[1])]
    rep = evaluate_rewrite(recs, Passthrough())
    assert rep["datasets"]["toy-en"]["skipped"] == 1 and rep["datasets"]["toy-en"]["n"] == 1


# --- the CLI ---------------------------------------------------------------------------------------
runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(eval_app, list(args))


def test_cli_rewrite_json_and_table(data_file: Path) -> None:
    res = invoke("rewrite", "--data", str(data_file), "--rewriter", "passthrough", "--json")
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["rewriter"] == "passthrough" and rep["data"] == str(data_file)
    res = invoke("rewrite", "--data", str(data_file), "--rewriter", "passthrough", "--limit", "1", "--no-topic")
    assert res.exit_code == 0
    assert "last_user+q" in res.stdout and "toy-en" in res.stdout and "toy-zh" not in res.stdout


def test_cli_missing_file_is_one_clean_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    res = invoke("rewrite", "--data", str(missing), "--rewriter", "passthrough")
    assert res.exit_code == 2
    assert res.stderr.strip() == f"error: {missing}: no such file"
    assert "Traceback" not in res.output


def test_cli_bad_line_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps(RECORDS[0]) + "\n{not json\n", encoding="utf-8")
    for cmd in ("rewrite", "retrieval"):
        res = invoke(cmd, "--data", str(p), "--rewriter", "passthrough")
        assert res.exit_code == 2
        assert res.stderr.startswith(f"error: {p}:2: invalid JSON")
        assert "Traceback" not in res.output


def test_cli_unavailable_rewriter_is_a_config_error(data_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import convsearch.rewrite as rewrite_pkg

    def missing(name: str) -> Any:
        raise ConfigError(f"unknown rewriter {name!r}")

    monkeypatch.setattr(rewrite_pkg, "get_rewriter", missing)
    res = invoke("rewrite", "--data", str(data_file), "--rewriter", "llm")
    assert res.exit_code == ConfigError.exit_code
    assert "unknown rewriter 'llm'" in res.stderr

    def not_installed(name: str) -> Any:
        raise ModuleNotFoundError("No module named 'convsearch.rewrite.llm'")

    monkeypatch.setattr(rewrite_pkg, "get_rewriter", not_installed)
    res = invoke("rewrite", "--data", str(data_file), "--rewriter", "auto")
    assert res.exit_code == ConfigError.exit_code
    assert "rewriter 'auto' is not available" in res.stderr


def test_cli_rejects_unknown_rewriter_names(data_file: Path) -> None:
    res = invoke("rewrite", "--data", str(data_file), "--rewriter", "gpt")
    assert res.exit_code == 2
