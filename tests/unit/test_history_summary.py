"""Rolling summaries: the extractive summarizer, the LLM hook and its fallback, background refreshes."""

from __future__ import annotations

import threading
import time

import pytest

from convsearch.history import (BackgroundRefresher, Conversation, ExtractiveSummarizer, InMemoryStore, Scope,
                                Summary, refresh_summary)
from convsearch.history.memory import summary_message
from convsearch.types import Message

A = Scope("acme", "bot", "s1")


def M(role: str, content: str) -> Message:
    return Message(role, content)


ZH = [M("user", "AnySearch 支持哪些检索方式？"), M("assistant", "AnySearch 支持 BM25、向量和混合检索。"),
      M("user", "价格呢？"), M("assistant", "专业版每月 99 元。"), M("user", "支持私有部署吗？"), M("assistant", "支持。")]
EN = [M("user", "Who founded SpaceX?"), M("assistant", "Elon Musk founded SpaceX in 2002."),
      M("user", "When did it first launch a rocket?"), M("assistant", "In 2006.")]


def test_extractive_zh_lists_the_topic_first_and_the_users_questions():
    s = ExtractiveSummarizer().summarize(ZH)
    topics, questions = s.splitlines()
    assert topics.startswith("此前谈到：AnySearch、") and topics.endswith("。")
    assert questions == "先前问过：AnySearch 支持哪些检索方式？；价格呢？；支持私有部署吗？"


def test_extractive_en():
    s = ExtractiveSummarizer().summarize(EN)
    assert s.startswith("discussed: SpaceX;") and s.splitlines()[0].endswith(".")
    assert s.splitlines()[1] == "asked: Who founded SpaceX?; When did it first launch a rocket?"


def test_extractive_is_incremental_and_keeps_the_old_topic():
    first = ExtractiveSummarizer().summarize(EN)
    later = [M("user", "Was the launch successful?"), M("assistant", "No, it failed.")]
    s = ExtractiveSummarizer().summarize([summary_message(Summary(first, 4, 4, "extractive")), *later])
    assert s.startswith("discussed: SpaceX") and "Who founded SpaceX?" in s and s.endswith("Was the launch successful?")


def test_a_fold_without_user_turns_keeps_the_summary_language():
    first = ExtractiveSummarizer().summarize(ZH)
    s = ExtractiveSummarizer().summarize([summary_message(Summary(first, 6, 6, "extractive")), M("assistant", "OK.")])
    assert s.startswith("此前谈到：AnySearch")


def test_extractive_always_fits_the_cap():
    msgs = [M("user", f"Question {i} about Product{i} and Vendor{i} with a long tail " + "words " * 30 + "?")
            for i in range(60)]
    for cap in (1200, 300, 40):
        s = ExtractiveSummarizer(max_chars=cap).summarize(msgs)
        assert 0 < len(s) <= cap
    s = ExtractiveSummarizer().summarize(msgs)
    assert "Question 59" in s  # the most recent questions survive the cut


def test_extractive_of_nothing_is_none():
    assert ExtractiveSummarizer().summarize([]) is None


class Boom:
    name = "llm"

    def summarize(self, messages):
        raise TimeoutError("LLM took too long")


class Silent:
    name = "llm"

    def summarize(self, messages):
        return None


class Echo:
    name = "llm"

    def __init__(self):
        self.calls = []

    def summarize(self, messages):
        self.calls.append(list(messages))
        return "The user asked about AnySearch. " * 100  # too long: cut to the cap


def fill(store, n, scope=A, **kw):
    for i in range(n):
        store.append(scope, {"role": "user" if i % 2 == 0 else "assistant",
                             "content": f"AnySearch question {i}?" if i % 2 == 0 else f"answer {i}"}, **kw)


def test_the_llm_hook_is_used_and_capped():
    store, llm = InMemoryStore(), Echo()
    fill(store, 15)
    s = refresh_summary(store, A, summarizer=llm)
    assert s.method == "llm" and len(s.text) <= 1200 and s.text.endswith("…")
    assert [m.content for m in llm.calls[0]] == [f"AnySearch question {i}?" if i % 2 == 0 else f"answer {i}"
                                                 for i in range(7)]
    fill(store, 2)
    refresh_summary(store, A, summarizer=llm)
    assert llm.calls[1][0].name == "summary" and llm.calls[1][0].content == s.text  # progressive


@pytest.mark.parametrize("llm,why", [(Boom(), "llm failed"), (Silent(), "llm gave nothing")])
def test_a_failing_llm_falls_back_to_extractive_visibly(llm, why):
    store = InMemoryStore()
    fill(store, 16)
    s = refresh_summary(store, A, summarizer=llm)
    assert s.method == f"extractive (fallback: {why})" and "AnySearch" in s.text


def test_thresholds_are_settings():
    store = InMemoryStore()
    fill(store, 6)
    assert refresh_summary(store, A, threshold=5, keep=2).folded == 4
    assert refresh_summary(store, A, threshold=14, keep=8) is not None  # an existing summary stays in force


class Slow:
    name = "slow-llm"

    def __init__(self):
        self.release = threading.Event()
        self.started = threading.Event()

    def summarize(self, messages):
        self.started.set()
        self.release.wait(10)
        return "topics: AnySearch"


def test_background_refresh_never_blocks_the_turn():
    store, llm = InMemoryStore(), Slow()
    conv = Conversation(store, A, summarizer=llm)
    fill(store, 16)
    t0 = time.perf_counter()
    conv.record_turn("价格呢？", [])
    assert time.perf_counter() - t0 < 0.5
    assert llm.started.wait(5) and store.summary(A) is None  # running on the worker, not in the turn
    llm.release.set()
    from convsearch.history import flush_refreshes

    assert flush_refreshes(10)
    assert store.summary(A).text == "topics: AnySearch"


def test_refresher_throttles_per_key_and_survives_errors():
    r = BackgroundRefresher(delay=0.2)
    ran = []
    assert r.schedule("k", lambda: ran.append(1)) is True
    assert r.schedule("k", lambda: ran.append(2)) is False  # joins the waiting one; the newest job runs
    r.schedule("bad", lambda: 1 / 0)
    time.sleep(0.05)
    assert ran == []  # nothing runs before the delay
    deadline = time.monotonic() + 5
    while r.runs < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ran == [2] and r.errors == 1
    assert r.schedule("k", lambda: ran.append(3)) is True and r.flush(10) and ran == [2, 3]


def test_a_busy_key_is_still_refreshed_every_delay():
    r = BackgroundRefresher(delay=0.1)
    ran = []
    t_end = time.monotonic() + 0.5
    while time.monotonic() < t_end:  # a turn every 10 ms: a debounce would starve, a throttle does not
        r.schedule("busy", lambda: ran.append(time.monotonic()))
        time.sleep(0.01)
    assert 2 <= len(ran) <= 7
    assert r.flush(5)


def test_inline_and_off_refresh_modes():
    store = InMemoryStore()
    fill(store, 16)
    Conversation(store, A, refresh="off").record_turn("q", [])
    assert store.summary(A) is None
    Conversation(store, A, refresh="inline").record_turn("q", [])
    assert store.summary(A) is not None
    with pytest.raises(ValueError):
        Conversation(store, A, refresh="sometimes")
