"""Chinese chit-chat follow-ups: which short replies lean on the other turn (gate) and what they leave out (rules)."""

from __future__ import annotations

import pytest

from convsearch import DecisionKind, Message, RuleRewriter, needs_rewrite
from convsearch.lang.base import Mention
from convsearch.lang.zh.steps import reply_thing
from convsearch.resolve.reply import answer_echo, echoed_predicate, polar_reply, wh_answer


def U(s: str) -> Message:
    return Message("user", s)


def A(s: str) -> Message:
    return Message("assistant", s)


# --- a bare yes/no reply echoes the predicate it answers -------------------------------------------------

@pytest.mark.parametrize(("asked", "reply", "out"), [
    ("你会游泳吗？", "不会", "不会游泳"),
    ("想去看海吗", "不想", "不想去看海"),
    ("他迟到了么", "是啊", "是啊他迟到了"),
    ("明天能来吗", "可以", "可以来"),
    ("你喜欢吃辣吗", "嗯是呀", "嗯是呀喜欢吃辣"),
    ("会不会被老板骂", "不会吧", "不会被老板骂吧"),
])
def test_bare_reply_takes_the_predicate_of_the_question(asked, reply, out):
    history = [U("周末有什么安排"), A(asked)]
    assert needs_rewrite(history, reply).kind is DecisionKind.ELLIPSIS
    result = RuleRewriter().rewrite(history, reply)
    assert result.rewritten == out
    assert "echoes the predicate" in result.reason


@pytest.mark.parametrize(("asked", "reply"), [
    ("一起去吃饭吧", "没时间了"),        # the reply says its own predicate (没 + a noun)
    ("这件衣服贵吗", "不贵，打折买的"),  # 不贵: an adjective of its own
    ("你去过成都吗", "去过好几次"),      # the answered verb goes on with words of its own
])
def test_reply_with_its_own_predicate_is_no_echo(asked, reply):
    assert answer_echo(reply, [U("聊聊"), A(asked)]) is None


def test_long_or_verbless_turn_gives_nothing_to_echo():
    assert echoed_predicate("你这个周末是不是要和大学同学一起去郊外露营烧烤", "是") is None  # too long to be the gap
    assert echoed_predicate("真的吗", "是") is None  # nothing but a question particle and 真的
    assert answer_echo("是啊", [A("你会游泳吗？"), U("你会游泳吗？")]) is None  # the latest turn is the user's own


def test_polarity_word_position():
    assert polar_reply("哈哈 不会") == ("不会", 5)
    assert polar_reply("不是呢") == ("不是", 2)  # a sentence-final 呢 stays last
    assert polar_reply("没意思") is None


def test_modal_written_with_its_verb_or_as_a_not_a():
    assert echoed_predicate("明天能来吗", "可以") == "来"  # jieba: 能来 is one word
    assert echoed_predicate("周末可否加班", "可以") == "加班"


# --- a comment on a short remark that names no thing takes the remark as its topic -----------------------

@pytest.mark.parametrize(("remark", "comment", "out"), [
    ("出去走走", "太热了", "出去走走太热了"),
    ("别出门了", "必须去", "别出门了必须去"),
    ("嗯嗯 快跑", "跑不动", None),                   # the comment repeats the remark's verb: nothing left out
    ("你再坚持一下马上就结束了", "太难了", None),  # a long remark is seldom the topic whole
    ("哈哈", "好无聊", None),                        # an interjection is no remark
])
def test_short_remark_is_the_topic_of_a_comment(remark, comment, out):
    history = [U("在吗"), A(remark)]
    result = RuleRewriter().rewrite(history, comment)
    assert result.rewritten == (out or comment)
    if out is not None:
        assert "short remark" in result.reason


def test_a_named_thing_still_wins_over_the_remark():
    result = RuleRewriter().rewrite([U("AnySearch 支持中文吗？"), A("支持。")], "好用吗？")
    assert result.rewritten == "AnySearch 好用吗"  # frame completion with the focus, not "支持好用吗"


# --- a fragment answering a short wh-question fills the question word ------------------------------------

@pytest.mark.parametrize(("asked", "answer", "out"), [
    ("你在哪里上班？", "北京啊", "在北京上班"),   # the asker's 你 is not the answerer's
    ("哪个学校的", "师范", "师范学校"),
    ("你啥时候到", "周五晚上", "周五晚上到"),
    ("几点开门", "9点", "9点开门"),             # the answer's own measure word, not "9点点"
])
def test_fragment_answer_takes_the_question_around_it(asked, answer, out):
    history = [U("我也在外地"), A(asked)]
    assert needs_rewrite(history, answer).kind is DecisionKind.ELLIPSIS
    assert RuleRewriter().rewrite(history, answer).rewritten == out


@pytest.mark.parametrize(("asked", "answer"), [
    ("你在哪里上班？", "刚辞职了"),               # a clause of its own (a verb), not a fragment
    ("你多大了", "25"),                        # 多大 asks a degree: no slot to fill
    ("你在哪里上班呀我也想找一份离家近的工作", "二环"),  # a long turn: which of its parts is asked is unclear
    ("在哪里", "嗯嗯"),                         # no thing, number, time or place in the answer
])
def test_no_fill_without_a_short_question_and_a_fragment(asked, answer):
    assert wh_answer(answer, [U("我也在外地"), A(asked)]) is None


