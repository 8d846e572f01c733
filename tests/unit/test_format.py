"""Citations [n], domains, snippets ≤ N tokens (real tokenizer), stale marker, the LLM context string."""

from __future__ import annotations

from datetime import date

import pytest

from convsearch.format import citations, context, domain, is_stale
from convsearch.text import count_tokens, truncate_tokens
from convsearch.types import Hit

TODAY = date(2025, 1, 1)
LONG_ZH = "新员工入职流程包括签订劳动合同、申请笔记本电脑以及部门经理审批，一般需要五个工作日完成全部手续。" * 20
LONG_EN = ("AnySearch supports hybrid retrieval that combines BM25 keyword search with dense vector embeddings, "
           "so that multilingual queries in Chinese and English find the same documents. ") * 15


def H(i: str, text: str = "短文本 short text", *, title: str = "", url: str = "", date: str | None = None) -> Hit:
    return Hit(i, title, text, 1.0, url, date)


@pytest.mark.parametrize("url,expected", [
    ("https://www.anysearch.example/pricing", "anysearch.example"),
    ("http://docs.anysearch.example/a?b=c", "docs.anysearch.example"),
    ("https://WWW.Example.COM:8443/x", "example.com"),
    ("", ""),
    ("not a url", ""),
])
def test_domain(url, expected):
    assert domain(url) == expected


def test_numbering_and_fields():
    hits = [H("a", title="AnySearch 价格", url="https://www.anysearch.example/p", date="2024-12-01"),
            H("b", title="NovaDB pricing", url="https://novadb.example/p"),
            H("c")]
    cs = citations(hits, today=TODAY)
    assert [c.n for c in cs] == [1, 2, 3]
    assert [c.id for c in cs] == ["a", "b", "c"]
    assert cs[0].domain == "anysearch.example" and cs[0].title == "AnySearch 价格"
    assert cs[2].title == "c"  # no title: the id stands in
    assert cs[1].date is None and cs[1].stale is False


@pytest.mark.parametrize("text", [LONG_ZH, LONG_EN], ids=["zh", "en"])
@pytest.mark.parametrize("limit", [120, 30, 7])
def test_snippet_token_cap(text, limit):
    assert count_tokens(text) > limit
    (c,) = citations([H("x", text)], snippet_tokens=limit, today=TODAY)
    assert count_tokens(c.snippet) <= limit
    assert count_tokens(c.snippet) >= limit - 2  # cut near the cap, not far below it
    assert c.snippet.endswith("…")
    assert " ".join(text.split()).startswith(c.snippet[:-1].rstrip())


def test_default_snippet_cap_is_120_tokens():
    (zh, en) = citations([H("z", LONG_ZH), H("e", LONG_EN)], today=TODAY)
    assert count_tokens(zh.snippet) <= 120 and count_tokens(en.snippet) <= 120
    assert len(zh.snippet) < len(LONG_ZH) and len(en.snippet) < len(LONG_EN)


def test_short_snippet_untouched_but_whitespace_collapsed():
    (c,) = citations([H("x", "AnySearch   支持\n\n混合检索。")], today=TODAY)
    assert c.snippet == "AnySearch 支持 混合检索。"


def test_truncate_tokens_keeps_original_characters():
    assert truncate_tokens("AnySearch 支持混合检索", 2) == "AnySearch 支持…"
    assert truncate_tokens("one two three four", 3) == "one two three…"
    assert truncate_tokens("one two", 5) == "one two"


@pytest.mark.parametrize("d,stale", [
    ("2023-06-01", True),
    ("2024-12-01", False),
    ("2024-01-02", False),  # 365 days before TODAY: not older than the limit
    ("2023-12-31", True),
    ("2023-06-01T10:00:00Z", True),
    (None, False),
    ("not a date", False),
])
def test_stale_marker_with_fixed_today(d, stale):
    assert is_stale(d, stale_days=365, today=TODAY) is stale
    (c,) = citations([H("x", date=d)], stale_days=365, today=TODAY)
    assert c.stale is stale


def test_stale_age_is_configurable():
    assert is_stale("2024-12-01", stale_days=7, today=TODAY) is True
    assert is_stale("2024-12-01", stale_days=60, today=TODAY) is False


def test_context_string():
    hits = [H("a", "AnySearch 专业版每月 99 元。", title="AnySearch 价格", url="https://www.anysearch.example/p",
              date="2022-01-01"),
            H("b", "NovaDB pricing is per node.", title="NovaDB pricing", url="https://novadb.example/p")]
    ctx = context(citations(hits, today=TODAY))
    assert ctx.startswith("[1] AnySearch 价格 (anysearch.example, 2022-01-01, stale)")
    assert "[2] NovaDB pricing (novadb.example)" in ctx
    assert "AnySearch 专业版每月 99 元。" in ctx and "NovaDB pricing is per node." in ctx
    assert ctx.index("[1]") < ctx.index("[2]")
    assert "[3]" not in ctx


def test_context_of_nothing_is_empty():
    assert context([]) == ""


def test_web_results_are_marked_undated_and_stale_only_when_time_sensitive():
    from datetime import date as _date

    from convsearch.format import citations as _cites
    from convsearch.format import context as _context
    from convsearch.types import Hit as _Hit

    web = {"source_type": "web", "provider": "brave"}
    hits = [_Hit("a", "深圳天气", "多云", 1.0, "https://weather.example.cn/a", None, "brave", 1, web),
            _Hit("b", "Old price", "old", 0.9, "https://x.example/b", "2020-01-01", "brave", 2, web),
            _Hit("c", "Local doc", "no date", 0.8, "", None, "local", 3, {})]
    today = _date(2026, 12, 1)
    sensitive = _cites(hits, stale_days=30, today=today, time_sensitive=True)
    assert [(c.undated, c.stale, c.provider) for c in sensitive] == [(True, False, "brave"), (False, True, "brave"),
                                                                     (False, False, "")]
    ctx = _context(sensitive)
    assert "[1] 深圳天气 (weather.example.cn, undated)" in ctx and "(x.example, 2020-01-01, stale)" in ctx
    calm = _cites(hits, stale_days=30, today=today, time_sensitive=False)
    assert not any(c.stale for c in calm)
    assert _cites(hits, stale_days=30, today=today)[1].stale  # unknown sensitivity: as before


def test_a_page_title_with_the_sites_name_gives_way_to_the_pages_heading() -> None:
    from convsearch.format import heading
    from convsearch.types import Citation

    def head(title: str, section: str) -> str:
        return heading(Citation(1, "p#1", title, "", None, "", "", False, 0.0,
                                metadata={"source": "/docs/p.html", "section": section, "doc_id": "p"}))

    # Sphinx ("Page — Project documentation"), a site name before the page, a bar
    assert head("12. Virtual Environments — Python 3.11.2 documentation",
                "12. Virtual Environments › 12.2. Creating Virtual Environments") == (
        "12. Virtual Environments › 12.2. Creating Virtual Environments")
    assert head("PostgreSQL: 9.4. Strings", "9.4. Strings › Format") == "9.4. Strings › Format"
    assert head("安装指南 | 产品文档", "安装指南 › 下载") == "安装指南 › 下载"
    # the same title, or one the heading only starts (no separator), or another heading: the title is kept
    assert head("Guide", "Guide › Install") == "Guide › Install"
    assert head("Guidelines for Ops", "Guide › Install") == "Guidelines for Ops › Guide › Install"
    assert head("mod_rewrite - Apache HTTP Server", "Apache Module mod_rewrite › Summary") == (
        "mod_rewrite - Apache HTTP Server › Apache Module mod_rewrite › Summary")
