"""The shortcuts in text.py (and the reranker's use of its classes) give what their plain definitions give:
``collapse_spaces`` is ``" ".join(text.split())``; ``truncate_tokens`` cuts where counting ``_RUNS_RE`` matches
(jieba words inside CJK runs) cuts, whether it took the one-match path (no CJK), the character-count bound or the
count itself; the reranker finds Chinese terms in text it did not lower-case."""

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
    for c in map(chr, range(sys.maxunicode + 1)):
        # every whitespace character but the space is unprintable (collapse_spaces's shortcut)
        assert not (c.isspace() and c != " " and c.isprintable()), hex(ord(c))
        # lower() changes no CJK character and makes none (the heuristic reranker's Chinese terms skip it)
        assert (c.lower() == c) if CJK_RE.match(c) else not CJK_RE.search(c.lower()), hex(ord(c))
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


def test_rerank_finds_chinese_terms_in_text_it_does_not_lower():
    from convsearch.rerank.heuristic import rerank
    from convsearch.types import Hit

    hits = [Hit("a", "NOVADB 简介", "NovaDB 的价格按节点计费。", 2.0),
            Hit("b", "AnySearch", "AnySearch 的价格免费。", 1.0), Hit("c", "其他", "无关的内容。", 1.5)]
    chinese = rerank(hits, "价格呢", "AnySearch 价格")  # a Latin term: every hit lower-cased
    only_zh = rerank(hits, "价格呢", "价格")  # Chinese terms only: none is
    # fused 1 / 0 / 0.5; b holds both words of the rewrite ("anysearch" only lower-cased), a one of two
    assert [(h.id, h.score) for h in chinese] == [("a", 0.925), ("b", 0.4), ("c", 0.3)]
    assert [(h.id, h.score) for h in only_zh] == [("a", 1.0), ("b", 0.4), ("c", 0.3)]
