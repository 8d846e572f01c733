"""``rewrite_batch`` in-process: one output record per input, same order, bad lines fail before writing."""

from __future__ import annotations

import json

import pytest

from convsearch import ConfigError, DataFileError
from convsearch.batch import rewrite_batch

RECORDS = [
    {"id": "z1", "history": ["深圳最近三天适合露营吗？", "适合，天气晴朗。"], "history_roles": ["user", "assistant"],
     "question": "那番禺呢？"},
    {"id": "e1", "history": ["Who founded SpaceX?"], "question": "When did it first launch a rocket?"},
    {"id": "s1", "history": ["Who founded SpaceX?"], "history_roles": ["user"], "question": "What is the capital of France?"},
    {"id": "t1", "history": [], "history_roles": [], "question": "价格是多少", "topic": "AnySearch"},
    {"id": "z2", "history": ["AnySearch 支持哪些检索方式？"], "history_roles": ["user"], "question": "价格呢？"},
]
FIELDS = {"id", "rewrite", "rewritten", "method", "reason", "latency_ms"}


def _write(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _read(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_rules_batch(tmp_path):
    src, dst = _write(tmp_path / "in.jsonl", RECORDS), tmp_path / "out.jsonl"
    n, secs = rewrite_batch(src, dst, "rules")
    out = _read(dst)
    assert n == len(out) == len(RECORDS) and secs >= 0
    assert [o["id"] for o in out] == [r["id"] for r in RECORDS]
    assert all(set(o) == FIELDS for o in out)
    by = {o["id"]: o for o in out}
    assert by["z1"]["rewrite"] == "番禺最近三天适合露营吗" and by["z1"]["rewritten"] is True
    assert "SpaceX" in by["e1"]["rewrite"]
    assert by["s1"] == {**by["s1"], "rewrite": "What is the capital of France?", "rewritten": False}
    assert "AnySearch" in by["t1"]["rewrite"]  # the topic is the session context
    assert by["z2"]["rewrite"] == "AnySearch 的价格"
    assert all(o["method"] == "rules" and isinstance(o["latency_ms"], float) for o in out)


def test_passthrough_batch_returns_each_question(tmp_path):
    src, dst = _write(tmp_path / "in.jsonl", RECORDS), tmp_path / "out.jsonl"
    rewrite_batch(src, dst, "passthrough")
    out = _read(dst)
    assert [o["rewrite"] for o in out] == [r["question"] for r in RECORDS]
    assert not any(o["rewritten"] for o in out)
    assert {o["method"] for o in out} == {"passthrough"}


def test_bad_line_fails_before_anything_is_written(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(RECORDS[0], ensure_ascii=False) + "\n{not json\n", encoding="utf-8")
    dst = tmp_path / "out.jsonl"
    with pytest.raises(DataFileError) as ei:
        rewrite_batch(src, dst)
    assert ei.value.line == 2
    assert not dst.exists() and not (tmp_path / "out.jsonl.tmp").exists()


def test_unknown_role_in_batch_names_line(tmp_path):
    src = _write(tmp_path / "in.jsonl", [RECORDS[1], {"id": "x", "history": ["hi"], "history_roles": ["robot"],
                                                      "question": "q"}])
    with pytest.raises(DataFileError) as ei:
        rewrite_batch(src, tmp_path / "out.jsonl")
    assert ei.value.line == 2 and "robot" in str(ei.value)


def test_missing_input_and_unknown_rewriter(tmp_path):
    with pytest.raises(DataFileError, match="no such file"):
        rewrite_batch(tmp_path / "nope.jsonl", tmp_path / "out.jsonl")
    with pytest.raises(ConfigError):
        rewrite_batch(_write(tmp_path / "in.jsonl", RECORDS), tmp_path / "out.jsonl", "gpt-9")


def test_openai_roles_are_accepted_and_filtered(tmp_path):
    """system / tool / function / developer turns are accepted and filtered as the window filters them."""
    recs = [{"id": "r1", "history": ["You are terse.", "深圳最近三天适合露营吗？", '{"tool": "weather", "深圳": "晴"}',
                                     "适合，天气晴朗。"],
             "history_roles": ["system", "user", "tool", "assistant"], "question": "那番禺呢？"},
            {"id": "r2", "messages": [{"role": "developer", "content": "Answer in English."},
                                      {"role": "user", "content": "Who founded SpaceX?"},
                                      {"role": "assistant", "content": "Elon Musk founded SpaceX in 2002."},
                                      {"role": "function", "content": '{"x": 1}'},
                                      {"role": "user", "content": "When did he found it?"}]}]
    dst = tmp_path / "out.jsonl"
    n, _ = rewrite_batch(_write(tmp_path / "in.jsonl", recs), dst)
    out = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
    assert n == 2
    assert out[0]["rewrite"].startswith("番禺") and "tool" not in out[0]["rewrite"]
    assert "Elon Musk" in out[1]["rewrite"] and "Answer in English" not in out[1]["rewrite"]
