"""The LLM rewriters through the one rewriter contract (``convsearch.testing.rewriters``), against the loopback
OpenAI-compatible server: ``llm``, the rules' ``auto`` (gate → LLM → guard → rules → original) and the learned
``auto`` (the LLM only where the learned answer is unsure). The server answers the contract's follow-ups the way
a model would and echoes everything else (a model that finds the rest standalone)."""

from __future__ import annotations

import pytest

from convsearch.config import Settings
from convsearch.rewrite import get_rewriter
from convsearch.testing.openai_server import FakeOpenAIServer, answer_by_query, echo_last_user
from convsearch.testing.rewriters import ZH_HISTORY, RewriterContract

pytestmark = pytest.mark.integration

ANSWERS = {"价格呢？": "AnySearch 的价格",
           "When did it first launch a rocket?": "When did SpaceX first launch a rocket?",
           "how much does it cost?": "how much does AnySearch cost?"}


@pytest.fixture
def srv(openai_server: FakeOpenAIServer):
    openai_server.reset()
    openai_server.responder = answer_by_query(ANSWERS)
    yield openai_server
    openai_server.reset()
    openai_server.responder = echo_last_user


def _settings(srv: FakeOpenAIServer, unsure_below: str) -> Settings:
    return Settings.from_env({"CONVSEARCH_LLM_BASE_URL": srv.base_url, "CONVSEARCH_LLM_MODEL": "fake-model",
                              "CONVSEARCH_LLM_API_KEY": "sk-test", "CONVSEARCH_LLM_TIMEOUT_S": "2.0",
                              "CONVSEARCH_LLM_UNSURE_BELOW": unsure_below})


class TestLLM(RewriterContract):
    @pytest.fixture
    def make_rewriter(self, srv):
        return lambda: get_rewriter("llm", _settings(srv, "-1"))

    def test_the_follow_ups_were_answered_by_the_server(self, rewriter, srv):
        r = rewriter.rewrite(ZH_HISTORY, "价格呢？")
        assert (r.rewritten, r.method) == ("AnySearch 的价格", "llm") and len(srv.requests) == 1


class TestRulesAuto(RewriterContract):
    @pytest.fixture
    def make_rewriter(self, srv):
        return lambda: get_rewriter("auto", _settings(srv, "-1"))

    def test_it_is_the_llm_chain(self, rewriter, srv):
        r = rewriter.rewrite(ZH_HISTORY, "价格呢？")
        assert rewriter.name == "auto" and r.method == "llm" and len(srv.requests) == 1


class TestLearnedAuto(RewriterContract):
    @pytest.fixture
    def make_rewriter(self, srv):
        return lambda: get_rewriter("auto", _settings(srv, "0.51"))

    def test_it_is_the_learned_auto(self, rewriter):
        assert rewriter.name == "auto" and "ask_when_unsure" in rewriter.enhancer.name
