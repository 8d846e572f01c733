"""Follow-ups of the kind a knowledge-base conversation asks (issue 34): a modifier whose head noun is left out
("只看…的呢"), an action the previous how-question asked about ("can that be done …?", "do it"), and a name used
as a modifier standing with its noun for "it". Sentences of their own, not the evaluation's turns."""

from __future__ import annotations

import pytest

from convsearch.lang.zh.steps import _owner_in_frame, modifier_ellipsis
from convsearch.resolve.rules import RuleRewriter
from convsearch.text import tagged
from convsearch.types import Message


def _rewrite(history: list[tuple[str, str]], query: str) -> str:
    msgs: list[Message] = []
    for q, a in history:
        msgs += [Message("user", q), Message("assistant", a)]
    return RuleRewriter().rewrite(msgs, query).rewritten


# --- zh: "只看 X 的呢" keeps the head noun the previous question's 的 modified ------------------------------------

@pytest.mark.parametrize("query, frame, want", [
    # the modifier goes before the head; a restricting adverb and verb (只看, 只显示) are the frame's own verb
    ("只看上海仓库的呢？", "怎么导出本月的库存报表", "怎么导出本月的上海仓库的库存报表"),
    ("只显示未读的呢？", "怎么筛选收件箱里的邮件", "怎么筛选收件箱里的未读的邮件"),
    ("就要不锈钢的呢？", "有哪些耐用的保温杯推荐", "有哪些耐用的不锈钢的保温杯推荐"),
    # a degree adverb is part of the modifier, not a restriction of the verb
    ("最轻的呢？", "有哪些耐用的登山杖推荐", "有哪些最轻的登山杖推荐"),
    ("最快的呢？", "从机场到市区的大巴多少钱", "从机场到市区的最快的大巴多少钱"),
    # a time for a time: the frame's modifier of that slot type gives way
    ("只要去年的呢？", "在哪里查今年的工资流水", "在哪里查去年的工资流水"),
])
def test_zh_modifier_ellipsis_keeps_the_head(query: str, frame: str, want: str) -> None:
    done = modifier_ellipsis(query, frame)
    assert done is not None and done[0] == want


@pytest.mark.parametrize("query, frame", [
    ("蓝色的呢？", "这双鞋有白色的吗"),  # 的 ends a phrase of its own in the frame: no head to share
    ("哪个的呢？", "怎么导出本月的库存报表"),  # a question word: no modifier
    ("本月的呢？", "怎么导出本月的库存报表"),  # already the frame's modifier
    ("他说的呢", "今天天气不错"),  # nothing modified in the frame
    # an assent, or a person's: no modifier of the frame's thing
    ("好的呢", "有没有轻便的折叠椅推荐"),
    ("是的呢", "有没有轻便的折叠椅推荐"),
    ("真的呢？", "有没有轻便的折叠椅推荐"),
    ("我的呢？", "有没有轻便的折叠椅推荐"),
])
def test_zh_modifier_ellipsis_declines(query: str, frame: str) -> None:
    assert modifier_ellipsis(query, frame) is None


def test_zh_modifier_ellipsis_through_the_rewriter() -> None:
    out = _rewrite([("怎么查看路由器最近一周的连接记录？", "在管理页面的系统日志里可以看到。")], "只看某台设备的呢？")
    assert "连接记录" in out and "某台设备" in out
    assert not out.endswith("呢")


# --- en: "that" / "it" standing for the action the previous how-question asked about ---------------------------

_HOW = [("How do I rotate the logs of my web server every week?", "Use logrotate with a weekly rule.")]


@pytest.mark.parametrize("query, want", [
    ("Can that be done without restarting the server?",
     "Can rotating the logs of my web server every week be done without restarting the server?"),
    ("Could it be done automatically?", "Could rotating the logs of my web server every week be done automatically?"),
    ("Should I do that before the backup runs?",
     "Should I rotate the logs of my web server every week before the backup runs?"),
])
def test_en_action_anaphora(query: str, want: str) -> None:
    assert _rewrite(_HOW, query) == want


def test_en_action_anaphora_coordinated_and_slot() -> None:
    h = [("How do I export my contacts but keep the photos on Android?", "Use the Contacts app's export.")]
    out = _rewrite(h, "Can that be done in one step?")
    assert out.startswith("Can exporting my contacts but keeping the photos")
    # the rest of the query names another platform: the old one leaves the action
    assert _rewrite(h, "How do I do it on iOS?") == "How do I export my contacts but keep the photos on iOS?"


def test_en_does_it_is_no_action() -> None:
    # "Does it …" is an auxiliary with the subject "it", not the verb "do" with the action as object
    out = _rewrite([("How do I install Syncthing on a Raspberry Pi?", "Use the apt repository.")],
                   "Does it run on the older models?")
    assert "installing" not in out and "Syncthing" in out


# --- zh: "它的 X" takes the owner the latest question gave X, not a term of the answer ----------------------------

@pytest.mark.parametrize("history, query, want, wrong", [
    # the subject of the clause that named X
    ([("社区发布了新版本，升级前要看什么？", "先看 NEWS 文件和 release notes。")], "怎么及时知道它的新版本？",
     "社区的新版本", "NEWS"),
    ([("厂商推出了新固件，刷机前要注意什么？", "先备份配置，再读 README。")], "去哪里下载它的新固件？",
     "厂商的新固件", "README"),
    # "A 的 X": A
    ([("出版社的新书目录在哪看？", "在 Douban 上能找到。")], "它的新书目录多久更新一次？",
     "出版社的新书目录", "Douban"),
])
def test_zh_its_thing_takes_the_owner_the_question_gave(history: list[tuple[str, str]], query: str, want: str,
                                                         wrong: str) -> None:
    out = _rewrite(history, query)
    assert want in out and wrong not in out


def test_zh_its_thing_keeps_a_focus_from_the_question() -> None:
    # the focus comes from the latest question itself: nothing to correct
    assert _rewrite([("AnySearch 是什么？", "一个搜索服务。")], "它的价格是多少？").startswith("AnySearch")
    # the question never named the thing: the focus stands
    assert _owner_in_frame(tagged("的价格"), "华为的新手机好看吗", "Mate 60") is None


# --- zh: "那怎么取消呢？" acts on what the previous how-question acted on -----------------------------------------

@pytest.mark.parametrize("history, query, want", [
    ([("怎么开启路由器的访客网络？", "在管理页面的无线设置里打开，可以在 App 里操作。")], "那怎么关闭呢？",
     "怎么关闭路由器的访客网络"),
    ([("怎么备份 PostgreSQL 数据库？", "用 pg_dump 导出。")], "那怎么还原？", "怎么还原PostgreSQL 数据库"),
    ([("怎样绑定新的手机号？", "在安全中心里操作，需要短信验证码。")], "要怎么解绑呢？", "要怎么解绑新的手机号"),
])
def test_zh_how_object(history: list[tuple[str, str]], query: str, want: str) -> None:
    assert want in _rewrite(history, query)


@pytest.mark.parametrize("history, query, must_not", [
    # 怎么办 asks what to do: no verb of its own to give the object to
    ([("怎么开启路由器的访客网络？", "在管理页面的无线设置里打开。")], "那怎么办？", "怎么办路由器"),
    # a preposition before the verb: no confident split of the previous question
    ([("怎么给同事共享项目文件夹？", "在网盘里点共享。")], "那怎么撤销呢？", "撤销同事"),
])
def test_zh_how_object_declines(history: list[tuple[str, str]], query: str, must_not: str) -> None:
    assert must_not not in _rewrite(history, query)
