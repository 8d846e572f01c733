"""A time expression is when something happens, never what the conversation is about: the focus passes over it."""

from __future__ import annotations

import pytest
from test_gate import A, U  # the message helpers of the gate tests

from convsearch import RuleRewriter
from convsearch.lang.timeref import is_time_phrase
from convsearch.resolve.focus import find_focus


@pytest.mark.parametrize("phrase", ["mid-April", "April", "next summer", "the weekend", "early October", "2024",
                                    "工作日", "寒假", "下周末", "2025年"])
def test_times_are_time_phrases(phrase):
    assert is_time_phrase(phrase)


@pytest.mark.parametrize("phrase", ["national parks", "April Fools pranks", "Summer Palace", "Model 3", "winter tyres",
                                    "电影", "春节联欢晚会", "黄山"])
def test_things_are_not(phrase):
    assert not is_time_phrase(phrase)


def test_en_focus_skips_the_month_the_user_named():
    h = [U("I want to see some waterfalls in mid-April."), A("Sure, tell me more.")]
    assert find_focus(h).entity.text == "waterfalls"


def test_zh_focus_skips_the_time_the_user_named():
    h = [U("工作日去看电影人多吗？"), A("一般不多。")]
    assert find_focus(h).entity.text == "电影"
    assert RuleRewriter().rewrite(h, "票价多少？").rewritten == "电影票价多少"


@pytest.mark.parametrize("question, time", [("What about next weekend?", "next weekend"), ("淡季是哪几个月？", "淡季")])
def test_a_time_named_alone_stays_the_pick(question, time):
    # nothing else to be about: the turn asks about the time itself (a side question on "淡季" reads it)
    assert find_focus([U(question), A("OK.")]).entity.text == time
