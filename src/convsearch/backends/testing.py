"""The contracts every SearchBackend passes, as pytest base classes (read-only and writable).

Subclass one and provide a ``backend`` fixture. For the read-only suite it returns a backend holding
:data:`CONTRACT_DOCS` (twelve zh/en documents with sources, types, KB versions and dates counted back from
:data:`CONTRACT_TODAY`) whose recency windows count back from ``today`` (that same date)::

    class TestMyBackend(SearchBackendContract):
        @pytest.fixture
        def backend(self, tmp_path):
            b = MyBackend(tmp_path, today=CONTRACT_TODAY)
            b.add(CONTRACT_DOCS)
            return b

A backend that cannot hold our documents (a web API behind a replay server) overrides the class attributes
that describe its data instead: ``zh_query`` / ``en_query`` and their ``*_expected`` top ids (None: any hit),
``broad_queries``, ``filter_cases``, ``today`` and ``knows_corpus = False`` (then the filter and recency tests
check that every hit passes and that something was found, not the exact set).

Every filter field and every recency window must be honoured, natively (``capabilities``) or after the search
by ``backends.compose.search_applied``, and its notes must say which. A backend claiming a filter natively that
it does not apply fails here: the wrapper does not re-check what a backend says it does.

The writable suite (``WritableBackendContract``) takes an empty writable backend and checks add, upsert by id,
delete and, when ``reopen`` returns a second handle on the same storage, that the writes persist.

Needs pytest (a dev dependency); nothing else in convsearch imports this module.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import date, timedelta
from typing import Any, ClassVar

import pytest

from ..errors import InputError
from ..types import Document, Hit
from .base import FILTER_FIELDS, Capabilities, Filters, Recency, SearchBackend, WritableBackend, hit_date
from .compose import search_applied

CONTRACT_TODAY = date(2026, 11, 30)


def _ago(days: int) -> str:
    return (CONTRACT_TODAY - timedelta(days=days)).isoformat()


def _doc(i: str, text: str, title: str, lang: str, date_: str | None, source: str, source_type: str,
         kb: str | None = None, url: str = "") -> Document:
    md: dict[str, Any] = {"source": source, "source_type": source_type}
    if kb is not None:
        md["kb_version"] = kb
    return Document(i, text, title=title, url=url or f"https://{source}/{i}", date=date_, lang=lang, metadata=md)


CONTRACT_DOCS: tuple[Document, ...] = (
    _doc("zh-any-hybrid", "AnySearch 支持混合检索：BM25 关键词检索加向量检索，默认开启。", "AnySearch 混合检索",
         "zh", _ago(0), "docs.anysearch", "doc", "v2"),
    _doc("zh-any-price", "AnySearch 专业版每月 99 元，企业版按需报价。", "AnySearch 价格", "zh", _ago(3),
         "docs.anysearch", "faq", "v1"),
    _doc("zh-any-faq", "AnySearch 常见问题：混合检索怎么关闭？在设置里关闭向量检索。", "AnySearch 常见问题", "zh",
         _ago(20), "help.anysearch", "faq", "v2"),
    _doc("zh-camp", "番禺最近三天露营天气：周五有雷阵雨，周六转晴，适合露营。", "番禺露营天气", "zh", _ago(60),
         "weather.example", "web"),
    _doc("zh-any-old", "AnySearch 旧版只支持关键词检索，不支持向量。", "AnySearch 旧版", "zh", "2024-05-01",
         "docs.anysearch", "doc", "v1"),
    _doc("zh-any-forum", "AnySearch 社区问答：检索速度很快，中文分词准确。", "AnySearch 社区", "zh", None,
         "forum.example", "web"),
    _doc("en-any-hybrid", "AnySearch supports hybrid search: BM25 keywords plus dense vectors, on by default.",
         "AnySearch hybrid search", "en", _ago(1), "docs.anysearch", "doc", "v2"),
    _doc("en-any-price", "AnySearch Pro costs 99 dollars a month; Enterprise is quoted on request.",
         "AnySearch pricing", "en", _ago(5), "docs.anysearch", "faq", "v1"),
    _doc("en-launch", "Falcon 1 was the first privately developed liquid-fuel rocket to reach orbit; "
         "the launch was in September 2008.", "Falcon 1 launch", "en", "2008-09-28", "news.example", "web"),
    _doc("en-any-old", "AnySearch 1.0 only had keyword search, no vectors.", "AnySearch 1.0", "en", "2025-06-01",
         "docs.anysearch", "doc", "v1"),
    _doc("en-any-forum", "AnySearch community answers: search is fast and the Chinese tokenizer is accurate.",
         "AnySearch community", "en", None, "forum.example", "web"),
    _doc("en-cat", "Cats sleep between twelve and sixteen hours a day, mostly in short naps.", "Why cats sleep",
         "en", _ago(302), "pets.example", "web"),
)

# One value per filter field, each keeping some and dropping some of the broad queries' hits.
DEFAULT_FILTER_CASES: tuple[tuple[str, str], ...] = (
    ("lang", "zh"), ("lang", "en"), ("source", "docs.anysearch"), ("source_type", "faq"), ("kb_version", "v2"),
    ("date_from", _ago(25)), ("date_to", "2025-12-31"),
)

_NO_WORDS = ("", "   ", "？？！", "...", "\n\t")


def ids(hits: Any) -> list[str]:
    return [h.id for h in hits]


def _check_hits(hits: Any, top_k: int, *, ordered: bool = True) -> None:
    """The shape every result list has: a list of our own Hits, ranks 1..n, unique ids, at most top_k."""
    assert isinstance(hits, list), type(hits)
    assert len(hits) <= top_k
    for h in hits:
        assert type(h) is Hit, type(h)
        assert isinstance(h.id, str) and h.id and isinstance(h.title, str) and isinstance(h.text, str)
        assert isinstance(h.score, float) and isinstance(h.url, str) and isinstance(h.source, str)
        assert h.date is None or isinstance(h.date, str)
        assert isinstance(h.rank, int) and isinstance(h.metadata, dict)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len({h.id for h in hits}) == len(hits)
    if ordered:
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:])), [h.score for h in hits]


class SearchBackendContract:
    """Read-only behaviour every backend shares (see the module docstring for what to override)."""

    zh_query: ClassVar[str] = "番禺 露营 天气"
    zh_expected: ClassVar[str | None] = "zh-camp"
    en_query: ClassVar[str] = "Falcon rocket launch"
    en_expected: ClassVar[str | None] = "en-launch"
    broad_queries: ClassVar[tuple[str, ...]] = ("AnySearch 检索", "AnySearch search")
    filter_cases: ClassVar[tuple[tuple[str, str], ...]] = DEFAULT_FILTER_CASES
    today: ClassVar[date] = CONTRACT_TODAY
    knows_corpus: ClassVar[bool] = True  # the backend holds exactly CONTRACT_DOCS
    scores_ordered: ClassVar[bool] = True
    big_k: ClassVar[int] = 50  # larger than the corpus: "everything that matches"

    @pytest.fixture
    def backend(self) -> Any:  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    # --- shape --------------------------------------------------------------------------------------
    def test_meets_the_protocol_and_declares_its_capabilities(self, backend: SearchBackend) -> None:
        assert isinstance(backend, SearchBackend)
        assert isinstance(backend.name, str) and backend.name
        caps = backend.capabilities
        assert isinstance(caps, Capabilities)
        assert all(isinstance(getattr(caps, k), bool) for k in ("writable", "dense", "remote", "paid"))
        assert isinstance(caps.filters, frozenset) and caps.filters <= set(FILTER_FIELDS), caps.filters
        assert isinstance(caps.recency, frozenset) and all(isinstance(r, Recency) for r in caps.recency)
        if caps.writable:
            assert isinstance(backend, WritableBackend)

    @pytest.mark.parametrize("lang", ["zh", "en"])
    def test_ranked_hits_in_both_languages(self, backend: SearchBackend, lang: str) -> None:
        # (the contract's probe queries: one per shipped language)
        query, expected = (self.zh_query, self.zh_expected) if lang == "zh" else (self.en_query, self.en_expected)
        hits = backend.search(query, top_k=5)
        assert hits, f"no hit for {query!r}"
        _check_hits(hits, 5, ordered=self.scores_ordered)
        if expected is not None:
            assert hits[0].id == expected, ids(hits)

    @pytest.mark.parametrize("k", [1, 3])
    def test_top_k_is_respected(self, backend: SearchBackend, k: int) -> None:
        for q in self.broad_queries:
            hits = backend.search(q, top_k=k)
            _check_hits(hits, k, ordered=self.scores_ordered)
            assert len(hits) == k, (q, ids(hits))

    @pytest.mark.parametrize("query", _NO_WORDS)
    def test_a_query_without_words_gives_no_hits(self, backend: SearchBackend, query: str) -> None:
        assert backend.search(query, top_k=5) == []

    def test_a_stop_word_only_query_is_a_valid_search(self, backend: SearchBackend) -> None:
        # stop words are kept when nothing else is left, so this may find something; it must not fail
        for q in ("的 了", "the of"):
            _check_hits(backend.search(q, top_k=3), 3, ordered=self.scores_ordered)

    def test_hit_fields_round_trip(self, backend: SearchBackend) -> None:
        if not self.knows_corpus:
            pytest.skip("the backend does not hold CONTRACT_DOCS")
        by_id = {d.id: d for d in CONTRACT_DOCS}
        for h in backend.search(self.broad_queries[0], top_k=self.big_k):
            d = by_id[h.id]
            assert (h.title, h.text, h.url, h.date) == (d.title, d.text, d.url, d.date)
            assert h.metadata.get("lang") == d.lang
            assert {k: h.metadata.get(k) for k in d.metadata} == d.metadata

    # --- filters and recency --------------------------------------------------------------------
    @pytest.mark.parametrize("case", range(len(DEFAULT_FILTER_CASES)))
    def test_every_filter_field_is_honoured(self, backend: SearchBackend, case: Any) -> None:
        if case >= len(self.filter_cases):
            pytest.skip("no such filter case for this backend")
        field, value = self.filter_cases[case]
        f = Filters(**{field: value})
        caps = backend.capabilities
        found_any = False
        for q in self.broad_queries:
            r = search_applied(backend, q, top_k=self.big_k, filters=f, today=self.today)
            how = "natively" if field in caps.filters else "after the search"
            assert f"filter {field}: {how}" in r.notes, r.notes
            _check_hits(list(r.hits), self.big_k, ordered=self.scores_ordered)
            bad = [h.id for h in r.hits if not f.matches(h)]
            assert not bad, f"{field}={value!r} let through {bad}"
            found_any = found_any or bool(r.hits)
            if self.knows_corpus:
                every = backend.search(q, top_k=self.big_k)
                keep = {h.id for h in every if f.matches(h)}
                assert keep and keep != {h.id for h in every}, "the case must keep some hits and drop some"
                assert {h.id for h in r.hits} == keep
        assert found_any, f"{field}={value!r} found nothing"

    def test_several_filters_at_once(self, backend: SearchBackend) -> None:
        if not self.knows_corpus:
            pytest.skip("the backend does not hold CONTRACT_DOCS")
        f = Filters(lang="en", source="docs.anysearch", kb_version="v1", date_from="2025-01-01")
        r = search_applied(backend, "AnySearch search", top_k=self.big_k, filters=f, today=self.today)
        assert set(ids(r.hits)) == {"en-any-price", "en-any-old"}

    def test_old_dict_filters_still_work(self, backend: SearchBackend) -> None:
        q = self.broad_queries[0]
        typed = search_applied(backend, q, top_k=self.big_k, filters=Filters(lang="zh"), today=self.today)
        plain = search_applied(backend, q, top_k=self.big_k, filters={"lang": "zh"}, today=self.today)
        assert ids(plain.hits) == ids(typed.hits) and plain.notes == typed.notes
        old_empty: Any = {}  # the old dict form, outside the declared Filters | None on purpose
        assert backend.search(q, top_k=3, filters=old_empty) == backend.search(q, top_k=3) or not self.knows_corpus

    def test_an_unknown_filter_field_is_an_input_error(self, backend: SearchBackend) -> None:
        with pytest.raises(InputError, match="'title'"):
            unknown: Any = {"title": "x"}  # an old dict with a field Filters does not have
            backend.search(self.broad_queries[0], top_k=3, filters=unknown)

    @pytest.mark.parametrize("recency", list(Recency))
    def test_every_recency_window_is_honoured(self, backend: SearchBackend, recency: Recency) -> None:
        caps = backend.capabilities
        since = recency.since(self.today)
        for q in self.broad_queries:
            r = search_applied(backend, q, top_k=self.big_k, recency=recency, today=self.today)
            _check_hits(list(r.hits), self.big_k, ordered=self.scores_ordered)
            every = backend.search(q, top_k=self.big_k)
            if since is None:
                assert r.notes == () and ids(r.hits) == ids(every)
                continue
            how = "natively" if recency in caps.recency else "after the search"
            assert f"recency {recency.value}: {how}" in r.notes, r.notes
            late = [h.id for h in r.hits if (d := hit_date(h)) is None or d < since]
            assert not late, f"recency {recency.value} let through {late}"
            if self.knows_corpus:
                assert {h.id for h in r.hits} == {h.id for h in every if (d := hit_date(h)) and d >= since}

    def test_recency_and_a_filter_together(self, backend: SearchBackend) -> None:
        if not self.knows_corpus:
            pytest.skip("the backend does not hold CONTRACT_DOCS")
        r = search_applied(backend, "AnySearch 检索", top_k=self.big_k, filters={"lang": "zh"},
                           recency=Recency.WEEK, today=self.today)
        assert set(ids(r.hits)) == {"zh-any-hybrid", "zh-any-price"}

    # --- dense query ------------------------------------------------------------------------------
    def test_dense_query_feeds_the_dense_side_or_is_ignored(self, backend: SearchBackend) -> None:
        if not self.knows_corpus:
            pytest.skip("the backend does not hold CONTRACT_DOCS")
        cat = next(d for d in CONTRACT_DOCS if d.id == "en-cat")
        plain = ids(backend.search("Falcon", top_k=5))
        hyde = backend.search("Falcon", top_k=5, dense_query=cat.text)
        _check_hits(hyde, 5, ordered=self.scores_ordered)
        r = search_applied(backend, "Falcon", top_k=5, dense_query=cat.text)
        if backend.capabilities.dense:  # the keyword side still searches the query, the dense side the passage
            got = ids(hyde)
            assert "en-launch" in got[:2] and "en-cat" in got[:2], got
            assert got.index("en-cat") < (plain.index("en-cat") if "en-cat" in plain else 99), (got, plain)
            assert "dense query: natively" in r.notes
        else:
            assert ids(hyde) == plain == ["en-launch"]
            assert "dense query: not applicable (no dense side)" in r.notes

    # --- async twin and lifetime ------------------------------------------------------------------
    def test_asearch_matches_search(self, backend: SearchBackend) -> None:
        for q, kw in ((self.zh_query, {}), (self.en_query, {}), (self.broad_queries[0], {"filters": {"lang": "zh"}}),
                      (self.broad_queries[1], {"recency": Recency.YEAR})):
            if "recency" in kw and Recency.YEAR not in backend.capabilities.recency:
                continue
            assert ids(asyncio.run(backend.asearch(q, top_k=5, **kw))) == ids(backend.search(q, top_k=5, **kw))

    def test_close_is_idempotent(self, backend: SearchBackend) -> None:
        backend.close()
        backend.close()


class WritableBackendContract:
    """Writes every writable backend shares: add, upsert by id, delete, and (when ``reopen`` gives a second
    handle on the same storage) persistence. ``backend`` returns an EMPTY writable backend."""

    @pytest.fixture
    def backend(self) -> Any:  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    def reopen(self, backend: Any) -> Any:
        """A new handle on ``backend``'s storage, or None when it keeps nothing across handles."""
        return None

    def _loaded(self, backend: Any) -> Any:
        assert backend.add(CONTRACT_DOCS) == len(CONTRACT_DOCS)
        return backend

    def test_declares_writable(self, backend: WritableBackend) -> None:
        assert backend.capabilities.writable and isinstance(backend, WritableBackend)

    def test_empty_backend_finds_nothing(self, backend: WritableBackend) -> None:
        assert backend.search("AnySearch 检索", top_k=5) == []
        assert backend.search("Falcon launch", top_k=5) == []

    def test_added_documents_are_found_in_both_languages(self, backend: WritableBackend) -> None:
        self._loaded(backend)
        assert backend.search("番禺 露营", top_k=3)[0].id == "zh-camp"
        assert backend.search("Falcon rocket", top_k=3)[0].id == "en-launch"

    def test_upsert_replaces_by_id(self, backend: WritableBackend) -> None:
        self._loaded(backend)
        new = Document("zh-any-price", "AnySearch 调价：专业版改为每月 199 元。", title="AnySearch 新价格", lang="zh",
                       date=_ago(0), metadata={"source": "docs.anysearch", "source_type": "faq", "kb_version": "v3"})
        assert backend.add([new]) == 1
        hits = backend.search("调价", top_k=5)
        assert ids(hits)[:1] == ["zh-any-price"] and hits[0].title == "AnySearch 新价格"
        assert hits[0].metadata.get("kb_version") == "v3"
        old_words = backend.search("企业版 按需报价", top_k=10)  # the old text is gone (a dense side may still
        assert all(h.text == new.text for h in old_words if h.id == "zh-any-price")  # return the id: new text)
        if not backend.capabilities.dense:
            assert "zh-any-price" not in ids(old_words)
        assert ids(backend.search("AnySearch 检索", top_k=50)).count("zh-any-price") <= 1
        got = search_applied(backend, "调价", top_k=5, filters={"kb_version": "v1"})
        assert "zh-any-price" not in ids(got.hits)  # the old metadata is gone too

    def test_the_same_id_twice_in_one_batch_keeps_the_last(self, backend: WritableBackend) -> None:
        backend.add([Document("dup", "first version kayak", lang="en"),
                     Document("dup", "second version canoe", lang="en")])
        assert ids(backend.search("canoe", top_k=5)) == ["dup"]
        assert all(h.text == "second version canoe" for h in backend.search("kayak", top_k=5))
        if not backend.capabilities.dense:
            assert backend.search("kayak", top_k=5) == []

    def test_delete_counts_what_was_there(self, backend: WritableBackend) -> None:
        self._loaded(backend)
        assert backend.delete(["zh-camp", "no-such-id"]) == 1
        assert "zh-camp" not in ids(backend.search("番禺 露营", top_k=10))
        assert backend.delete(["zh-camp"]) == 0
        assert backend.delete([]) == 0
        assert backend.search("Falcon rocket", top_k=3)[0].id == "en-launch"  # the others stay

    def test_writes_persist_across_handles(self, backend: WritableBackend) -> None:
        self._loaded(backend)
        backend.add([Document("new-en", "A brand new English document about kayaks.", title="Kayaks", lang="en")])
        backend.delete(["zh-camp"])
        again = self.reopen(backend)
        if again is None:
            pytest.skip("this backend keeps nothing across handles")
        try:
            assert again.search("kayaks", top_k=3)[0].id == "new-en"
            assert "zh-camp" not in ids(again.search("番禺 露营", top_k=10))
            assert again.search("Falcon rocket", top_k=3)[0].id == "en-launch"
            h = again.search("AnySearch 价格", top_k=1, filters={"lang": "zh"})[0]
            want = next(d for d in CONTRACT_DOCS if d.id == h.id)
            assert (h.title, h.text, h.date) == (want.title, want.text, want.date)
        finally:
            again.close()

    def test_unicode_and_odd_fields_round_trip(self, backend: WritableBackend) -> None:
        odd = Document("odd\u2003id", "naïve “quotes” 😀 \\ \x1f ' % _ 检索测试", title="标题\x1f with separator",
                       url="", date=None, lang="zh", metadata={"k": [1, "二"], "source": "s"})
        plain = replace(odd, id="plain", title="plain 检索测试", metadata={})
        backend.add([odd, plain])
        got = {h.id: h for h in backend.search("检索测试", top_k=5)}
        assert set(got) == {"odd\u2003id", "plain"}
        h = got["odd\u2003id"]
        assert (h.title, h.text, h.url, h.date) == (odd.title, odd.text, "", None)
        assert h.metadata.get("k") == [1, "二"] and h.metadata.get("source") == "s"


__all__ = ["CONTRACT_DOCS", "CONTRACT_TODAY", "DEFAULT_FILTER_CASES", "SearchBackendContract",
           "WritableBackendContract", "ids"]
