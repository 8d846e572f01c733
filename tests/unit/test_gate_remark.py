"""A first-person remark on the answer ("I'll consider those.", "我会考虑这些的。") asks for nothing: its
this/that/those is the answer itself, so the gate leaves the turn as typed; wishes, choices and questions still
lean on the history."""

from __future__ import annotations

import pytest
from test_gate import A, U  # the message helpers of the gate tests

from convsearch import DecisionKind, RuleRewriter, needs_rewrite
from convsearch.lang.en import steps as en
from convsearch.lang.zh import steps as zh


def is_remark(query: str, lang: str) -> bool:
    return (zh if lang == "zh" else en).is_remark(query)

EN = [U("Which houseplants cope with low light?"), A("Snake plants, ZZ plants and pothos all tolerate shade.")]
ZH = [U("哪些室内植物耐阴？"), A("虎尾兰、绿萝和金钱树都比较耐阴。")]


@pytest.mark.parametrize("query", [
    "I'll consider those. Thanks a lot.",
    "Okay, I will keep that in mind.",
    "Thanks, we'll look into these.",
])
def test_en_remarks_are_left_as_typed(query):
    assert is_remark(query, "en")
    d = needs_rewrite(EN, query)
    assert d.needed is False and d.kind is DecisionKind.SOCIAL
    assert RuleRewriter().rewrite(EN, query).rewritten == query


@pytest.mark.parametrize("query", ["我会考虑这些的。", "好的，我先试试这个。"])
def test_zh_remarks_are_left_as_typed(query):
    assert is_remark(query, "zh")
    assert needs_rewrite(ZH, query).needed is False
    assert RuleRewriter().rewrite(ZH, query).rewritten == query


@pytest.mark.parametrize("query, lang", [
    ("I'll take that one.", "en"),            # a choice among the items: the rewrite should name it
    ("I'll buy that plant.", "en"),           # a determiner, the item is named by its kind
    ("I'll need those in a bigger pot.", "en"),  # a wish
    ("I'll try that. Does it need much water?", "en"),  # a question follows
    ("Add those to my shopping list.", "en"),  # a command
    ("I'll water it weekly.", "en"),          # "it": a thing, not the answer
    ("我要那个。", "zh"),
    ("我会买那个吗？", "zh"),
    ("我先试试它。", "zh"),
])
def test_wishes_choices_and_questions_are_no_remarks(query, lang):
    assert not is_remark(query, lang)
