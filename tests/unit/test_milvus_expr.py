"""The Milvus adapter's pure parts: string literals, filter expressions, dates, merging variants (no Milvus)."""

from __future__ import annotations

from datetime import date

import pytest

from convsearch.backends.base import Filters
from convsearch.backends.milvus import filter_expr, iso_day, merge_best, quote
from convsearch.errors import InputError
from convsearch.types import Hit


def _unquote(lit: str) -> str:
    """Read a Milvus string literal back the way its parser does (only \\\\ and \\" escapes)."""
    assert lit[0] == lit[-1] == '"'
    out, i, body = [], 0, lit[1:-1]
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            out.append(body[i + 1])
            i += 2
            continue
        assert ch != '"', f"an unescaped quote ends the literal early: {lit}"
        out.append(ch)
        i += 1
    return "".join(out)


@pytest.mark.parametrize("value", ['zh', '中文', 'zh" or lang != "', 'a\\', 'a\\" or 1==1 or "', '"); drop', "x' or '1'='1",
                                   "价格\" || id like \"%"])
def test_quote_round_trips_and_never_ends_early(value):
    assert _unquote(quote(value)) == value


@pytest.mark.parametrize("value", ["zh\n", "a\x00b", "\x1b[31m"])
def test_control_characters_are_refused(value):
    with pytest.raises(InputError, match="control character"):
        quote(value)


def test_filter_expr_fields_and_dates():
    assert filter_expr(None) == ""
    assert filter_expr({"lang": "zh"}) == 'lang == "zh"'
    e = filter_expr(Filters(source="kb 知识库", source_type="faq", kb_version="v2", date_from="2024", date_to="2024-06"))
    assert e == ('source == "kb 知识库" and source_type == "faq" and kb_version == "v2" and day != "" '
                 'and day >= "2024-01-01" and day <= "2024-06-01"')


def test_filter_expr_recency_takes_the_later_bound():
    assert filter_expr(None, since=date(2026, 11, 24)) == 'day != "" and day >= "2026-11-24"'
    assert filter_expr({"date_from": "2026-11-30"}, since=date(2026, 11, 24)).endswith('day >= "2026-11-30"')


def test_filter_expr_injection_stays_inside_the_literal():
    e = filter_expr({"lang": 'zh" or lang != "'})
    assert e == 'lang == "zh\\" or lang != \\""'


@pytest.mark.parametrize("bad", ['2024" or "1"=="1', "yesterday", "2024-13-40"])
def test_filter_expr_rejects_non_dates(bad):
    with pytest.raises(InputError, match="ISO date"):
        filter_expr({"date_from": bad})


def test_unknown_filter_field_is_one_clear_error():
    with pytest.raises(InputError, match="unknown filter field"):
        filter_expr({"lang or 1": "x"})


@pytest.mark.parametrize("raw,day", [("2024", "2024-01-01"), ("2024-06", "2024-06-01"), ("2024-06-30T10:00", "2024-06-30"),
                                     (None, ""), ("", ""), ("June 2024", ""), ("2024-02-30", "")])
def test_iso_day(raw, day):
    assert iso_day(raw) == day


def _h(i, s):
    return Hit(i, i, "", s)


def test_merge_best_keeps_each_ids_best_score_and_reranks():
    a = [_h("x", 0.02), _h("y", 0.01)]
    b = [_h("y", 0.03), _h("z", 0.015)]
    m = merge_best([a, b], top_k=10)
    assert [(h.id, h.score, h.rank) for h in m] == [("y", 0.03, 1), ("x", 0.02, 2), ("z", 0.015, 3)]
    assert [h.id for h in merge_best([a, b], top_k=2)] == ["y", "x"]
    assert merge_best([], top_k=3) == []
