"""Constraints the user stated about themselves, carried into later requests of the session.

"我用的是 Mac，怎么给 PDF 加水印？" … "怎么把 PDF 转成 Word？": the second question names everything it asks about, but
the answer depends on the platform the user said they use; a search for it should say "Mac". Only what the user
stated in so many words counts ("我用的是 / 我的是 / I use / I'm on / on my" + a platform of the slot lexicon;
"预算 / budget" + an amount), and only a request that names no platform or amount of its own gets it, as a
separate term. Pure string work over the user's own turns.
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
_ZH_REQUEST_RE = re.compile(r"[？?]|吗|怎么|如何|哪|什么|推荐|有没有|多少")
_EN_REQUEST_RE = re.compile(r"\?|^\W*(?:how|what|which|where|can|should|is|are|do|does|any|recommend)\b", re.IGNORECASE)


# cheap tests first: most turns state nothing, and only those that do are scanned for slots
_MAY_STATE = {"zh": re.compile(r"我|预算"), "en": re.compile(r"\b(?:i(?:'m| am)?|my|budget)\b", re.IGNORECASE)}


def stated_constraints(history: Sequence[Message], lang: str) -> tuple[str | None, str | None]:
    """(platform, budget) the user's own turns stated, the latest of each; None where nothing was stated.

    >>> stated_constraints([Message("user", "我用的是 Mac，怎么给 PDF 加水印？")], "zh")
    ('Mac', None)
    """
    return _stated(tuple(m.content for m in history if m.role == "user"), lang)


@lru_cache(maxsize=1024)
def _stated(user_turns: tuple[str, ...], lang: str) -> tuple[str | None, str | None]:
    platform = budget = None
    own = _ZH_OWN_RE if lang == "zh" else _EN_OWN_RE
    money = _ZH_BUDGET_RE if lang == "zh" else _EN_BUDGET_RE
    for text in user_turns:
        if not _MAY_STATE[lang].search(text):
            continue
        for s, e, kind in slot_spans(text):
            if kind == "platform" and text[s:e].lower() in _OS and own.search(text[:s]):
                platform = text[s:e]
        if (b := money.search(text)) is not None:
            budget = b.group(1).strip()
    return platform, budget


def carry_constraints(query: str, out: str, history: Sequence[Message], lang: str) -> tuple[str, str] | None:
    """``out`` (the rewrite so far, or the query) with the stated platform / budget the request does not name of
    its own, and how; None when nothing is carried."""
    if not (_ZH_REQUEST_RE if lang == "zh" else _EN_REQUEST_RE).search(query):
        return None
    platform, budget = stated_constraints(history, lang)
    if platform is None and budget is None:
        return None
    # a system of its own ("on Windows") or an amount blocks the stated one; an app ("Word") does not
    kinds = {"os" if k == "platform" and out[s:e].lower() in _OS else k for s, e, k in slot_spans(out)}
    add = [c for c, k in ((platform, "os"), (budget, "amount")) if c is not None and k not in kinds
           and c.lower() not in out.lower()]
    if not add:
        return None
    core = out.strip().rstrip("？?！!。. ")
    return f"{core} {' '.join(add)}", f"stated by the user: {', '.join(add)}"


__all__ = ["carry_constraints", "stated_constraints"]
