"""Result cleaning: text, snippets cut at sentence ends (never mid-word), dates in every provider's forms."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from convsearch.backends.web.clean import clean_text, cut_snippet, published_date, shown_url, web_hit
from convsearch.text import count_tokens

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_clean_text_drops_tags_and_decodes_entities():
    assert clean_text("<strong>AnySearch</strong> pricing &amp; plans&nbsp;today") == "AnySearch pricing & plans today"
    assert clean_text("深圳&lt;天气&gt; <b>多云</b>\n\n转晴") == "深圳<天气> 多云 转晴"
    assert clean_text(None) == ""


def test_short_snippets_are_kept_whole():
    s = "SpaceX first launched Falcon 1 in 2006."
    assert cut_snippet(s, 120) == s


@pytest.mark.parametrize("text", [
    "Hybrid search merges keyword search with vector search. " * 20,
    "混合检索把关键词检索与向量检索的结果融合在一起。" * 20,
    "混合检索把关键词检索与向量检索融合。Hybrid search merges both lists! " * 15,
])
def test_long_snippets_end_at_a_sentence_within_the_budget(text):
    out = cut_snippet(text, 40)
    assert count_tokens(out) <= 40
    assert out[-1] in "。.!" and text.startswith(out)


def test_one_long_sentence_is_cut_at_a_word_not_inside_one():
    text = "internationalization " * 200
    out = cut_snippet(text, 30)
    assert out.endswith("…") and count_tokens(out.rstrip("…")) <= 30
    assert all(w == "internationalization" for w in out.rstrip("…").split())
    zh = "这是一个没有标点的非常长的中文句子" * 30
    cut = cut_snippet(zh, 25)
    assert cut.endswith("…") and zh.startswith(cut[:-1]) and count_tokens(cut[:-1]) <= 25


@pytest.mark.parametrize("raw,expect", [
    ("2026-11-29T08:00:00", "2026-11-29"),
    ("2026-11-29T23:30:00-05:00", "2026-11-30"),        # converted to UTC
    ("2026-11-29", "2026-11-29"),
    ("Mon, 30 Nov 2026 08:00:00 GMT", "2026-11-30"),     # Tavily (RFC 2822)
    ("Mar 5, 2026", "2026-03-05"),                      # SerpApi
    ("November 5, 2026", "2026-11-05"),                 # Brave age
    ("5 Mar 2026", "2026-03-05"),
    ("2026年3月5日", "2026-03-05"),
    ("11月30日", "2026-11-30"),                          # no year: this year's
    ("Dec 25", "2025-12-25"),                            # no year, in the future: last year's
    ("3 days ago", "2026-11-28"),
    ("2 hours ago", "2026-12-01"),
    ("10 hours ago", "2026-11-30"),                      # counted from 09:00 UTC
    ("a week ago", "2026-11-24"),
    ("1 month ago", "2026-11-01"),
    ("2 小时前", "2026-12-01"),
    ("3 天前", "2026-11-28"),
    ("1 周前", "2026-11-24"),
    ("2 个月前", "2026-10-02"),
    ("昨天", "2026-11-30"),
    ("yesterday", "2026-11-30"),
    (1764547200, "2025-12-01"),                          # epoch seconds
])
def test_published_dates(raw, expect):
    assert published_date(raw, NOW) == expect


@pytest.mark.parametrize("raw", [None, "", "soon", "2026-13-45", "Smarch 5, 2026", "很久以前"])
def test_unreadable_dates_are_none(raw):
    assert published_date(raw, NOW) is None


def test_web_hit_carries_provider_rank_domain_and_canonical_id():
    h = web_hit("brave", 2, title="<b>AnySearch</b> 价格", url="https://www.AnySearch.example/pricing/?utm_source=x",
                snippet="专业版每月 99 元。", published="3 天前", now=NOW)
    assert h is not None and h.id == "//anysearch.example/pricing" and h.title == "AnySearch 价格"
    assert h.url == "https://www.AnySearch.example/pricing/"  # the shown link loses only the tracking parameter
    assert h.date == "2026-11-28" and h.rank == 2 and h.source == "brave" and h.score == 0.5
    assert h.metadata["provider"] == "brave" and h.metadata["domain"] == "anysearch.example"
    assert h.metadata["lang"] == "zh" and h.metadata["published_raw"] == "3 天前"
    assert web_hit("brave", 1, title="x", url="", snippet="y", now=NOW) is None


@pytest.mark.parametrize("raw, shown", [
    ("https://a.example/p?utm_source=x&id=3&utm_medium=mail#top", "https://a.example/p?id=3#top"),
    ("https://a.example/s?q=%E4%BB%B7%E6%A0%BC&gclid=1&q=2", "https://a.example/s?q=%E4%BB%B7%E6%A0%BC&q=2"),
    ("https://a.example/list?from=2024&ref=home", "https://a.example/list?from=2024&ref=home"),  # may select content
    ("https://a.example/p", "https://a.example/p"),
])
def test_shown_urls_drop_only_click_tracking_parameters(raw, shown):
    assert shown_url(raw) == shown
