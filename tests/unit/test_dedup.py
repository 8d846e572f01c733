"""Dedup: canonical URL / id, content hash, SimHash near-duplicates; keep best/latest/earliest; stats."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from convsearch.config import Settings

from convsearch.dedup import DedupStats, canonical_url, dedup, hamming, simhash
from convsearch.types import Hit


def H(i: str, text: str, *, title: str = "T", url: str = "", date: str | None = None, score: float = 1.0) -> Hit:
    return Hit(i, title, text, score, url, date)


EN_1 = ("AnySearch supports hybrid retrieval that combines BM25 keyword search with dense vector embeddings "
        "for multilingual queries in Chinese and English.")
EN_1_PLUS = EN_1[:-1] + " too."
EN_2 = ("The employee onboarding process requires a signed contract, a laptop request and approval from the "
        "hiring manager within five working days.")
ZH_1 = "AnySearch 支持混合检索，将 BM25 关键词检索与稠密向量检索结合起来，适用于中文和英文的多语言查询场景，部署简单。"
ZH_1_PLUS = ZH_1.replace("部署简单", "部署非常简单")
ZH_2 = "新员工入职流程包括签订劳动合同、申请笔记本电脑以及部门经理审批，一般需要五个工作日完成全部手续。"


@pytest.mark.parametrize("url", [
    "https://example.com/docs/a",
    "https://example.com/docs/a/",
    "http://example.com/docs/a",
    "https://EXAMPLE.com/docs/a",
    "https://www.example.com/docs/a",
    "https://example.com/docs/a#section-2",
    "https://example.com/docs/a?utm_source=newsletter&utm_medium=email&utm_campaign=x",
    "https://example.com/docs/a?fbclid=abc&gclid=def",
    "HTTP://WWW.Example.COM/docs/a/?utm_term=q#top",
])
def test_canonical_url_variants_are_equal(url):
    assert canonical_url(url) == canonical_url("https://example.com/docs/a")


def test_canonical_url_keeps_meaningful_differences():
    base = canonical_url("https://example.com/docs/a")
    assert canonical_url("https://example.com/docs/b") != base
    assert canonical_url("https://example.com/docs/a?page=2") != base
    assert canonical_url("https://other.example/docs/a") != base
    assert canonical_url("https://example.com/a?y=2&x=1") == canonical_url("https://example.com/a?x=1&y=2")
    assert canonical_url("") == ""


def test_url_variants_collapse_to_the_first_ranked_copy():
    hits = [H("a", EN_1, url="https://www.Example.com/p/?utm_source=x#f", title="first"),
            H("b", EN_2, url="http://example.com/p", title="second"),
            H("c", ZH_2, url="https://example.com/p/", title="third")]
    out, stats = dedup(hits)
    assert [h.id for h in out] == ["a"]
    assert out[0].title == "first"
    assert stats == DedupStats(before=3, after=1, by_url=2, by_hash=0, by_near=0)


def test_same_id_collapses():
    out, stats = dedup([H("a", EN_1, url="https://a.example/1"), H("a", EN_2, url="https://b.example/2")])
    assert len(out) == 1 and stats.by_url == 1


@pytest.mark.parametrize("text", [EN_1, ZH_1])
def test_identical_title_and_text_with_different_urls_collapse(text):
    hits = [H("a", text, url="https://mirror-one.example/x"), H("b", "  " + text.upper() + " ", url="https://mirror-two.example/y")]
    out, stats = dedup(hits, near=False)
    assert [h.id for h in out] == ["a"]
    assert stats.by_hash == 1 and stats.by_url == 0


@pytest.mark.parametrize("a,b", [(EN_1, EN_1_PLUS), (ZH_1, ZH_1_PLUS)])
def test_near_duplicate_one_word_added_collapses_at_default_threshold(a, b):
    assert hamming(simhash(f"T {a}"), simhash(f"T {b}")) <= Settings().near_dup_bits
    out, stats = dedup([H("a", a, url="https://x.example/1"), H("b", b, url="https://y.example/2")])
    assert [h.id for h in out] == ["a"]
    assert stats.by_near == 1


@pytest.mark.parametrize("a,b", [(EN_1, EN_2), (ZH_1, ZH_2), (EN_1, ZH_2)])
def test_different_documents_stay_separate(a, b):
    out, stats = dedup([H("a", a), H("b", b)])
    assert [h.id for h in out] == ["a", "b"]
    assert stats.after == 2 and stats.by_near == 0


def test_near_dup_threshold_configurable_and_can_be_disabled():
    hits = [H("a", EN_1), H("b", EN_1_PLUS)]
    assert len(dedup(hits, max_bits=0)[0]) == 2
    assert len(dedup(hits, near=False)[0]) == 2
    assert len(dedup(hits, max_bits=64)[0]) == 1


def test_simhash_is_deterministic_and_64_bit():
    a = simhash(ZH_1)
    assert a == simhash(ZH_1)
    assert 0 <= a < 2 ** 64
    assert hamming(a, a) == 0


DATED = [
    H("best", EN_1, title="Best-ranked title", url="https://x.example/doc", date="2023-05-01", score=3.0),
    H("newer", EN_1 + " Updated.", title="Newer title", url="https://x.example/doc/", date="2024-09-01", score=2.0),
    H("older", EN_1 + " Archived.", title="Older title", url="http://x.example/doc", date="2021-01-15", score=1.0),
]


def test_keep_best_keeps_the_best_ranked_copy():
    out, _ = dedup(DATED, keep="best")
    assert len(out) == 1
    assert (out[0].id, out[0].date, out[0].text) == ("best", "2023-05-01", EN_1)


def test_keep_latest_takes_date_of_newest_but_metadata_of_best():
    out, _ = dedup(DATED, keep="latest")
    (h,) = out
    assert h.date == "2024-09-01" and h.text.endswith("Updated.")
    assert h.id == "best" and h.title == "Best-ranked title" and h.score == 3.0


def test_keep_earliest_takes_date_of_oldest_but_metadata_of_best():
    out, _ = dedup(DATED, keep="earliest")
    (h,) = out
    assert h.date == "2021-01-15" and h.text.endswith("Archived.")
    assert h.id == "best" and h.title == "Best-ranked title"


def test_keep_latest_without_dates_falls_back_to_best():
    hits = [H("a", EN_1, url="https://x.example/d"), H("b", EN_2, url="https://x.example/d/")]
    out, _ = dedup(hits, keep="latest")
    assert out[0].id == "a" and out[0].text == EN_1


def test_stats_count_each_pass_and_survivors_are_reranked():
    hits = [
        H("a", EN_1, url="https://x.example/a"),
        H("a-copy", EN_2, url="https://www.x.example/a/?utm_source=t"),   # by url
        H("b", ZH_2, url="https://y.example/b"),
        H("b-mirror", ZH_2, url="https://mirror.example/b"),               # by hash
        H("a-near", EN_1_PLUS, url="https://z.example/a"),                # near-dup of a
        H("c", ZH_1, url="https://w.example/c"),
    ]
    out, stats = dedup(hits)
    assert [h.id for h in out] == ["a", "b", "c"]
    assert [h.rank for h in out] == [1, 2, 3]
    assert stats == DedupStats(before=6, after=3, by_url=1, by_hash=1, by_near=1)
    assert stats.before - stats.after == stats.by_url + stats.by_hash + stats.by_near


def test_empty_and_single():
    assert dedup([]) == ([], DedupStats(0, 0, 0, 0, 0))
    out, stats = dedup([H("only", ZH_1)])
    assert [h.id for h in out] == ["only"] and stats.after == 1


@pytest.mark.parametrize("near", [True, False])
def test_renumber_false_keeps_old_ranks_and_the_same_survivors(near):
    hits = [Hit(h.id, h.title, h.text, h.score, h.url, h.date, rank=r) for r, h in enumerate([
        H("a", EN_1, url="https://example.com/a"), H("b", ZH_1), H("c", EN_1, url="https://example.com/a?utm_source=x"),
        H("d", ZH_1_PLUS), H("e", EN_2), H("f", ZH_2, title="另一个")], start=1)]
    renumbered, stats = dedup(hits, near=near)
    kept, stats_kept = dedup(hits, near=near, renumber=False)
    assert stats_kept == stats
    assert [h.id for h in kept] == [h.id for h in renumbered]
    assert [h.rank for h in renumbered] == list(range(1, len(renumbered) + 1))
    assert [h.rank for h in kept] == [next(x.rank for x in hits if x.id == h.id) for h in kept]
    assert [h.rank for h in kept] != [h.rank for h in renumbered]  # a duplicate was dropped ahead of them


def test_a_full_fingerprint_cache_keeps_answering(monkeypatch):
    """Past the cache's bound it is cleared, also when a call mixes cached and new texts (it once raised
    KeyError for the cached ones after the clear)."""
    import convsearch.dedup as d

    monkeypatch.setattr(d, "_SIMHASH_CACHE", {f"filler {i}": i for i in range(16385)})
    monkeypatch.setattr(d, "_SAMPLED", {})
    d._SIMHASH_CACHE[EN_1] = simhash_of_en_1 = 123  # a cached text asked for again with a new one
    got = d.simhashes([EN_1, EN_2])
    assert got[0] != simhash_of_en_1 and got == [simhash(EN_1), simhash(EN_2)]
    assert len(d._SIMHASH_CACHE) == 2
    out, stats = dedup([H("a", EN_1), H("b", EN_1_PLUS), H("c", EN_2)])
    assert [h.id for h in out] == ["a", "c"] and stats.by_near == 1


def test_simhash_of_a_long_text_matches_its_short_lane_siblings():
    """Texts past 255 and past 32767 sampled shingles take wider counters; the fingerprint is the same
    whichever batch a text is computed in."""
    import convsearch.dedup as d

    long_en = " ".join([EN_1, EN_2] * 40)   # ~10 kB: over 255 sampled shingles
    huge = " ".join([EN_1, ZH_2, EN_2] * 1200)  # ~400 kB: over 32767
    alone = [simhash(t) for t in (long_en, huge, EN_1)]
    d._SIMHASH_CACHE.clear()
    d._SAMPLED.clear()
    assert d.simhashes([EN_1, long_en, huge]) == [alone[2], alone[0], alone[1]]
    assert hamming(simhash(long_en), simhash(long_en + " and one more sentence at the end.")) <= 12


_KEY_PIECES = ["a", "A", "Σ", "σ", " ", "  ", "\t", "\u3000", "，", "？", "（", "）", "中文", "價格", "İ", "K", "①",
               "ｱ", "…", "ﬁ", "²", "\u2f00", "\uf900", "é", "e\u0301"]


@settings(max_examples=500, derandomize=True, database=None, deadline=None)
@given(st.lists(st.sampled_from(_KEY_PIECES), max_size=30).map("".join) | st.text(max_size=40))
def test_the_content_key_is_the_normalised_lower_cased_text(text):
    """Whichever way _content_key takes (ASCII, NFKC swapping only full-width marks, or the full normalize),
    its key is normalize(text).lower()."""
    from convsearch.dedup import _content_key
    from convsearch.text import normalize

    _content_key.cache_clear()
    assert _content_key(text) == normalize(text).lower()
