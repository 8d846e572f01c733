"""Chinese frame-completion steps, in the order they are tried (``FRAME_STEPS``)."""

from __future__ import annotations

import re

from ..rewrite import frame as f


def comparison(query: str, frame: str) -> tuple[str, str] | None:
    """A comparison keeps the frame's entity and predicate and adds the new one beside it.

    >>> comparison("跟泰诺林比哪个副作用小？", "孩子发烧可以吃美林吗")[0]
    '美林和泰诺林哪个副作用小'
    """
    return f._comparison(query, frame, "zh")


def preposition_swap(query: str, frame: str) -> tuple[str, str] | None:
    """"去 X 呢" replaces what follows the same 去/到/在 in the frame, when both have one slot type.

    >>> preposition_swap("去马来西亚呢？", "中国护照去新加坡需要签证吗")[0]
    '中国护照去马来西亚需要签证吗'
    """
    zf = f._zh_fragment(query)
    if zf is None:
        return None
    _, prep, x, _tail = zf
    if prep in ("去", "到", "在") and (pm := re.search(re.escape(prep) + r"\s*", frame)) is not None:
        sp = [s for s in f.slot_spans(frame) if s[0] == pm.end()]
        if sp and f.slot_kind(x) == sp[0][2]:
            s, e, kind = sp[0]
            return f._replace(frame, s, e, x), f"entity swap ({prep} {kind}): {frame[s:e]} → {x}"
    return None


def typed_swap(query: str, frame: str) -> tuple[str, str] | None:
    """The fragment's phrase replaces the frame's span of its slot type (place, time, platform, model number).

    >>> typed_swap("后天呢？", "杭州今天会下雨吗")[0]
    '杭州后天会下雨吗'
    >>> typed_swap("4080 SUPER 呢？", "RTX 4090 的功耗是多少")[0]
    'RTX 4080 SUPER 的功耗是多少'
    """
    zf = f._zh_fragment(query)
    return f._typed_swap(zf[2], frame, "zh") if zf is not None else None


def possessor_swap(query: str, frame: str) -> tuple[str, str] | None:
    """"Y的呢" swaps the owner of the frame's "E 的 …" for Y.

    >>> possessor_swap("微软的呢？", "苹果公司的市值是多少")[0]
    '微软的市值是多少'
    """
    zf = f._zh_fragment(query)
    if zf is None or zf[1] or not re.search(r"的\s*呢?[？?！!。.，,~～\s]*$", query):
        return None
    return f._possessor_swap(zf[2], frame)


def attribute_shift(query: str, frame: str) -> tuple[str, str] | None:
    """An attribute replaces the frame's attribute and keeps its entity.

    >>> attribute_shift("续航呢？", "小鹏 G6 的百公里加速是多少")[0]
    '小鹏 G6 的续航是多少'
    """
    zf = f._zh_fragment(query)
    return f._attribute_shift(zf[2], frame, "zh") if zf is not None else None


def condition(query: str, frame: str) -> tuple[str, str] | None:
    """A condition is added to a request for recommendations, as a separate term.

    >>> condition("有带停车场的吗？", "春熙路附近有没有含早餐的酒店推荐")[0]
    '春熙路附近有没有含早餐的酒店推荐 带停车场'
    """
    return f._condition(query, frame, "zh")


FRAME_STEPS = (comparison, preposition_swap, typed_swap, possessor_swap, attribute_shift, condition)
