"""The JSONL loader, topic_text and MuDoCo detokenization."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from convsearch.errors import DataFileError
from convsearch.eval.data import detokenize, load_records, parse_record, topic_text
from convsearch.types import Message


def rec(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "d1_q2", "dataset": "toy", "split": "dev", "lang": "en",
                            "history": ["who founded it?", "Jane Doe"], "history_roles": ["user", "assistant"],
                            "question": "when?", "rewrite": "when did Jane Doe found it?", "needs_rewrite": True}
    base.update(kw)
    return base


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in lines) + "\n",
                    encoding="utf-8")
    return path


def test_load_records_and_messages(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "a.jsonl", [rec(), "", rec(id="d1_q3", topic="Jane Doe")])
    records = load_records(p)
    assert [r.id for r in records] == ["d1_q2", "d1_q3"]
    assert records[0].messages() == [Message("user", "who founded it?"), Message("assistant", "Jane Doe")]
    assert records[0].needs_rewrite is True
    assert load_records(p, limit=1)[0].id == "d1_q2" and len(load_records(p, limit=1)) == 1


def test_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "bad.jsonl", [rec(), "", '{"id": "x", oops}'])
    with pytest.raises(DataFileError) as info:
        load_records(p)
    assert info.value.line == 3
    assert info.value.path == str(p)
    assert f"{p}:3: invalid JSON" in str(info.value)


@pytest.mark.parametrize(("bad", "problem"), [
    (rec(question=None), "field 'question' must be a string"),
    ({"id": "x", "rewrite_a": "a"}, "missing field 'question'"),
    (rec(history_roles=["user"]), "history has 2 turns but history_roles has 1"),
    (rec(history_roles=["user", "bot"]), "unknown history role(s) 'bot'; expected one of: assistant, developer"),
    (rec(history="not a list"), "field 'history' must be a list of strings"),
    (rec(qrels={"d": "high"}), "integer grades"),
    ([1, 2], "expected a JSON object"),
])
def test_schema_problems_are_data_file_errors(tmp_path: Path, bad: Any, problem: str) -> None:
    p = write_jsonl(tmp_path / "bad.jsonl", [rec(), bad])
    with pytest.raises(DataFileError, match=None) as info:
        load_records(p)
    assert info.value.line == 2
    assert problem in str(info.value)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no such file"):
        load_records(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="no records"):
        load_records(tmp_path / "empty.jsonl")


def test_defaults_when_optional_fields_are_absent() -> None:
    r = parse_record({"id": "1", "history": [], "history_roles": [], "question": "天气怎么样", "rewrite": "天气怎么样"},
                     default_dataset="mine")
    assert (r.dataset, r.lang, r.needs_rewrite, r.topic) == ("mine", "zh", False, None)


@pytest.mark.parametrize(("topic", "expected"), [
    ({"wikipedia_title": "Frank Zappa", "section_title": "Disbandment"}, "Frank Zappa: Disbandment"),
    ({"wikipedia_title": "Frank Zappa"}, "Frank Zappa"),
    ({"title": "head and neck cancer", "description": "A person is trying to compare…"}, "head and neck cancer"),
    ("  Finding   a university ", "Finding a university"),
    ({"domain": "calling"}, None),
    (None, None),
    ("", None),
])
def test_topic_text(topic: Any, expected: str | None) -> None:
    assert topic_text({"topic": topic}) == expected
    assert topic_text(parse_record(rec(topic=topic))) == expected


@pytest.mark.parametrize(("raw", "clean"), [
    ("I ca n't do n't wo n't", "I can't don't won't"),
    ("Who 's there ? I 'm here , I 'll go .", "Who's there? I'm here, I'll go."),
    ("Show album `` Workout `` to Amber ?", 'Show album "Workout" to Amber?'),
    ("You have 25 % battery left !", "You have 25% battery left!"),
    ("Bubba ( Billy ) .", "Bubba (Billy)."),
    ("No - try his work number", "No - try his work number"),
])
def test_detokenize(raw: str, clean: str) -> None:
    assert detokenize(raw) == clean


def test_mudoco_records_are_detokenized_on_load() -> None:
    r = parse_record(rec(dataset="mudoco-qr", history=["Call Joy 's phone .", "Calling ."], question="I do n't know .",
                         rewrite="I do n't know Joy 's number ."))
    assert r.history == ("Call Joy's phone.", "Calling.")
    assert (r.question, r.rewrite) == ("I don't know.", "I don't know Joy's number.")
    other = parse_record(rec(question="ca n't ."))
    assert other.question == "ca n't ."  # only mudoco text is touched
