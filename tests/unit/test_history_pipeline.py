"""``search_with_context`` in a stored session: history from the store, turns recorded, summaries after 50
turns, shared rooms, the task stack, the opt-in profile, and the stateless fallback when the store is down."""

from __future__ import annotations

import pytest

from convsearch import InMemoryBackend, Settings, search_with_context
from convsearch.errors import MessageTooLarge
from convsearch.history import Conversation, InMemoryStore, Scope
from convsearch.types import Message

A = Scope("acme", "bot", "s1")


@pytest.fixture
def backend(corpus):
    return InMemoryBackend(corpus)


@pytest.fixture
def store():
    return InMemoryStore()


def conv(store, scope=A, **kw):
    kw.setdefault("refresh", "inline")
    return Conversation(store, scope, **kw)


def test_the_session_is_the_history(backend, store):
    c = conv(store)
    first = search_with_context("AnySearch 支持哪些检索方式？", backend=backend, session=c)
    assert first.memory is not None and first.memory.window == ()
    second = search_with_context("价格呢？", backend=backend, session=c)
    assert second.standalone_query == "AnySearch 的价格" and second.citations[0].id == "zh-any-price"
    assert [m.content for m in second.memory.window] == ["AnySearch 支持哪些检索方式？"]
    assert [m.content for m in store.messages(A)] == ["AnySearch 支持哪些检索方式？", "价格呢？"]
    assert "history" in second.trace.timings_ms and second.trace.notes == ()


def test_given_messages_do_not_override_a_working_store(backend, store):
    c = conv(store)
    search_with_context("AnySearch 支持哪些检索方式？", backend=backend, session=c)
    r = search_with_context("价格呢？", [{"role": "user", "content": "NovaDB 怎么样？"}], backend=backend, session=c)
    assert r.standalone_query == "AnySearch 的价格"


def test_without_a_session_nothing_changes(backend):
    r = search_with_context("价格呢？", [{"role": "user", "content": "NovaDB 怎么样？"}], backend=backend)
    assert r.standalone_query == "NovaDB 的价格" and r.memory is None


def test_unknown_session_is_an_empty_history(backend, store):
    r = search_with_context("价格呢？", backend=backend, session=conv(store, Scope("acme", "bot", "never-seen")))
    assert r.standalone_query == "价格呢？" and r.trace.window_size == 0 and r.trace.notes == ()


def test_store_down_runs_statelessly_with_the_given_messages(backend, store):
    store.down = True
    r = search_with_context("价格呢？", [{"role": "user", "content": "NovaDB 怎么样？"}], backend=backend,
                            session=conv(store))
    assert r.standalone_query == "NovaDB 的价格" and r.memory is None
    assert r.trace.notes == ("history store unavailable: the in-memory store is marked down; "
                             "ran statelessly with the 1 given messages",)
    store.down = False
    assert store.messages(A) == []


def test_store_failing_on_write_still_answers_and_says_so(backend, store, monkeypatch):
    from convsearch.errors import HistoryUnavailable

    def refuse(*a, **k):
        raise HistoryUnavailable("history store unavailable: database is locked")

    monkeypatch.setattr(store, "append", refuse)
    r = search_with_context("NovaDB 价格", backend=backend, session=conv(store))
    assert r.citations and r.trace.notes == ("history store unavailable: database is locked; this turn was not recorded",)


def test_a_retried_turn_is_stored_once(backend, store):
    c = conv(store).turn("turn-1")
    search_with_context("AnySearch 支持哪些检索方式？", backend=backend, session=c)
    search_with_context("AnySearch 支持哪些检索方式？", backend=backend, session=c)
    assert len(store.messages(A)) == 1


def test_tool_output_in_the_store_never_reaches_the_rewrite(backend, store):
    store.append(A, {"role": "user", "content": "AnySearch 支持哪些检索方式？"})
    store.append(A, Message("assistant", "", kind="tool_call"))
    store.append(A, Message("tool", "NovaDB NovaDB NovaDB", kind="tool_result"))
    r = search_with_context("价格呢？", backend=backend, session=conv(store))
    assert r.standalone_query == "AnySearch 的价格"
    assert all("NovaDB" not in m.content for m in r.memory.window)


FILLER_ZH = ["它支持私有部署吗？", "它有免费试用吗？", "它有哪些客户？", "它部署要多久？", "它怎么联系销售？"]  # pronouns keep the focus
FILLER_EN = ["Is it still private?", "How many employees does it have?", "Where is it based?",
             "Does it sell rides?", "What about its revenue?"]


