"""Site tiers, allow / deny lists, sensitive-query refusal and the dynamic result count (zh and en)."""

from __future__ import annotations

import pytest

from convsearch.backends.web.policy import REFUSED, Policed, SitePolicy, result_count, sensitive
from convsearch.errors import ConfigError
from convsearch.infra.turn import turn
from convsearch.types import Hit


def hit(i: int, domain: str, score: float) -> Hit:
    return Hit(f"//{domain}/{i}", f"t{i}", "x", score, f"https://{domain}/{i}", None, "brave", i,
               {"domain": domain, "provider": "brave", "rank": i})


class Fixed:
    name = "brave"
    from convsearch.backends.base import Capabilities

    capabilities = Capabilities(remote=True, web=True, paid=True)

    def __init__(self, hits):
        self.hits, self.asked = hits, []

    def search(self, query, *, top_k=10, filters=None, recency=None, dense_query=None):
        self.asked.append(top_k)
        return self.hits[:top_k]

    async def asearch(self, query, **kw):
        return self.search(query, **kw)

    def close(self):
        pass


@pytest.fixture
def policy_file(tmp_path):
    p = tmp_path / "sites.toml"
    p.write_text('deny = ["spam.example"]\n[tiers]\n"gov.cn" = 1\n"blog.example.cn" = 3\n'
                 '"docs.anysearch.example" = 1\n', encoding="utf-8")
    return p


def test_deny_drops_tiers_tag_and_nudge_the_order(policy_file):
    pol = SitePolicy.load(policy_file)
    hits = [hit(1, "blog.example.cn", 1.0), hit(2, "www.spam.example", 0.99), hit(3, "stats.gov.cn", 0.95),
            hit(4, "news.example.com", 0.5)]
    out, dropped = pol.apply(hits)
    assert dropped == 1
    assert [h.metadata["domain"] for h in out] == ["stats.gov.cn", "blog.example.cn", "news.example.com"]
    assert [h.metadata.get("tier") for h in out] == [1, 3, None] and [h.rank for h in out] == [1, 2, 3]


def test_a_small_prior_never_lifts_a_much_weaker_result(policy_file):
    out, _ = SitePolicy.load(policy_file).apply([hit(1, "news.example.com", 1.0), hit(2, "stats.gov.cn", 0.5)])
    assert out[0].metadata["domain"] == "news.example.com"


def test_allow_list_keeps_only_its_domains(tmp_path):
    p = tmp_path / "allow.toml"
    p.write_text('allow = ["gov.cn", "docs.anysearch.example"]\n', encoding="utf-8")
    out, dropped = SitePolicy.load(p).apply([hit(1, "www.gov.cn", 1), hit(2, "evil-gov.cn", 1), hit(3, "x.com", 1)])
    assert [h.metadata["domain"] for h in out] == ["www.gov.cn"] and dropped == 2


@pytest.mark.parametrize("text,msg", [("tiers = 3", "maps domains"), ("[tiers]\n'a.cn' = 7", "maps domains"),
                                      ("deny = 'x'", "deny must be a list"), ("nope = [", "not valid TOML")])
def test_bad_policy_files_are_one_line_config_errors(tmp_path, text, msg):
    p = tmp_path / "bad.toml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=msg) as e:
        SitePolicy.load(p)
    assert "CONVSEARCH_SITE_POLICY" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="no such file"):
        SitePolicy.load(tmp_path / "missing.toml")


@pytest.mark.parametrize("q", ["怎么制作炸弹", "在哪里购买枪支", "how to make a bomb", "best bomb making guide",
                               "Dox this person"])
def test_sensitive_queries(q):
    assert sensitive(q) is not None


@pytest.mark.parametrize("q", ["深圳今天天气", "炸弹鱼是什么鱼", "photobomb ideas", "bath bomb recipe",
                               "SpaceX founder",
                               "paradox of choice"])
def test_ordinary_queries_are_not_sensitive(q):
    assert sensitive(q) is None


def test_a_sensitive_query_reaches_no_provider():
    inner = Fixed([hit(1, "a.example", 1)])
    p = Policed(inner)
    with turn() as notes:
        assert p.search("how to make a bomb", top_k=10) == []
    assert inner.asked == [] and notes[0].startswith(REFUSED)


@pytest.mark.parametrize("q,n", [("AnySearch 的价格", 5), ("what does AnySearch cost", 5),
                                 ("AnySearch 和 NovaDB 哪个便宜", 8), ("NovaDB 与 AnySearch 的区别", 8),
                                 ("Tavily vs Brave", 8), ("difference between BM25 and dense retrieval", 8),
                                 ("Tavily、Brave、SerpApi 对比", 10), ("compare Tavily, Brave and SerpApi", 10)])
def test_result_count(q, n):
    assert result_count(q) == n


def test_dynamic_count_asks_fewer_results_for_simple_questions():
    inner = Fixed([hit(i, "a.example", 1.0 / i) for i in range(1, 11)])
    p = Policed(inner)
    assert len(p.search("AnySearch 的价格", top_k=10)) == 5
    assert len(p.search("AnySearch 和 NovaDB 哪个便宜", top_k=10)) == 8
    assert len(Policed(inner, dynamic_count=False).search("AnySearch 的价格", top_k=10)) == 10
    assert inner.asked == [5, 8, 10]
