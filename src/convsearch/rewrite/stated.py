"""Constraints the user stated about themselves, carried into later requests of the session.

"我用的是 Mac，怎么给 PDF 加水印？" … "怎么把 PDF 转成 Word？": the second question names everything it asks about, but
the answer depends on the platform the user said they use; a search for it should say "Mac". Only what the user
stated in so many words counts ("我用的是 / 我的是 / I use / I'm on / on my" + a system of the slot lexicon, in
a clause that asks nothing; "预算 / budget" + an amount; a child's age and an allergy: "孩子 5 岁", "对花生过敏",
"my 7 year old", "allergic to eggs"); a machine goes only with how-to requests about software and settings, a
budget only with requests to buy or be recommended something, who it is for with requests about food, medicine,
things to buy or learn, and none with a request that names its own, as a separate term. Pure string work over
the user's own turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .. import lexicon as lx
from ..types import Message
from .frame import slot_spans

_OS = frozenset(w.lower() for w in lx.SLOTS["os"])

_ZH_OWN_RE = re.compile(r"(?:我|我们)(?:现在|平时)?(?:用的是|用的|在用|用|的(?:电脑|手机|系统)?是)\s*$")
_EN_OWN_RE = re.compile(r"\b(?:i(?:'m| am)\s+(?:on|using)|i\s+(?:use|have|run)|on\s+my|my\s+\w+\s+(?:is|runs))"
                        r"\s+(?:an?\s+)?$", re.IGNORECASE)
_ZH_BUDGET_RE = re.compile(r"预算(?:是|大概|大约|在)?\s*"
                           r"([一二两三四五六七八九十\d][\d,.]*\s*(?:千|万)?\s*(?:元|块)?(?:左右|以内|以下)?)")
_EN_BUDGET_RE = re.compile(r"\bbudget\b(?:\s+(?:is|of))?(?:\s+(?:about|around|roughly|up to))?\s+(\$\s?\d[\d,.]*k?)",
                           re.IGNORECASE)
# who a request is for, as the user stated it: a child's age ("孩子 5 岁", "8 个月的宝宝", "my 16 year old") and an
# allergy ("对花生过敏", "allergic to peanuts")
_ZH_KIN = r"(?:孩子|宝宝|小孩|儿子|女儿|娃|闺女|宝贝)"
_ZH_AGE = r"(?:\d{1,2}|[一二两三四五六七八九十]{1,3})\s*(?:岁半?|个月)"
_ZH_AGE_RE = re.compile(rf"{_ZH_KIN}\s*(?:今年|才|刚|已经|快)?\s*({_ZH_AGE})|({_ZH_AGE})\s*(?:大)?的?\s*{_ZH_KIN}")
_EN_AGE_RE = re.compile(r"\b(\d{1,2})[\s-](?:year|month)s?[\s-]old\b", re.IGNORECASE)
_ZH_ALLERGY_RE = re.compile(r"对\s*([\u4e00-\u9fff]{1,4}?)\s*过敏")
_EN_ALLERGY_RE = re.compile(r"\ballergic\s+to\s+([a-z]+(?:\s+[a-z]+)?)", re.IGNORECASE)
# ... and what it goes with: food, medicine, activities and things bought for that person
_FOR_PERSON_RE = {"zh": re.compile(r"吃|喝|药|剂量|推荐|适合|能不能|可以|买|玩|学|打疫苗"),
                  "en": re.compile(r"\b(?:eat|drink|food|snacks?|dose|dosage|take|safe|recommend|suggest|best|"
                                   r"good for|toys?|buy|learn|vaccines?)\b", re.IGNORECASE)}

# what each constraint goes with: a machine with how-to requests about software and settings, a budget with
# requests to buy or be recommended something ("What is the capital of France?" gets neither)
_HOWTO_RE = {"zh": re.compile(r"(?:怎么|如何|怎样|能不能|可以|能否).{0,12}?(?:安装|装|设置|下载|卸载|更新|升级|打开|"
                              r"关闭|开启|删除|恢复|截|录|转|导出|导入|备份|连接|配置|清理|重置|同步|登录|运行|使用|用)"),
             "en": re.compile(r"\b(?:how (?:do|can|to|should) (?:i |you )?|can i |is there a way to )(?:\w+ ){0,2}?"
                              r"(?:install|set up|setup|download|uninstall|update|upgrade|open|turn|enable|disable|"
                              r"delete|remove|restore|take|record|convert|export|import|back up|backup|connect|"
                              r"configure|clear|reset|sync|log|run|use|fix|change|find|get)\b", re.IGNORECASE)}
_BUY_RE = {"zh": re.compile(r"推荐|有没有|哪款|哪个|买|入手|选"),
           "en": re.compile(r"\b(?:recommend|suggest|any|which|best|buy|get|worth|options?|alternatives?|where)\b",
                            re.IGNORECASE)}
_OWN_AMOUNT_RE = re.compile(r"\d[\d,.]*\s*(?:千|万|元|块|以内|以下|左右|k\b)|[$€£¥]\s?\d|"
                            r"\b(?:under|below|less than)\s+\$?\d", re.IGNORECASE)
_QUESTION_CLAUSE_RE = re.compile(r"[?？]|吗|还是|\bor\b", re.IGNORECASE)
_CLAUSE_RE = re.compile(r"[，,。.;；!！?？]")


# cheap tests first: most turns state nothing, and only those that do are scanned for slots
_MAY_STATE = {"zh": re.compile(r"我|预算|岁|个月|过敏"),
              "en": re.compile(r"\b(?:i(?:'m| am)?|my|budget|old|allergic)\b", re.IGNORECASE)}


def stated_constraints(history: Sequence[Message], lang: str) -> tuple[str | None, str | None, str | None]:
    """(platform, budget, who the requests are for) the user's own turns stated, the latest of each; None where
    nothing was stated.

    >>> stated_constraints([Message("user", "我用的是 Mac，怎么给 PDF 加水印？")], "zh")
    ('Mac', None, None)
    >>> stated_constraints([Message("user", "孩子 5 岁，对花生过敏，早餐吃点啥好")], "zh")[2]
    '5 岁 花生过敏'
    """
    return _stated(tuple(m.content for m in history if m.role == "user"), lang)


@lru_cache(maxsize=1024)
def _stated(user_turns: tuple[str, ...], lang: str) -> tuple[str | None, str | None, str | None]:
    platform = budget = age = allergy = None
    if lang not in _MAY_STATE:
        return None, None, None  # the ways of stating one's machine, budget or child are known for zh and en only
    own = _ZH_OWN_RE if lang == "zh" else _EN_OWN_RE
    money = _ZH_BUDGET_RE if lang == "zh" else _EN_BUDGET_RE
    for text in user_turns:
        if not _MAY_STATE[lang].search(text):
            continue
        for s, e, kind in slot_spans(text):
            if kind == "platform" and text[s:e].lower() in _OS and own.search(text[:s]) \
                    and not _QUESTION_CLAUSE_RE.search(_clause_at(text, s)):
                platform = text[s:e]  # "我用的是 Mac，…" states it; "我用 Mac 还是 Windows 好？" asks
        if (b := money.search(text)) is not None:
            budget = b.group(1).strip().rstrip(",.，。")
        if (a := (_ZH_AGE_RE if lang == "zh" else _EN_AGE_RE).search(text)) is not None:
            age = (a.group(1) or a.group(2)) if lang == "zh" else f"{a.group(1)} year old"
        if (al := (_ZH_ALLERGY_RE if lang == "zh" else _EN_ALLERGY_RE).search(text)) is not None:
            allergy = f"{al.group(1)}过敏" if lang == "zh" else al.group(0)  # (the words the user wrote)
    person = " ".join(x for x in (age, allergy) if x) or None
    return platform, budget, person


def _clause_at(text: str, i: int) -> str:
    """The clause of ``text`` around position ``i``, with the punctuation that closes it."""
    start = max((m.end() for m in _CLAUSE_RE.finditer(text, 0, i)), default=0)
    end = next((m.end() for m in _CLAUSE_RE.finditer(text, i)), len(text))
    return text[start:end]


def carry_constraints(query: str, out: str, history: Sequence[Message], lang: str) -> tuple[str, str] | None:
    """``out`` (the rewrite so far, or the query) with the stated platform / budget the request does not name of
    its own, and how; None when nothing is carried."""
    platform, budget, person = stated_constraints(history, lang)
    if platform is None and budget is None and person is None:
        return None
    if platform is not None and not _HOWTO_RE[lang].search(query):
        platform = None
    if budget is not None and (not _BUY_RE[lang].search(query) or _OWN_AMOUNT_RE.search(out)):
        budget = None  # a request naming its own amount ("2000 以内的耳机推荐？") keeps it
    if person is not None and (not _FOR_PERSON_RE[lang].search(query)
                               or (_ZH_AGE_RE if lang == "zh" else _EN_AGE_RE).search(out)):
        person = None  # a request naming an age of its own ("3 岁的孩子能吃吗") is for that child
    if platform is None and budget is None and person is None:
        return None
    # a system of its own ("on Windows") blocks the stated one; an app ("Word") does not
    own_os = any(k == "platform" and out[s:e].lower() in _OS for s, e, k in slot_spans(out))
    add = [c for c in ((None if own_os else platform), budget, person)
           if c is not None and c.lower() not in out.lower()]
    if not add:
        return None
    core = out.strip().rstrip("？?！!。. ")
    return f"{core} {' '.join(add)}", f"stated by the user: {', '.join(add)}"


__all__ = ["carry_constraints", "stated_constraints"]
