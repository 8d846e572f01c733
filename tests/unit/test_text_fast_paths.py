"""The shortcuts in text.py give what their plain definitions give: ``collapse_spaces`` is
``" ".join(text.split())``; ``truncate_tokens`` cuts where counting ``_RUNS_RE`` matches (jieba words inside CJK
runs) cuts, whether it took the one-match path (no CJK), the character-count bound or the count itself."""

from __future__ import annotations

import re
import string
import sys
from itertools import islice

from hypothesis import given, settings
from hypothesis import strategies as st

from convsearch.text import _NEVER_IN_TOKEN, _RUNS_RE, CJK_RE, _cut_cjk, collapse_spaces, truncate_tokens


def reference_truncate(text: str, limit: int, ellipsis: str = "…") -> str:
    """The plain definition: the (limit + 1)-th token's start is the cut."""
    if len(text) <= limit:
        return text
    head = text[: limit * 24]
    starts = []
    for m in _RUNS_RE.finditer(head):
        if m.group(1):
            pos = m.start()
            for w in _cut_cjk(m.group(1)):
                starts.append(pos)
                pos += len(w)
        else:
            starts.append(m.start())
    cut = next(islice(iter(starts), limit, None), None)
    if cut is not None:
        return head[:cut].rstrip() + ellipsis
    return text if len(head) == len(text) else head.rstrip() + ellipsis


PIECES = ["ab", "c", " ", "  ", "\t", "\n", "\u3000", "\xa0", ",", ".", "-", "_", "'", "’", "1", "x'y", "don't", "İ",
          "é", "中文", "字", "，", "。", "？", "价格呢", "U.S.", "“", "（"]
texts = st.lists(st.sampled_from(PIECES), max_size=80).map("".join) | st.text(alphabet=string.printable + "中文，’",
                                                                               max_size=200)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(texts, st.sampled_from([0, 1, 2, 3, 5, 8, 13, 40, 120]))
def test_truncate_tokens_matches_its_definition(text, limit):
    assert truncate_tokens(text, limit) == reference_truncate(text, limit)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(texts | st.text(max_size=60))
def test_collapse_spaces_is_split_and_join(text):
    assert collapse_spaces(text) == " ".join(text.split())


def test_the_shortcuts_rest_on_character_classes():
    # every whitespace character but the space is unprintable (collapse_spaces's shortcut)
    assert not [c for c in range(sys.maxunicode + 1) if chr(c).isspace() and chr(c) != " " and chr(c).isprintable()]
    # no token holds a character of _NEVER_IN_TOKEN (truncate_tokens's bound)
    for c in _NEVER_IN_TOKEN:
        assert len(c) == 1 and not re.match(r"[^\W_]", c) and not CJK_RE.match(c) and c not in "'’"


def test_truncate_tokens_cuts_long_texts_of_each_kind():
    en = "word " * 300
    assert truncate_tokens(en, 120) == ("word " * 120).rstrip() + "…"
    fancy = "café’s naïve " * 100  # not ASCII, no CJK
    assert truncate_tokens(fancy, 7) == reference_truncate(fancy, 7) == "café’s naïve café’s naïve café’s naïve café’s…"
    zh = "今天天气很好，我们去公园散步吧。" * 20
    assert truncate_tokens(zh, 10) == reference_truncate(zh, 10) and truncate_tokens(zh, 10).endswith("…")
    short_zh = "，".join(["价格"] * 60)  # 179 characters, 60 tokens: the bound proves no cut
    assert truncate_tokens(short_zh, 120) == short_zh
