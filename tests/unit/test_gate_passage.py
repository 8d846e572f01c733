"""The gate after a passage: a question that names a compound noun of its own asks about that thing, so the
subject rules (8: en, 9: zh) do not add the conversation's subject; after a short reply they still do."""

from __future__ import annotations

import pytest
from test_gate import A, U  # the message helpers of the gate tests

from convsearch import DecisionKind, RuleRewriter, needs_rewrite
from convsearch.resolve.passage_name import PASSAGE_WORDS, passage_history

EN_PASSAGE = ("Sourdough relies on a culture of wild yeast and lactic acid bacteria. The starter is fed with flour and "
              "water for several days until it rises predictably. Bakers then mix the levain into the dough, rest it, "
              "and shape the loaf. A long cold proof in the fridge develops a sour flavour and an open crumb, and a "
              "very hot oven with steam gives the crust its blistered look.")
EN_OPENER = "How do I make sourdough bread at home?"
EN_LONG = [U(EN_OPENER), A(EN_PASSAGE)]
EN_SHORT = [U(EN_OPENER), A("you need a starter, flour, water and salt.")]

ZH_PASSAGE = ("Obsidian 是一款本地优先的笔记软件，所有笔记都以 Markdown 文件保存在你自己的电脑上。"
              "它支持双向链接和关系图谱，可以把零散的想法连接起来；"
              "社区插件很多，从日历、看板到任务管理都有。"
              "同步和发布是付费服务，个人使用的基础功能完全免费。")
ZH_OPENER = "Obsidian 适合做读书笔记吗？"
ZH_LONG = [U(ZH_OPENER), A(ZH_PASSAGE)]
ZH_SHORT = [U(ZH_OPENER), A("适合，笔记之间可以互相链接。")]


def test_passage_history_counts_words_in_english_and_characters_in_chinese():
    assert passage_history(EN_LONG) and passage_history(ZH_LONG)
    assert not passage_history(EN_SHORT) and not passage_history(ZH_SHORT)
    assert not passage_history([U(EN_OPENER)])  # no answer yet
    assert not passage_history([U("q"), A(" ".join(["word"] * PASSAGE_WORDS))])
    assert passage_history([U("q"), A(" ".join(["word"] * (PASSAGE_WORDS + 1)))])
    assert passage_history([U("q"), A("长" * (2 * PASSAGE_WORDS + 2))])
    assert not passage_history([U("q"), A("长" * (2 * PASSAGE_WORDS))])


@pytest.mark.parametrize("history, query", [
    (EN_LONG, "How long should the cold proof take?"),
    (EN_LONG, "What does the open crumb look like?"),
    (ZH_LONG, "关系图谱怎么打开？"),
    (ZH_LONG, "双向链接有什么用？"),
])
def test_a_compound_noun_after_a_passage_is_asked_about_itself(history, query):
    d = needs_rewrite(history, query)
    assert d.needed is False and d.kind is DecisionKind.STANDALONE
    r = RuleRewriter().rewrite(history, query)
    assert r.rewritten == query and not r.changed


@pytest.mark.parametrize("history, query", [
    (EN_SHORT, "How long should the cold proof take?"),
    (ZH_SHORT, "关系图谱怎么打开？"),
])
def test_after_a_short_reply_the_subject_rule_still_rewrites(history, query):
    d = needs_rewrite(history, query)
    assert d.needed is True and d.kind is DecisionKind.SUBJECT


def test_a_single_noun_after_a_passage_still_gets_the_subject():
    # "the oven" is no specific thing of the question's own: the conversation's subject is still added
    d = needs_rewrite(EN_LONG, "What temperature should the oven be?")
    assert d.needed is True and d.kind is DecisionKind.SUBJECT
    assert "sourdough" in RuleRewriter().rewrite(EN_LONG, "What temperature should the oven be?").rewritten


def test_zh_subject_rule_after_a_short_reply_names_the_product():
    assert RuleRewriter().rewrite(ZH_SHORT, "关系图谱怎么打开？").rewritten.startswith("Obsidian")
