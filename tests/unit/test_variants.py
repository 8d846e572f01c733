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