@pytest.mark.parametrize(("asked", "reply", "out"), [
    ("你吃过榴莲吗", "吃过", "吃过榴莲"),            # the question's own verb answers: its object is left out
    ("你吃过榴莲吗", "没吃过", "没吃过榴莲"),
    ("需要带伞吗", "不需要", "不需要带伞"),          # jieba: "不" "需要"
    ("你去过那家店没", "去过但是忘了", "去过那家店但是忘了"),  # a new clause after the answer (但是)
])
def test_the_questions_verb_answers_too(asked, reply, out):
    assert answer_echo(reply, [U("聊聊"), A(asked)]) is not None
    assert RuleRewriter().rewrite([U("聊聊"), A(asked)], reply).rewritten == out


# --- after a remark, the thing the short reply named is what the next turn goes on about -------------------

def test_reply_thing_moves_the_topic_after_a_remark():
    out = RuleRewriter().rewrite([U("我最近在减肥"), A("那奶茶呢")], "戒不掉").rewritten
    assert "奶茶" in out and "减肥" not in out


@pytest.mark.parametrize(("history", "ent"), [
    # after a question its subject stays
    ([U("减肥要少吃什么甜食？"), A("少喝奶茶")], Mention("甜食", False, "n", "甜食")),
    ([U("我下周去成都"), A("火锅不错")], Mention("成都", True, "ns", "成都")),        # a place stays the subject
    ([U("我想买个保温杯"), A("保温壶也行")], Mention("保温杯", False, "n", "保温杯")),  # the same thing its own way
    # a long reply comments on the remark
    ([U("我想买个保温杯"), A("你可以先看看商场里的那种大牌子")], Mention("保温杯", False, "n", "保温杯")),
])
def test_reply_thing_keeps_the_remarks_subject(history, ent):
    assert reply_thing(ent, history) == ent


def test_reply_thing_takes_the_replys_noun():
    cup = Mention("保温杯", False, "n", "保温杯")
    assert reply_thing(cup, [U("我想买个保温杯"), A("买个电饭煲吧")]).text == "电饭煲"


def test_echo_stops_at_the_answered_clause_and_leaves_pronouns_to_their_step():
    assert echoed_predicate("好玩吗最近出了好多新游戏", "好玩") is None  # nothing after 好玩 in its own clause
    assert echoed_predicate("你会不会做饭呀我好饿", "会") == "做饭"  # the clause ends at 呀
    assert answer_echo("对的，你觉得它怎么样", [U("我在看一本小说"), A("那本书很火吗")]) is None


@pytest.mark.parametrize(("asked", "reply"), [
    ("明天能来接我吗", "可以"),             # 我 is the asker: the echo would say who picks up whom the wrong way
    ("需要我再推荐几本科幻小说吗？", "需要"),  # an offer of the other speaker's, not the replier's predicate
])
def test_no_echo_of_the_other_speakers_person(asked, reply):
    assert answer_echo(reply, [U("周末有空"), A(asked)]) is None


@pytest.mark.parametrize(("asked", "reply", "out"), [
    ("你不去吗", "不", "不去"),              # 不 is not doubled
    ("他是不是迟到了", "是", "是迟到了"),     # the A-not-A question's halves go
    ("你有没有去过北京", "有", "有去过北京"),
])
def test_an_echo_reads_as_the_reply_would(asked, reply, out):
    assert answer_echo(reply, [U("周末有空"), A(asked)])[0] == out


@pytest.mark.parametrize(("asked", "answer", "out"), [
    ("你叫什么名字", "小明", "叫小明"),       # the noun the question word points at goes
    ("几点开门", "9点半", "9点半开门"),       # the answer brings its own measure word
])
def test_a_fill_drops_what_the_answer_replaces(asked, answer, out):
    assert wh_answer(answer, [U("嗯"), A(asked)])[0] == out


def test_a_question_word_in_a_statement_is_filled_by_nothing():
    assert wh_answer("上海", [U("嗯"), A("我去过几个地方")]) is None


def test_the_answer_to_a_clarifying_question_keeps_the_request():
    history = [U("帮我订酒店"), A("你要住几晚？")]
    assert RuleRewriter().rewrite(history, "两晚").rewritten == "酒店 要住两晚"


def test_zh_person_noun_is_who_the_question_is_for_not_a_thing_it_asks():
    from convsearch import Message
    from convsearch.resolve.gate import needs_rewrite
    h = [Message("user", "想在院子里养几只柯尔鸭，好养吗"), Message("assistant", "柯尔鸭个头小，比较好养。")]
    # 性格 is an aspect, 新手 the asker: the question asks about 柯尔鸭 without naming it
    assert needs_rewrite(h, "脾气凶不凶 新手好养吗").needed and needs_rewrite(h, "性格凶吗 老人能养吗").needed
