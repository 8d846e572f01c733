"""A digression the user opens ("对了，…", "By the way, …") and closes ("好的谢谢", "makes sense"): the question after
the closing goes back to what the digression turned aside from. Cases written for the mechanism."""

from __future__ import annotations

import pytest

from convsearch.resolve.focus import find_focus
from convsearch.resolve.gate import needs_rewrite
from convsearch.resolve.rules import RuleRewriter
from convsearch.types import Message

U, A = "user", "assistant"

ZH = [(U, "去云南沙溪古镇几月份最好"), (A, "春秋两季最舒服，3 到 5 月花开，游客也不算多。"),
      (U, "对了，昆明长水机场到市区怎么走"), (A, "可以坐地铁 6 号线，大约 50 分钟到市中心。"),
      (U, "好的谢谢"), (A, "不客气，祝旅途愉快！")]
EN = [(U, "When is the best time to visit the Lofoten Islands?"), (A, "June to August for the midnight sun."),
      (U, "By the way, how do I get from Oslo Airport to the city centre?"), (A, "Flytoget takes 20 minutes."),
      (U, "got it, thanks"), (A, "You're welcome!")]


def _history(turns: list[tuple[str, str]]) -> list[Message]:
    return [Message(r, c) for r, c in turns]


@pytest.mark.parametrize("turns, want", [(ZH, "沙溪古镇"), (EN, "Lofoten Islands")])
def test_a_closed_digression_gives_the_focus_back(turns, want) -> None:
    focus = find_focus(_history(turns))
    assert focus.resumed and want in focus.entity.text


@pytest.mark.parametrize("turns, query, want", [
    (ZH, "景区里面住宿贵不贵", "沙溪古镇"),
    (EN, "are there any good hiking trails", "Lofoten Islands"),
])
def test_the_question_after_the_closing_is_about_the_first_subject(turns, query, want) -> None:
    h = _history(turns)
    assert needs_rewrite(h, query).needed
    assert want in RuleRewriter().rewrite(h, query).rewritten


def test_without_a_closing_the_side_topic_goes_on() -> None:
    h = _history(ZH[:4])  # the digression is still open: the question is about the airport trip
    assert not find_focus(h).resumed
    out = RuleRewriter().rewrite(h, "打车要多少钱").rewritten
    assert "沙溪" not in out and "机场" in out


def test_a_closing_without_a_digression_moves_nothing() -> None:
    h = _history([(U, "布洛芬一天最多能吃几次"), (A, "成人 24 小时内不超过 4 次。"), (U, "好的谢谢"), (A, "不客气。")])
    assert not find_focus(h).resumed


def test_a_not_a_is_a_chinese_question() -> None:
    from convsearch.lang.zh.markers import ZH_QUESTION_RE as _ZH_QUESTION_RE

    assert _ZH_QUESTION_RE.search("住宿贵不贵") and _ZH_QUESTION_RE.search("这样好不好")
    assert not _ZH_QUESTION_RE.search("不知不觉就到了")


def test_a_new_subject_after_the_digression_leaves_nothing_to_go_back_to() -> None:
    h = _history([(U, "多肉冬天怎么养"), (A, "冬天要控水，放在阳光充足的地方。"),
                  (U, "对了，猫粮怎么选"), (A, "看成分表，肉类排第一的更好。"),
                  (U, "红烧肉怎么做才不腻"), (A, "先焯水，再用冰糖炒色。"), (U, "好的谢谢"), (A, "不客气。")])
    assert not find_focus(h).resumed


def test_what_the_side_answers_named_does_not_outlive_the_digression() -> None:
    h = _history([(U, "多肉冬天怎么养"), (A, "冬天要控水，放在阳光充足的地方。"),
                  (U, "对了，用什么土比较好"), (A, "赤玉土。"), (U, "好的谢谢"), (A, "不客气。")])
    out = RuleRewriter().rewrite(h, "多久浇一次水").rewritten
    assert "赤玉土" not in out


def test_lingwai_before_a_classifier_is_no_digression() -> None:
    # 另外那款: "the other one", a question about the answer, not a turn aside
    from convsearch.resolve.focus import DIGRESSION_RE

    assert DIGRESSION_RE.match("另外，想问下体检前要空腹多久") and not DIGRESSION_RE.match("另外那款多少钱")
