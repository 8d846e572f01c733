"""Chinese references to a listed item by position ("第二种", "最后一个", "前者") and the inline series of a
Chinese answer ("关键词检索、向量检索和混合检索", "《机器学习》和《统计学习方法》"): ``ORDINAL``, read by
``rewrite.ordinal``."""

from __future__ import annotations

import re

from ... import lexicon as lx
from ...text import is_cjk, tagged
from ..base import OrdinalForms, OrdinalRef, Series, join_tokens
from .mentions import mentions

_ZH_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_ZH_CLS = "个种款家条步点项类部本首位套组样座所间台辆只门张件场支"
# not "第一点，" (firstly) or "最后一个问题" (one last question): those open the speaker's own list
_ZH_NOT_REF = r"(?!\s*(?:问题|[，,：:]))"
_ZH_ORD_RE = re.compile(rf"第\s*([一二三四五六七八九十]|\d{{1,2}})\s*([{_ZH_CLS}]){_ZH_NOT_REF}")
_ZH_LAST_RE = re.compile(rf"最后(?:一|那)?\s*([{_ZH_CLS}]){_ZH_NOT_REF}")
_ZH_FORMER_RE = re.compile(r"前者|后者")


def find_ordinal(query: str) -> OrdinalRef | None:
    """The first positional reference in a Chinese ``query``, or None."""
    m = _ZH_ORD_RE.search(query)
    if m:
        g = m.group(1)
        n = int(g) if g.isdigit() else _ZH_NUM[g]
        return OrdinalRef(m.start(), m.end(), (n,), m.group(2)) if n > 0 else None
    m = _ZH_LAST_RE.search(query)
    if m:
        return OrdinalRef(m.start(), m.end(), (-1,), m.group(1))
    m = _ZH_FORMER_RE.search(query)
    if m:  # one of two: only a list of exactly two answers it
        return OrdinalRef(m.start(), m.end(), (1 if m.group(0) == "前者" else -1,), "", pair=True)
    return None


_ZH_TITLE_RE = re.compile(r"《[^《》]{1,30}》")


_ZH_ASIDE_RE = re.compile(r"[（(][^（）()]{0,30}[）)]")
# the first opener after at least one character ("常用的肥料有有机肥" → "有机肥"; "是非题" has none)
_ZH_LIST_OPENER_RE = re.compile(r".+?(?:有|是|包括|包含|比如|例如|推荐|去|如|[:：])")
_ZH_ITEM_MAX = 12
_ZH_SERIES_BREAK_RE = re.compile(r"[，,；;]")
_ZH_SUFFIX_TAGS = frozenset({"a", "ng", "k", "b"})
_ZH_SERIES_TAIL_RE = re.compile(r"(?:[一二三四五六七八九十两几\d]+\s*[个种款家条类项样部本]|"
                                r"等|这|都|也|可以|各有|均).*$")


def _zh_item(chunk: str, first: bool, last: bool) -> str | None:
    """A short chunk of a 、 series is itself the item ("睡眠限制疗法"; the first after 有/包括/："常见的有认知行为
    疗法" → "认知行为疗法"; the last before a count or 等: "混合检索三种方式" → "混合检索"); None when it is longer
    than a name."""
    text = _ZH_ASIDE_RE.sub("", chunk).strip().rstrip("。.；;！!？?")
    if first:
        colon = max(text.rfind("："), text.rfind(":"))
        m = _ZH_LIST_OPENER_RE.match(text) if colon < 0 else None
        # "主要有三类：防癌险": after a colon the list begins, whatever came before it
        text = text[colon + 1:].strip() if colon >= 0 else text[m.end():].strip() if m else text
    if last:
        text = _ZH_SERIES_TAIL_RE.sub("", text).strip()
    # all Chinese (a chunk with a Latin name goes by its mentions, which keep "小米 14 Ultra" whole), a noun at
    # its end, no pronoun or preposition and no one-character verb opening it ("你去故宫", "长城看看": a clause)
    if not (1 < len(text) <= _ZH_ITEM_MAX and all(is_cjk(c) for c in text)):
        return None
    toks = tagged(text)
    # a noun at the end, or a one-character suffix after one (防癌/vn 险/a; not a particle: "颐和园呢")
    noun_end = toks[-1][1].startswith(("n", "vn")) or (
        len(toks) > 1 and len(toks[-1][0]) == 1 and toks[-1][1] in _ZH_SUFFIX_TAGS
        and toks[-2][1].startswith(("n", "vn")))
    if not noun_end or any(t[:1] in ("r", "p") for _, t in toks) or (
            len(toks[0][0]) == 1 and toks[0][1].startswith("v")):
        return None
    return text


def _zh_series(sentence: str) -> Series:
    titles = _ZH_TITLE_RE.findall(sentence)
    if "、" not in sentence:
        # "周志华的《机器学习》和李航的《统计学习方法》": two or more titles are the list
        return [(tuple(titles), "names")] if len(titles) >= 2 else []
    chunks = sentence.split("、")
    # the series ends at the clause it is in: "……和意外险，老人优先考虑……" (and begins after a clause before it)
    chunks[0] = _ZH_SERIES_BREAK_RE.split(chunks[0])[-1]
    chunks[-1] = _ZH_SERIES_BREAK_RE.split(chunks[-1])[0]
    if len(_ZH_TITLE_RE.findall(chunks[-1])) >= 2:  # "《B》和《C》": the titles themselves
        chunks = chunks[:-1] + _ZH_TITLE_RE.findall(chunks[-1])
        return [(tuple(t for c in chunks for t in _ZH_TITLE_RE.findall(c)[:1]), "names")] if all(
            _ZH_TITLE_RE.search(c) for c in chunks) else []
    # the last member follows a conjunction word (和/与/或者), found by the tokenizer: not the 和 of 颐和园
    toks = tagged(chunks[-1])
    k = next((i for i, (w, t) in enumerate(toks) if i > 0 and t == "c" and w in lx.ZH_SERIES_JOINS), None)
    if k is not None:
        # (re-joined with the spaces of Latin names: "Bose QC Ultra", not "BoseQCUltra")
        chunks = chunks[:-1] + [join_tokens([w for w, _ in toks[:k]]), join_tokens([w for w, _ in toks[k + 1:]])]
    items: list[str] = []
    for i, chunk in enumerate(chunks):
        title = _ZH_TITLE_RE.search(chunk)
        if title is not None:  # "《流畅的 Python》": a title in book-title marks is the item, whole
            items.append(title.group(0))
            continue
        whole = _zh_item(chunk, i == 0, i == len(chunks) - 1)
        if whole is not None:
            items.append(whole)
            continue
        ms = [m for m in mentions(chunk) if "的" not in m.text] or list(mentions(chunk))
        if not ms:
            return []
        items.append((ms[-1] if i == 0 else ms[0]).text)
    # a Chinese series names its members as answers to the question ("支持哪些检索方式"): usable as listed
    return [(tuple(items), "names")] if len(items) >= 2 else []


ORDINAL = OrdinalForms(find=find_ordinal, series=_zh_series, title_words=lambda s: len(tagged(s)), and_word="和")
