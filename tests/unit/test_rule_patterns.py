"""The rule steps' patterns are compiled at import, not inside a turn; the steps that read them answer as before."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import convsearch

zh_steps = importlib.import_module("convsearch.lang.zh.steps")
en_steps = importlib.import_module("convsearch.lang.en.steps")

SRC = Path(convsearch.__file__).parent
# the modules whose inline literal patterns were hoisted: each compiled on first use inside a turn before
HOT = ("lang/en/steps.py", "lang/zh/steps.py", "lang/en/frame.py", "resolve/offer.py", "resolve/compose.py")
# re.search(r"…", text): a whole literal pattern as the first argument (one built from a name, r"…" + re.escape(x),
# or an f-string, compiles per name anyway)
INLINE_LITERAL = re.compile(r"\bre\.(?:match|search|sub|subn|findall|finditer|fullmatch|split)\("
                            r"""\s*r?(?:"[^"]*"|'[^']*')\s*,""")


@pytest.mark.parametrize("path", HOT)
def test_no_inline_literal_pattern_in_the_rule_steps(path):
    found = [n for n, line in enumerate((SRC / path).read_text(encoding="utf-8").splitlines(), 1)
             if INLINE_LITERAL.search(line)]
    assert found == [], f"{path}: compile these patterns at import (lines {found})"


@pytest.mark.parametrize(("query", "frame", "out"), [
    ("去马来西亚呢？", "中国护照去新加坡需要签证吗", "中国护照去马来西亚需要签证吗"),
    ("到广州呢？", "从北京到上海的高铁要多久", "从北京到广州的高铁要多久"),
    ("在深圳呢？", "在上海租房一个月多少钱", "在深圳租房一个月多少钱"),
])
def test_preposition_swap_reads_each_place_preposition(query, frame, out):
    got = zh_steps.preposition_swap(query, frame)
    assert got is not None and got[0] == out


@pytest.mark.parametrize(("query", "frame"), [
    ("从广州呢？", "从北京到上海的高铁要多久"),  # 从 is no place preposition of the step
    ("到广州呢？", "北京的高铁要多久"),  # the frame has no 到
    ("去明天呢？", "中国护照去新加坡需要签证吗"),  # a time does not fill a place slot
])
def test_preposition_swap_leaves_other_fragments(query, frame):
    assert zh_steps.preposition_swap(query, frame) is None


def test_ellipsis_drops_a_leading_preposition_and_article():
    from convsearch.types import Message as M

    history = [M("user", "Does AnySearch support Chinese?"), M("assistant", "Yes.")]
    t = en_steps.turn("What about for the NovaDB?", history)
    out = en_steps.ellipsis(t)
    assert out is not None and out.out == "Does NovaDB support Chinese?"