@pytest.mark.parametrize("opening,filler,reply,follow_up,entity", [
    ("AnySearch 支持哪些检索方式？", FILLER_ZH, "是的。", "它的价格呢？", "AnySearch"),
    ("Who founded SpaceX?", FILLER_EN, "Yes, it is.", "Who is its CEO?", "SpaceX"),
])
def test_after_50_turns_the_summary_keeps_the_topic(backend, opening, filler, reply, follow_up, entity):
    def play(refresh):
        store = InMemoryStore()
        c = conv(store, refresh=refresh)
        search_with_context(opening, backend=backend, session=c)
        c.add({"role": "assistant", "content": reply})
        for i in range(24):  # 50 messages in all
            search_with_context(filler[i % len(filler)], backend=backend, session=c)
            c.add({"role": "assistant", "content": reply})
        return store, search_with_context(follow_up, backend=backend, session=c)

    store, r = play("inline")
    s = r.memory.summary
    assert s is not None and s.folded == 42 and len(s.text) <= 1200 and entity in s.text
    assert entity in r.standalone_query, r.standalone_query
    assert all(entity not in m.content for m in r.memory.window)  # only the summary remembers it
    assert len(r.memory.window) == 8
    _, without = play("off")
    assert entity not in without.standalone_query


def test_a_shared_room_rewrites_from_the_askers_own_thread(backend, store):
    room = Scope("acme", "bot", "room")
    alice, bob = conv(store, room, speaker="alice"), conv(store, room, speaker="bob")
    search_with_context("AnySearch 支持哪些检索方式？", backend=backend, session=alice)
    alice.add({"role": "assistant", "content": "三种检索方式 [1]。"})
    search_with_context("NovaDB 怎么样？", backend=backend, session=bob)
    bob.add({"role": "assistant", "content": "按节点收费。"})
    assert search_with_context("价格呢？", backend=backend, session=alice).standalone_query == "AnySearch 的价格"
    assert search_with_context("价格呢？", backend=backend, session=bob).standalone_query == "NovaDB 的价格"
    everyone = search_with_context("价格呢？", backend=backend, session=conv(store, room))
    assert len(everyone.memory.window) == 6


def test_the_task_stack_holds_only_what_the_reply_cited(backend, store):
    c = conv(store)
    r1 = search_with_context("AnySearch 价格", backend=backend, session=c)
    assert len(r1.citations) >= 2
    c.add({"role": "assistant", "content": "专业版每月 99 元 [2]。"})
    r2 = search_with_context("NovaDB 价格", backend=backend, session=c)
    assert [t.id for t in r2.memory.tasks] == [r1.citations[1].id]
    c.add({"role": "assistant", "content": "没有引用。"})
    r3 = search_with_context("入职流程", backend=backend, session=c)
    assert [t.id for t in r3.memory.tasks] == [r1.citations[1].id]  # earlier rounds still count (3 by default)
    assert "Results cited earlier" in r3.memory.render()


def test_the_profile_is_collected_only_when_on_and_injected_only_when_asked(backend, store):
    on = Settings.from_env({}, profile="on")
    c = conv(store, user="u1")
    search_with_context("我的预算是 5000 元，推荐露营装备", backend=backend, session=c, settings=on)
    later = conv(store, Scope("acme", "bot", "another-session"), user="u1")
    assert search_with_context("露营", backend=backend, session=later, settings=on).memory.profile == ()
    asked = search_with_context("露营", backend=backend, session=conv(store, Scope("acme", "bot", "s3"), user="u1",
                                                                        profile=True), settings=on)
    assert [(f.key, f.value) for f in asked.memory.profile] == [("budget", "5000 元")]
    assert "budget = 5000 元" in asked.memory.render()
    off_store = InMemoryStore()
    search_with_context("我的预算是 5000 元", backend=backend, session=conv(off_store, user="u1"))
    assert off_store.facts(A, "u1") == []  # off by default


def test_oversized_reply_is_refused_and_nothing_is_stored(store):
    c = conv(store)
    with pytest.raises(MessageTooLarge):
        c.add({"role": "assistant", "content": "x" * (64 * 1024 + 1)})
    assert store.messages(A) == []


def test_the_window_obeys_the_token_budget(backend, store):
    for i in range(6):
        store.append(A, {"role": "user" if i % 2 == 0 else "assistant", "content": "AnySearch " + "很长的回答 " * 40})
    r = search_with_context("价格呢？", backend=backend, session=conv(store), settings=Settings.from_env({}, history_tokens=120))
    assert 1 <= len(r.memory.window) < 6
