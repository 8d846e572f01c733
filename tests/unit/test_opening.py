"""A Chinese aspect question going on about what an information-seeking conversation opened on ("山顶扎营…" after
a talk on a hike on 武功山) gets that subject; a chat, a new question and a question with nothing in common with the
conversation do not."""

from __future__ import annotations

from convsearch.resolve.focus import opening_subject
from convsearch.resolve.gate import needs_rewrite
from convsearch.resolve.rules import RuleRewriter
from convsearch.types import DecisionKind, Message

U, A = "user", "assistant"
HIKE = [Message(U, "武功山两天一夜徒步 经典路线是哪条"),
        Message(A, "经典路线是沈子村上、龙山村下：第一天从沈子村爬到金顶附近扎营看日落，第二天沿高山草甸走到发云界。"),
        Message(U, "帐篷睡袋要自己带吗"),
        Message(A, "可以自己背，也可以在山上租帐篷和睡袋，旺季最好提前订好，山顶风大要带保暖衣物。")]


def test_the_opening_subject_is_the_first_questions_name() -> None:
    assert opening_subject(HIKE).text == "武功山"
    # a space between Chinese words parts clauses: "全马 目标" is two phrases, not one
    assert opening_subject([Message(U, "第一次跑全马 目标是破5 赛前一周该咋安排")]).text == "全马"
    assert opening_subject([Message(A, "你好")]) is None


def test_an_aspect_question_goes_on_about_the_opening_subject() -> None:
    d = needs_rewrite(HIKE, "山顶扎营要提前预约吗")
    assert d.needed and d.kind is DecisionKind.OPENING
    assert RuleRewriter().rewrite(HIKE, "山顶扎营要提前预约吗").rewritten == "武功山山顶扎营要提前预约吗"


def test_a_question_of_its_own_a_chat_or_an_unrelated_question_is_left_alone() -> None:
    # nothing in common with the conversation: a new question
    assert needs_rewrite(HIKE, "红烧肉的糖色怎么炒").kind is not DecisionKind.OPENING
    # it names the opening subject itself
    assert not needs_rewrite(HIKE, "武功山山顶扎营要提前预约吗").needed
    # a chat: the reply informs nothing, so there is no subject to go on about
    chat = [Message(U, "武功山徒步好累"), Message(A, "扎营了吗")]
    assert needs_rewrite(chat, "扎营要提前预约吗").kind is not DecisionKind.OPENING


def test_the_subject_loses_the_word_the_question_says_itself() -> None:
    h = [Message(U, "上海浦东幼儿园小班报名要满足什么条件"),
         Message(A, "主要看年龄和居住证：小班需要在当年8月31日前年满3周岁，非沪籍一般需要父母一方持有效的居住证。"),
         Message(U, "居住证积分不到120分的话还能上公办吗"),
         Message(A, "有机会，但顺位靠后，公办名额紧张的片区可能会被统筹到民办园或者离家较远的园所。")]
    out = RuleRewriter().rewrite(h, "网上报名一般是几月开始").rewritten
    assert out.startswith("上海浦东幼儿园小班") and out.count("报名") == 1 and "机会" not in out


def test_after_answers_that_inform_the_users_subject_stays_the_subject() -> None:
    # the answer's first noun (工作) is what a chat reply leaves out, not what an answer on leave rules does
    h = [Message(U, "公司的年假是怎么规定的？"),
         Message(A, "入职满一年享 5 天年假，满 10 年 10 天，未休完的可以顺延到次年 3 月 31 日。"),
         Message(U, "顺延的过期了会折现吗？"),
         Message(A, "按政策过期不折现，除非因工作安排无法休假并经 HR 审批，审批通过后可以折算工资。")]
    out = RuleRewriter().rewrite(h, "那新员工试用期内能休吗？").rewritten
    assert "年假" in out and "工作" not in out
    # a chat reply: its own noun is what the next turn leans on (as on Restoration-200K)
    chat = [Message(U, "周末去爬山了"), Message(A, "香山人多吗")]
    assert "香山" in RuleRewriter().rewrite(chat, "挺多的").rewritten


def test_a_question_about_a_person_only_goes_on_about_the_opening_subject() -> None:
    # it names no thing of its own (老人 is who goes), so it shares no word with the talk and still continues it
    d = needs_rewrite(HIKE, "老人能爬上去吗")
    assert d.kind is DecisionKind.OPENING
    assert RuleRewriter().rewrite(HIKE, "老人能爬上去吗").rewritten.startswith("武功山")


def test_a_subject_the_user_moved_to_by_name_is_the_subject() -> None:
    h = [Message(U, "小米 14 Ultra 值得买吗"),
         Message(A, "小米 14 Ultra 影像很强，徕卡四摄，屏幕和续航也都不错，就是价格偏高，适合看重拍照的人。"),
         Message(U, "那华为 Pura 70 Pro 呢"),
         Message(A, "华为 Pura 70 Pro 的影像同样出色，鸿蒙系统流畅，信号好，但是价格也不便宜，外观比较有辨识度。")]
    assert needs_rewrite(h, "续航能撑一天吗").kind is not DecisionKind.OPENING
    assert RuleRewriter().rewrite(h, "续航能撑一天吗").rewritten.startswith("华为 Pura 70 Pro")


def test_the_opening_is_the_first_turn_an_informing_answer_answered() -> None:
    h = [Message(U, "我想咨询个问题"), Message(A, "好的，请说。"), *HIKE]
    assert opening_subject(h).text == "武功山"
    assert RuleRewriter().rewrite(h, "老人能爬上去吗").rewritten.startswith("武功山")


def test_spaces_between_words_are_no_clause_breaks() -> None:
    from convsearch.resolve.entities import mentions

    assert [m.text for m in mentions("上海 迪士尼 乐园 门票 多少钱", "zh")] == ["上海迪士尼乐园门票"]
