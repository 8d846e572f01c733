"""The shared wrapper: options a backend lacks are applied after its search, and the notes say which."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from convsearch import InputError
from convsearch.backends.base import Capabilities, Filters, InMemoryBackend, Recency
from convsearch.backends.compose import asearch_applied, search_applied
from convsearch.types import Document

TODAY = date(2026, 12, 1)
DOCS = [
    Document("new-zh", "深圳 露营 天气 晴", title="深圳天气", date="2026-11-29", lang="zh", metadata={"source": "wx"}),
    Document("old-zh", "深圳 露营 装备 清单", title="露营装备", date="2025-01-10", lang="zh", metadata={"source": "blog"}),
    Document("new-en", "Shenzhen camping weather sunny", title="Weather", date="2026-11-30", lang="en"),
    Document("undated", "深圳 露营 地点", title="露营地", lang="zh"),
]


class NoNative(InMemoryBackend):
    """The double with every native capability switched off: the wrapper must do all of it."""

    name = "plain"
    capabilities = Capabilities()

    def search(self, query, *, top_k=10, filters=None, recency=None, dense_query=None):
        assert filters is None and recency is None and dense_query is None, "sent what it cannot do"
        return super().search(query, top_k=top_k)


@pytest.mark.parametrize("cls", [InMemoryBackend, NoNative])
def test_same_hits_natively_or_after(cls):
    b = cls(DOCS, today=TODAY)
    r = search_applied(b, "深圳 露营", top_k=5, filters={"lang": "zh"}, recency="week", today=TODAY)
    assert [h.id for h in r.hits] == ["new-zh"]
    how = "natively" if cls is InMemoryBackend else "after the search"
    assert r.notes == (f"filter lang: {how}", f"recency week: {how}")
    assert [h.rank for h in r.hits] == list(range(1, len(r.hits) + 1))


def test_after_filter_overfetches_so_the_list_is_not_short():
    docs = [Document(f"en{i}", "camping Shenzhen", lang="en") for i in range(8)] + \
           [Document(f"zh{i}", "camping Shenzhen 露营", lang="zh") for i in range(3)]
    r = search_applied(NoNative(docs), "camping Shenzhen 露营", top_k=3, filters=Filters(lang="en"))
    assert len(r.hits) == 3 and all(h.metadata["lang"] == "en" for h in r.hits)


def test_dense_query_is_not_applicable_without_a_dense_side_and_never_sent():
    r = search_applied(NoNative(DOCS), "露营", dense_query="a hypothetical answer")
    assert r.notes == ("dense query: not applicable (no dense side)",)


def test_date_range_and_undated_hits():
    r = search_applied(NoNative(DOCS), "深圳 露营", top_k=5, filters={"date_from": "2026-01", "date_to": "2026-12-31"})
    assert sorted(h.id for h in r.hits) == ["new-zh"]  # old and undated ones fail a date range


def test_no_limit_is_no_filter():
    r = search_applied(NoNative(DOCS), "深圳 露营", top_k=5, recency=Recency.NO_LIMIT)
    assert len(r.hits) == 3 and r.notes == ()


def test_async_twin_matches():
    b = NoNative(DOCS)
    a = asyncio.run(asearch_applied(b, "深圳 露营", top_k=5, filters={"source": "blog"}))
    s = search_applied(b, "深圳 露营", top_k=5, filters={"source": "blog"})
    assert a == s and [h.id for h in a.hits] == ["old-zh"]


@pytest.mark.parametrize("kw,msg", [({"filters": {"title": "x"}}, "'title'"), ({"recency": "fortnight"}, "fortnight")])
def test_bad_options_are_input_errors(kw, msg):
    with pytest.raises(InputError, match=msg):
        search_applied(InMemoryBackend(DOCS), "露营", **kw)


def test_a_missing_window_asks_the_nearest_wider_one_natively_and_filters_after():
    from datetime import timedelta

    class NoWeek(InMemoryBackend):
        name = "noweek"
        capabilities = Capabilities(recency=frozenset({Recency.DAY, Recency.MONTH, Recency.YEAR}))
        sent: list = []

        def search(self, query, *, top_k=10, filters=None, recency=None, dense_query=None):
            self.sent.append(recency)
            return super().search(query, top_k=top_k, filters=filters, recency=recency)

    real = date.today()
    b = NoWeek([Document("new-zh", "深圳 露营 天气 晴", date=(real - timedelta(days=2)).isoformat()),
                Document("mid-zh", "深圳 露营 天气 阴", date=(real - timedelta(days=20)).isoformat())])
    r = search_applied(b, "深圳 露营", top_k=5, recency="week")
    assert b.sent == [Recency.MONTH]
    assert {h.id for h in r.hits} == {"new-zh"}  # the month's 20-day-old hit is outside the week
    assert r.notes == ("recency week: after the search", "recency week: month natively first (the nearest wider window)")


def test_a_callers_own_today_applies_recency_after_the_search():
    """A backend counts its window from the real date; a replayed 'today' must not be sent to it natively."""
    old_day = date(2025, 1, 12)
    r = search_applied(InMemoryBackend(DOCS), "深圳 露营", top_k=5, recency="week", today=old_day)
    assert sorted(h.id for h in r.hits) == ["new-zh", "old-zh"]  # natively, from the real date, old-zh is gone
    assert r.notes == ("recency week: after the search",)
