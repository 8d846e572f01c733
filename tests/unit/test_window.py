"""History window: last N user/assistant text messages; tool traffic, partial, blank and other roles dropped."""

from __future__ import annotations

import pytest

from convsearch import InMemoryBackend, InputError, Message, history_window, search_with_context
from convsearch.types import Document
from convsearch.window import to_messages


def U(s: str) -> Message:
    return Message("user", s)


def A(s: str) -> Message:
    return Message("assistant", s)


def test_keeps_the_last_n_messages_in_order():
    msgs = [U(f"问题 {i}") if i % 2 == 0 else A(f"answer {i}") for i in range(10)]
    win = history_window(msgs, 4)
    assert [m.content for m in win] == ["问题 6", "answer 7", "问题 8", "answer 9"]


def test_default_window_is_eight():
    msgs = [U(f"q{i}") for i in range(12)]
    assert [m.content for m in history_window(msgs)] == [f"q{i}" for i in range(4, 12)]


def test_zero_window_is_empty_and_short_history_is_whole():
    msgs = [U("AnySearch 支持哪些检索方式？"), A("BM25 and vectors.")]
    assert history_window(msgs, 0) == ()
    assert history_window(msgs, 8) == tuple(msgs)


def test_returns_a_tuple_of_the_same_message_objects():
    msgs = [U("Who founded SpaceX?")]
    win = history_window(msgs, 8)
    assert isinstance(win, tuple)
    assert win[0] is msgs[0]


RAW_WITH_TOOLS = [
    {"role": "system", "content": "You are a search assistant. 系统提示。"},
    {"role": "user", "content": "AnySearch 支持哪些检索方式？"},
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"NovaDB\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "NovaDB 企业版 LeakyCorp 内部数据"},
    {"role": "assistant", "content": "AnySearch 支持关键词、向量和混合检索。"},
    {"role": "assistant", "content": "正在生成…", "partial": True},
    {"role": "assistant", "content": "   \n\t "},
    {"role": "developer", "content": "developer note about NovaDB"},
]


def test_from_dict_marks_tool_calls_and_tool_results():
    msgs = to_messages(RAW_WITH_TOOLS)
    kinds = [m.kind for m in msgs]
    assert kinds[2] == "tool_call"
    assert kinds[3] == "tool_result"
    assert msgs[2].content == ""  # content None → ""
    assert msgs[5].partial is True
    assert Message.from_dict({"role": "function", "content": "x", "tool_call_id": "9"}).kind == "tool_result"
    assert Message.from_dict({"role": "assistant", "content": "x", "function_call": {"name": "f"}}).kind == "tool_call"


def test_from_dict_joins_openai_content_parts():
    m = Message.from_dict({"role": "user", "content": [{"type": "text", "text": "What about"},
                                                       {"type": "image_url", "image_url": {"url": "x"}},
                                                       {"type": "text", "text": "NovaDB?"}]})
    assert m.content.split() == ["What", "about", "NovaDB?"]


def test_window_drops_tool_traffic_partial_blank_and_other_roles():
    win = history_window(to_messages(RAW_WITH_TOOLS), 8)
    assert [(m.role, m.content) for m in win] == [
        ("user", "AnySearch 支持哪些检索方式？"),
        ("assistant", "AnySearch 支持关键词、向量和混合检索。"),
    ]
    assert not any("NovaDB" in m.content or "LeakyCorp" in m.content for m in win)


def test_window_counts_only_kept_messages():
    msgs = [U("q1"), Message("tool", "t", kind="tool_result"), U("q2"), Message("system", "s"),
            Message("assistant", "", kind="tool_call"), U("q3"), Message("assistant", "partial", partial=True)]
    assert [m.content for m in history_window(msgs, 2)] == ["q2", "q3"]


def test_tool_output_never_leaks_into_the_rewrite():
    backend = InMemoryBackend([Document("p", "AnySearch 价格：每月 99 元", title="AnySearch 价格")])
    r = search_with_context("价格呢？", RAW_WITH_TOOLS, backend=backend)
    assert "AnySearch" in r.standalone_query
    assert "NovaDB" not in r.standalone_query and "LeakyCorp" not in r.standalone_query
    assert r.trace.window_size == 2


def test_tool_output_never_leaks_into_the_rewrite_en():
    raw = [{"role": "user", "content": "Who founded SpaceX?"},
           {"role": "tool", "tool_call_id": "c", "content": "Blue Origin was founded by Jeff Bezos."},
           {"role": "assistant", "content": "", "tool_calls": [{"id": "c2"}]}]
    r = search_with_context("When did it first launch a rocket?", raw, backend=InMemoryBackend())
    assert "SpaceX" in r.standalone_query
    assert "Blue Origin" not in r.standalone_query and "Bezos" not in r.standalone_query


@pytest.mark.parametrize("role", ["robot", "customer", ""])
def test_unknown_role_is_an_input_error_naming_it(role):
    with pytest.raises(InputError) as ei:
        to_messages([{"role": "user", "content": "hi"}, {"role": role, "content": "你好"}])
    msg = str(ei.value)
    assert repr(role) in msg
    assert "message 1" in msg


def test_unknown_role_reaches_the_pipeline_as_input_error():
    with pytest.raises(InputError, match="'bot'"):
        search_with_context("它多少钱？", [{"role": "bot", "content": "AnySearch"}], backend=InMemoryBackend())


def test_unknown_role_allowed_when_not_strict_and_then_dropped():
    msgs = to_messages([{"role": "robot", "content": "x"}, {"role": "user", "content": "y"}], strict_roles=False)
    assert [m.role for m in msgs] == ["robot", "user"]
    assert [m.content for m in history_window(msgs)] == ["y"]
