"""Time-sensitive queries and their default recency (zh and en)."""

from __future__ import annotations

from datetime import date

import pytest

from convsearch.backends.base import Recency
from convsearch.timesense import default_recency, time_sensitive

TODAY = date(2026, 12, 1)


@pytest.mark.parametrize("q,rec", [
    ("深圳今天天气怎么样", Recency.DAY), ("现在黄金多少钱", Recency.DAY), ("中超决赛比分", Recency.DAY),
    ("昨天的新闻", Recency.WEEK), ("最近有什么 AI 搜索产品", Recency.WEEK), ("最新的 iPhone", Recency.WEEK),
    ("本周上映的电影", Recency.WEEK), ("这几天适合露营吗", Recency.WEEK),
    ("AnySearch 的价格", Recency.MONTH),
    ("weather in London today", Recency.DAY), ("what is the score now", Recency.DAY),
    ("latest AI search launches", Recency.WEEK), ("what happened this week", Recency.WEEK),
    ("current mortgage rates", Recency.MONTH), ("Bitcoin price", Recency.MONTH),
    ("2026-11-29 发布会", Recency.WEEK), ("11月20日 发布会", Recency.MONTH), ("launch on Nov 28", Recency.WEEK),
])
def test_time_sensitive_queries(q, rec):
    assert time_sensitive(q, today=TODAY) is rec


@pytest.mark.parametrize("q", ["Who founded SpaceX?", "SpaceX 是谁创立的", "混合检索是什么", "hybrid search explained",
                               "know how to", "nowhere to go", "2019-03-01 的论文", "March 5, 2020 paper",
                               "2027-01-01 计划"])
def test_not_time_sensitive(q):
    assert time_sensitive(q, today=TODAY) is None


def test_the_narrowest_window_wins():
    assert time_sensitive("今天的金价 价格", today=TODAY) is Recency.DAY


def test_default_recency_keeps_the_callers_choice_and_says_when_it_applied_one():
    assert default_recency("今天天气", "year", today=TODAY) == (Recency.YEAR, None)
    rec, note = default_recency("latest news", None, today=TODAY)
    assert rec is Recency.WEEK and note == "recency week: default for a time-sensitive query"
    assert default_recency("SpaceX founder", None, today=TODAY) == (None, None)


@pytest.mark.parametrize("q", ["where do pandas live", "resting heart rate explained"])
def test_everyday_words_that_look_timely_are_not(q):
    assert time_sensitive(q, today=TODAY) is None
