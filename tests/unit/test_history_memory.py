"""Memory layers as pure functions: token budget, citation markers, user-stated facts, scopes, settings."""

from __future__ import annotations

import pytest

from convsearch.config import Settings
from convsearch.errors import ConfigError, InputError
from convsearch.history import (
    CitedResult,
    Fact,
    HistorySettings,
    Memory,
    Scope,
    Summary,
    cited_refs,
    extract_facts,
    fit_tokens,
)
from convsearch.history.memory import dedupe_tasks, summary_message
from convsearch.text import count_tokens
from convsearch.types import Message


def M(role: str, content: str) -> Message:
    return Message(role, content)


def test_fit_tokens_keeps_the_newest_within_the_budget():
    msgs = [M("user", "one two three"), M("assistant", "four five"), M("user", "six")]
    assert fit_tokens(msgs, 3) == (msgs[1], msgs[2])
    assert fit_tokens(msgs, 100) == tuple(msgs)
    assert fit_tokens(msgs, None) == tuple(msgs) and fit_tokens(msgs, 0) == tuple(msgs)
    assert fit_tokens([], 5) == ()


def test_fit_tokens_cuts_a_single_long_newest_message():
    long = M("user", "AnySearch 支持哪些检索方式？" * 50)
    (kept,) = fit_tokens([M("user", "older"), long], 10)
    assert count_tokens(kept.content.rstrip("…")) <= 10 and kept.content.endswith("…")


@pytest.mark.parametrize("text,refs", [
    ("AnySearch 专业版每月 99 元 [1]，企业版另议 [3][1]。", [1, 3]),
    ("见［2］和【4】", [2, 4]),
    ("no citations here [a] [1000]", []),
])
def test_cited_refs(text, refs):
    assert cited_refs(text) == refs


@pytest.mark.parametrize("text,facts", [
    ("我的预算是 5000 元，想买一台笔记本", {"budget": "5000 元"}),
    ("预算大概3万左右，推荐一款车", {"budget": "3万左右"}),
    ("我住在深圳，周末想去露营", {"location": "深圳"}),
    ("My budget is $500. Which tent should I buy?", {"budget": "$500"}),
    ("I live in San Francisco and need a gym", {"location": "San Francisco"}),
    ("I'm in Berlin, budget of 200 euros", {"location": "Berlin", "budget": "200 euros"}),
    ("AnySearch 支持哪些检索方式？", {}),
    ("I'm in trouble with my code", {}),
])
def test_extract_facts(text, facts):
    assert {f.key: f.value for f in extract_facts(text)} == facts


def test_extracted_facts_remember_their_source():
    assert extract_facts("预算 800 元", source="m7") == [Fact("budget", "800 元", "m7")]


def test_memory_history_puts_the_summary_first():
    s = Summary("topics: SpaceX", 10, 6, "extractive")
    w = (M("user", "Is it private?"),)
    assert Memory(window=w).history() == w
    assert Memory(window=w, summary=s).history() == (summary_message(s),) + w
    assert summary_message(s) == Message("user", "topics: SpaceX", name="summary")


def test_memory_render():
    m = Memory(window=(), summary=Summary("话题：AnySearch", 3, 3, "extractive"),
               tasks=(CitedResult("t1", 1, "d1", "AnySearch 价格", "https://a.example/p"),),
               profile=(Fact("budget", "5000 元"),))
    text = m.render()
    assert "话题：AnySearch" in text and "AnySearch 价格 (https://a.example/p)" in text and "budget = 5000 元" in text
    assert Memory(window=()).render() == ""


def test_dedupe_tasks_keeps_the_most_recent_round():
    a, b = CitedResult("t2", 1, "d1", "new"), CitedResult("t1", 2, "d1", "old")
    assert dedupe_tasks([a, b, CitedResult("t1", 1, "d2")]) == (a, CitedResult("t1", 1, "d2"))


@pytest.mark.parametrize("args", [("", "a", "s"), ("t", " ", "s"), ("t", "a", ""), ("t" * 129, "a", "s"),
                                  ("t", "a", "s" * 257), ("t", "a\n", "s"), (None, "a", "s")])
def test_bad_scopes_are_input_errors(args):
    with pytest.raises(InputError):
        Scope(*args)


def test_history_settings_from_the_environment():
    s = Settings.from_env({"CONVSEARCH_DB_URL": "postgresql://app:secret@127.0.0.1:5432/db",
                           "CONVSEARCH_MAX_MESSAGE_BYTES": "1024", "CONVSEARCH_SUMMARY_THRESHOLD": "20",
                           "CONVSEARCH_PROFILE": "on", "CONVSEARCH_DB_TIMEOUT": "0.5"})
    h = HistorySettings.of(s)
    assert (h.max_message_bytes, h.summary_threshold, h.profile, h.db_timeout) == (1024, 20, "on", 0.5)
    assert "secret" not in repr(s) and "secret" not in repr(h)
    d = HistorySettings.of(Settings())
    assert (d.db_url, d.max_message_bytes, d.summary_threshold, d.summary_chars, d.summary_keep, d.profile) == (
        None, 65536, 14, 1200, 8, "off")


@pytest.mark.parametrize("env", [{"CONVSEARCH_PROFILE": "maybe"}, {"CONVSEARCH_SUMMARY_THRESHOLD": "4"},
                                 {"CONVSEARCH_MAX_MESSAGE_BYTES": "0"}, {"CONVSEARCH_DB_TIMEOUT": "-1"}])
def test_bad_history_settings_are_config_errors(env):
    with pytest.raises(ConfigError):
        Settings.from_env(env)


@pytest.mark.parametrize("exc,base,status,code", [
    ("MessageTooLarge", "InputError", 413, 2),
    ("MessageIdConflict", "InputError", 409, 2),
    ("HistoryUnavailable", "ConvsearchError", 503, 7),
])
def test_history_errors_in_the_tree(exc, base, status, code):
    from convsearch import errors

    cls = getattr(errors, exc)
    assert issubclass(cls, getattr(errors, base)) and cls.http_status == status and cls.exit_code == code
    assert exc in errors.__doc__
