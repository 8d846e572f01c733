"""The shipped offline rewriters through the one rewriter contract (``convsearch.testing.rewriters``): the rules,
the pass-through, the learned rewriter, the scripted test double, and compositions of ``rewrite.enhance`` whose
parts are plain rewriters (issue 36 item 4: one contract, one Passthrough)."""

from __future__ import annotations

import pytest

from convsearch.resolve.rules import RuleRewriter
from convsearch.rewrite import enhance, get_rewriter
from convsearch.rewrite.base import Passthrough, Rewriter, Scripted
from convsearch.rewrite.enhance import Chain, EnhanceRequest, Gated, Logged, Named, RulesWhenSure
from convsearch.testing.rewriters import EN_HISTORY, ZH_HISTORY, RewriterContract


class TestRules(RewriterContract):
    @pytest.fixture
    def make_rewriter(self):
        return lambda: get_rewriter("rules")


class TestPassthrough(RewriterContract):
    resolves = False

    @pytest.fixture
    def make_rewriter(self):
        return lambda: get_rewriter("passthrough")


class TestLearned(RewriterContract):
    @pytest.fixture
    def make_rewriter(self):
        return lambda: get_rewriter("learned")


class TestScripted(RewriterContract):
    @pytest.fixture
    def make_rewriter(self):
        return lambda: Scripted({"价格呢？": "AnySearch 的价格",
                                 "When did it first launch a rocket?": "When did SpaceX first launch a rocket?",
                                 "how much does it cost?": "how much does AnySearch cost?"})


class TestComposedOfPlainRewriters(RewriterContract):
    """Gate → the rules where they are sure → (the rules, then the copy): every part a plain rewriter."""

    @pytest.fixture
    def make_rewriter(self):
        return lambda: Named(Gated(RulesWhenSure(Chain(RuleRewriter(), Passthrough()), RuleRewriter())),
                             name="composed")


def test_one_passthrough_and_every_composition_is_a_rewriter():
    assert enhance.Passthrough is Passthrough and enhance.Enhancer is Rewriter
    parts = [Chain(Passthrough()), Gated(Passthrough()), RulesWhenSure(Passthrough()), Logged(Passthrough()),
             enhance.SkipFilterOnly(Passthrough()), enhance.Rules(), Named(Passthrough(), name="x")]
    for p in parts:
        assert isinstance(p, Rewriter), type(p).__name__
        r = p.rewrite(ZH_HISTORY, "价格呢？")
        assert r.original == "价格呢？"


def test_a_plain_rewriter_composes_as_the_wrapped_one_did():
    """``Chain(RuleRewriter())`` answers as ``Chain(Rules())`` did: the same query, method, reason and steps."""
    for history, q in ((ZH_HISTORY, "价格呢？"), (EN_HISTORY, "When did it first launch a rocket?")):
        req = EnhanceRequest(q, history)
        plain, wrapped = Chain(RuleRewriter()).enhance(req), Chain(enhance.Rules()).enhance(req)
        assert plain == wrapped and plain.method == "rules" and plain.query != q
    r = Chain(Scripted({}), RuleRewriter()).rewrite(ZH_HISTORY, "价格呢？")
    assert (r.rewritten, r.method, r.fell_back) == ("AnySearch 的价格", "rules", True)
    assert r.reason.startswith("no scripted answer; rules:")


def test_the_contract_fails_a_rewriter_that_breaks_it():
    from convsearch.types import RewriteResult

    class Liar(Passthrough):
        def rewrite(self, history, query, **kw):
            return RewriteResult(query.strip() or "x", "", "liar", "", False)

    suite = TestRules()
    with pytest.raises(AssertionError):
        suite.test_returns_a_result_keeping_the_original(Liar(), "zh")  # empties a query
    with pytest.raises(AssertionError):
        suite.test_never_raises_on_odd_input(Liar(), ())  # original is not the query as given ("  ")
    with pytest.raises(AssertionError):
        suite.test_follow_ups(Passthrough())  # resolves nothing
