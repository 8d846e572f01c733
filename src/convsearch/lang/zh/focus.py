"""How a Chinese conversation's focus moves (``FOCUS``, read by ``rewrite.focus``): an answer's size in tokens and
the length at which it informs, a request stated rather than asked, a thing of the user's own, the noun after 的
as a phrase's head, and a question about what a word of the answer means."""

from __future__ import annotations

import re

from ...text import tagged
from ..base import FocusForms, Mention
from .markers import zh_ellipsis
from .mentions import follows_de


def _answer_words(text: str) -> int:
    """Words of an answer written without spaces: its tokens, punctuation left out."""
    return sum(1 for _, t in tagged(text) if t not in ("x", "w"))


def _head_rank(text: str, x: Mention) -> int:
    """"公司的入职流程", "AnySearch 的 SDK": the noun after 的 is the head (the whole "A 的 B" first)."""
    if "的" in x.text:
        return 0  # the whole "A 的 B"
    return 1 if follows_de(text, x.text) else 2


FOCUS = FocusForms(
    answer_words=_answer_words,
    informs_at=25,  # Chinese answers that inform run 27-122 characters in the follow-up sets; chat replies 2-20
    # A request stated rather than asked ("想买个游戏笔记本", "我预算 5000 左右"): the user's noun is what the
    # conversation is about, as after a question (a chat statement leaves the reply's noun instead)
    request=re.compile(r"想买|想找|想要|想了解|想学|求推荐|推荐|帮我|请问|预算"),
    # ... or about a thing of the user's own ("我家猫三岁了，最近老是掉毛"): what the follow-ups go on about
    owned=re.compile(r"^\W*(?:我家|我们家|我的|我们的|家里的?)"),
    head_rank=_head_rank,
    ellipsis_keeps=zh_ellipsis,
    meaning=re.compile(r"什么意思|啥意思|是指什么|指的是什么|是什么概念|是什么标准|是指|的意思|怎么理解|就是.{1,24}吗"),
)
