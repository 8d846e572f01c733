"""Guardrails on LLM output (length, blocked words, language, faithfulness) and output cleaning."""

from __future__ import annotations

import pytest

from convsearch.resolve.guard import (blocked_words_found, language_problem, length_problem, output_problem,
                                      query_length)
from convsearch.rewrite.llm import clean_output, cut
from convsearch.types import Message

ZH = [Message("user", "AnySearch 支持哪些检索方式？"), Message("assistant", "支持 BM25、向量和混合检索。")]
EN = [Message("user", "Who founded SpaceX?"), Message("assistant", "Elon Musk founded SpaceX in 2002.")]


def test_query_length_counts_chinese_characters_and_latin_words():
    assert query_length("AnySearch 的价格", "zh") == 4
    assert query_length("深圳最近三天适合露营吗", "zh") == 11
    assert query_length("When did SpaceX first launch a rocket?", "en") == 7
    assert query_length("SpaceX's Falcon-1 launch", "en") == 3


def test_length_cap_defaults_and_room_for_long_queries():
    assert length_problem("AnySearch 的价格", "价格呢？", "zh") is None
    assert length_problem("价" * 31, "价格呢？", "zh") == "too long (31 characters > 30)"
    long_en = " ".join(["word"] * 21)
    assert length_problem(long_en, "and it?", "en") == "too long (21 words > 20)"
    # a 28-word question may still gain a few words (a third of the cap)
    q = " ".join(["w"] * 28)
    assert length_problem(q + " SpaceX", q, "en") is None
    assert length_problem("价格", "价格呢", "zh", max_zh_chars=1) is None  # the query's own length + cap // 3


def test_blocked_words_match_chinese_substrings_and_whole_latin_words():
    assert blocked_words_found("AnySearch 竞品对比", ["竞品"]) == {"竞品"}
    assert blocked_words_found("Competitor pricing", ["competitor"]) == {"competitor"}
    assert blocked_words_found("competitors pricing", ["competitor"]) == set()
    assert blocked_words_found("anything", ["", "  "]) == set()


def test_language_check():
    assert language_problem("AnySearch 的价格", "价格呢？") is None
    assert language_problem("AnySearch 价格", "价格呢？") is None  # a Latin name may dominate
    assert language_problem("AnySearch pricing", "价格呢？") == "language changed (zh → en)"
    assert language_problem("SpaceX 的第一次发射", "When did it first launch?") == "language changed (en → zh)"
    assert language_problem("When did SpaceX first launch?", "When did it first launch?") is None


def test_output_problem_accepts_a_faithful_rewrite():
    assert output_problem("AnySearch 的价格", "价格呢？", ZH) is None
    assert output_problem("When did SpaceX first launch a rocket?", "When did it first launch a rocket?", EN) is None


@pytest.mark.parametrize("out, why", [
    ("", "empty"),
    ("？？", "no words"),
    ("AnySearch 的价格" * 9, "too long"),
    ("AnySearch 的价格和折扣", "unfaithful: adds 折扣"),
    ("AnySearch pricing", "language changed"),
])
def test_output_problem_rejects(out, why):
    assert output_problem(out, "价格呢？", ZH).startswith(why)


def test_output_problem_blocked_words_and_topic():
    assert output_problem("AnySearch 的价格", "价格呢？", ZH, blocked=["AnySearch"]) == "blocked words (AnySearch)"
    # a word from the session topic is faithful
    assert output_problem("NovaDB 的价格", "价格呢？", (), "NovaDB | Pricing") is None
    assert output_problem("NovaDB 的价格", "价格呢？", ()).startswith("unfaithful")


@pytest.mark.parametrize("raw, clean", [
    ("AnySearch 的价格", "AnySearch 的价格"),
    ("  \"AnySearch 的价格\"  ", "AnySearch 的价格"),
    ("“AnySearch 的价格”", "AnySearch 的价格"),
    ("Rewritten query: When did SpaceX first launch?", "When did SpaceX first launch?"),
    ("**Standalone query:** When did SpaceX launch?", "When did SpaceX launch?"),
    ("改写后的查询：AnySearch 的价格", "AnySearch 的价格"),
    ("```\nAnySearch 的价格\n```", "AnySearch 的价格"),
    ("AnySearch 的价格\n\nExplanation: I added the product name.", "AnySearch 的价格"),
    ('{"query": "AnySearch 的价格"}', "AnySearch 的价格"),
    ("《三体》的作者", "《三体》的作者"),
    ("<think>The user means AnySearch.</think>\nAnySearch 的价格", "AnySearch 的价格"),
    ("<think>still thinking when max_tokens ran out", ""),
    ("Sure, here is the rewritten query:\nWhen did SpaceX first launch?", "When did SpaceX first launch?"),
    ("Query:\nAnySearch 的价格", "AnySearch 的价格"),
    ("", ""),
])
def test_clean_output(raw, clean):
    assert clean_output(raw) == clean


def test_cut_prefers_a_sentence_end():
    assert cut("short", 10) == "short"
    assert cut("第一句话很长很长。第二句话也很长很长很长。", 15) == "第一句话很长很长。"
    out = cut("a" * 50, 10)
    assert len(out) == 10 and out.endswith("…")
