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
from ..lang import reading
from ..types import Message
from .frame import slot_spans

_OS = frozenset(w.lower() for w in lx.SLOTS["os"])

_OWN_AMOUNT_RE = re.compile(r"\d[\d,.]*\s*(?:千|万|元|块|以内|以下|左右|k\b)|[$€£¥]\s?\d|"
                            r"\b(?:under|below|less than)\s+\$?\d", re.IGNORECASE)
_QUESTION_CLAUSE_RE = re.compile(r"[?？]|吗|还是|\bor\b", re.IGNORECASE)
_CLAUSE_RE = re.compile(r"[，,。.;；!！?？]")




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
    forms = reading(lang).stated
    if forms is None:
        return None, None, None  # a language that does not say how its users state these carries none
    for text in user_turns:
        if not forms.may_state.search(text):  # cheap test first: most turns state nothing
            continue
        for s, e, kind in slot_spans(text):
            if kind == "platform" and text[s:e].lower() in _OS and forms.own.search(text[:s]) \
                    and not _QUESTION_CLAUSE_RE.search(_clause_at(text, s)):
                platform = text[s:e]  # "我用的是 Mac，…" states it; "我用 Mac 还是 Windows 好？" asks
        if (b := forms.budget.search(text)) is not None:
            budget = b.group(1).strip().rstrip(",.，。")
        if (a := forms.age.search(text)) is not None:
            age = forms.age_text(a)
        if (al := forms.allergy.search(text)) is not None:
            allergy = forms.allergy_text(al)
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
    forms = reading(lang).stated
    assert forms is not None  # (stated_constraints found something: the language has its forms)
    if platform is not None and not forms.howto.search(query):
        platform = None
    if budget is not None and (not forms.buy.search(query) or _OWN_AMOUNT_RE.search(out)):
        budget = None  # a request naming its own amount ("2000 以内的耳机推荐？") keeps it
    if person is not None and (not forms.for_person.search(query) or forms.age.search(out)):
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
