"""The framework adapters' shared core, without any framework: history in every shape, document metadata."""

from __future__ import annotations

import enum
from types import SimpleNamespace

import pytest

from convsearch import InMemoryBackend
from convsearch.errors import InputError
from convsearch.integrations.core import Turn, hit_metadata, to_messages
from convsearch.types import Message


class Role(enum.Enum):
    USER = "user"
    ASSISTANT = "assistant"


def test_every_history_shape_becomes_our_messages():
    got = to_messages([
        Message("user", "a"),
        {"role": "human", "content": "b"},
        ("ai", "c"),
        SimpleNamespace(type="human", content="d"),                      # LangChain BaseMessage
        SimpleNamespace(type="ai", content=[{"type": "text", "text": "e"}], tool_calls=[]),
        SimpleNamespace(role=Role.ASSISTANT, content="f"),               # LlamaIndex ChatMessage
        SimpleNamespace(role=SimpleNamespace(value="user"), text="g"),   # Haystack ChatMessage
    ])
    assert [(m.role, m.content) for m in got] == [("user", "a"), ("user", "b"), ("assistant", "c"), ("user", "d"),
                                                   ("assistant", "e"), ("assistant", "f"), ("user", "g")]
    assert to_messages(None) == [] and to_messages([]) == []


def test_tool_messages_are_marked_so_the_window_drops_them():
    got = to_messages([SimpleNamespace(type="tool", content="{}"),
                       SimpleNamespace(type="ai", content="", tool_calls=[{"id": 1}])])
    assert [m.kind for m in got] == ["tool_result", "tool_call"]


@pytest.mark.parametrize("bad", [[{"role": "wizard", "content": "x"}], [("robot", "x")], [42]])
def test_unreadable_history_is_one_clear_input_error(bad):
    with pytest.raises(InputError):
        to_messages(bad)


def test_metadata_says_where_a_result_is_from_and_how_it_was_found(corpus):
    r = Turn(InMemoryBackend(corpus)).run("价格呢？", history=[("user", "AnySearch 支持哪些检索方式？")], k=3)
    md = hit_metadata(r, r.hits[0], 1)
    assert md["id"] == "zh-any-price" and md["citation"] == 1 and md["title"] == "AnySearch 价格"
    assert md["source"] == md["url"] == "https://www.anysearch.example/pricing" and md["date"] == "2024-06-01"
    assert md["standalone_query"] == "AnySearch 的价格" and md["original_query"] == "价格呢？"
    assert md["rewrite_reason"] == r.rewrite.reason and md["rewrite_method"] == r.rewrite.method
    en = Turn(InMemoryBackend(corpus)).run("When did it first launch a rocket?",
                                           history=[("user", "Who founded SpaceX?")], k=2)
    assert en.hits[0].id == "en-spacex-launch" and len(en.hits) <= 2


def test_a_session_id_needs_a_store(corpus):
    with pytest.raises(InputError, match="needs a history store"):
        Turn(InMemoryBackend(corpus)).run("价格呢？", session_id="s-1")
