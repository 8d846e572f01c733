"""``auto`` on the learned rewriter asks the LLM only where the learned confidence is below its threshold
(CONVSEARCH_LLM_UNSURE_BELOW; learned.auto.AskWhenUnsure), against the loopback OpenAI-compatible server.

The thresholds are set from each turn's own measured confidence (``assess``), just above or just below it, so the
tests hold whatever the shipped model's numbers are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convsearch.config import Settings
from convsearch.eval.data import load_records
from convsearch.learned.ask import ASK_NAMES, ask_models
from convsearch.learned.auto import UNSURE_BELOW, AskWhenUnsure
from convsearch.learned.oof import dialog_of_id, fold_of
from convsearch.learned.resolver import MODEL_PATH
from convsearch.learned.rewriter import LearnedRewriter
from convsearch.llm import LLMSettings
from convsearch.pipeline import plan_queries
from convsearch.resolve.rules import RuleRewriter
from convsearch.rewrite import get_rewriter
from convsearch.rewrite.enhance import EnhanceRequest, Passthrough
from convsearch.testing.openai_server import FakeOpenAIServer, Reply
from convsearch.types import Message

pytestmark = pytest.mark.integration

EN = (Message("user", "Who founded SpaceX?"), Message("assistant", "Elon Musk founded SpaceX in 2002."))
ZH = (Message("user", "AnySearch 支持哪些检索方式？"), Message("assistant", "支持 BM25、向量和混合检索。"))
LISTED = (Message("user", "Which note apps work offline?"),
          Message("assistant", "Three do: 1. Obsidian 2. Joplin 3. Logseq"))
FOLLOWUPS = [(EN, "When did it first launch a rocket?"), (EN, "how much is he worth?"), (ZH, "价格呢？"),
             (EN, "and Tesla?")]
LLM_ANSWER = "When did SpaceX launch its first rocket"  # words of the history and the question: the guard keeps it



@pytest.fixture
def srv(openai_server: FakeOpenAIServer):
    openai_server.reset()
    yield openai_server
    openai_server.reset()


def auto(srv: FakeOpenAIServer, below: float, **env: str):
    s = Settings.from_env({"CONVSEARCH_LLM_BASE_URL": srv.base_url, "CONVSEARCH_LLM_MODEL": "fake-model",
                           "CONVSEARCH_LLM_API_KEY": "sk-test", "CONVSEARCH_LLM_TIMEOUT_S": "1.0",
                           "CONVSEARCH_LLM_CACHE_SIZE": "0", "CONVSEARCH_LLM_UNSURE_BELOW": str(below), **env})
    return get_rewriter("auto", s)


def confidence(history, question: str) -> float:
    return AskWhenUnsure(Passthrough()).assess(EnhanceRequest(question, tuple(history))).confidence


def test_a_sure_turn_sends_nothing_and_an_unsure_one_asks_once(srv):
    q = "When did it first launch a rocket?"
    c = confidence(EN, q)
    assert 0.0 < c < 1.0
    rw = auto(srv, below=round(c - 0.01, 4))  # the turn is surer than the threshold
    try:
        r = rw.rewrite(EN, q)
    finally:
        rw.close()
    assert srv.requests == []
    assert r.method == "learned" and f"learned confidence {c:.2f} >= " in r.reason and "no LLM call" in r.reason
    srv.push(Reply.of(LLM_ANSWER))
    rw = auto(srv, below=round(c + 0.01, 4))  # now it is less sure than the threshold
    try:
        r = rw.rewrite(EN, q)
    finally:
        rw.close()
    assert len(srv.requests) == 1
    assert (r.rewritten, r.method, r.fell_back) == (LLM_ANSWER, "llm", False)
    assert r.reason.startswith(f"learned confidence {c:.2f} < ") and "asked the LLM" in r.reason


def test_threshold_zero_never_asks_and_above_every_confidence_asks_on_every_follow_up(srv):
    rw = auto(srv, below=0)
    try:
        outs = [rw.rewrite(h, q) for h, q in FOLLOWUPS]
    finally:
        rw.close()
    assert srv.requests == [] and {o.method for o in outs} == {"learned"}
    assert all(confidence(h, q) < 1.0 for h, q in FOLLOWUPS)
    rw = auto(srv, below=1.0)
    try:
        outs = [rw.rewrite(h, q) for h, q in FOLLOWUPS]
    finally:
        rw.close()
    assert len(srv.requests) == len(FOLLOWUPS)  # the default responder echoes the question: the LLM's answer
    assert [o.method for o in outs] == ["llm"] * len(FOLLOWUPS)


def test_where_the_rules_are_sure_no_threshold_asks(srv):
    rw = auto(srv, below=5.0)
    try:
        r = rw.rewrite(LISTED, "Does the second one sync?")
    finally:
        rw.close()
    assert srv.requests == []
    assert r.rewritten == "Does Joplin sync?" and r.reason.startswith("rules sure (ordinal): no LLM call")


def test_a_failed_llm_call_falls_back_to_the_offline_answer(srv):
    offline = get_rewriter("learned").rewrite(EN, "how much is he worth?")
    srv.push(Reply.error(500), Reply.error(500), Reply.error(500))
    rw = auto(srv, below=1.0, CONVSEARCH_LLM_MAX_RETRIES="0")
    try:
        r = rw.rewrite(EN, "how much is he worth?")
    finally:
        rw.close()
    assert len(srv.requests) == 1
    assert r.fell_back and r.rewritten == offline.rewritten != "how much is he worth?"
    assert "asked the LLM" in r.reason and r.method == "learned"


def test_on_by_default_negative_is_the_rules_auto_and_without_an_llm_the_rules(srv):
    env = {"CONVSEARCH_LLM_BASE_URL": srv.base_url, "CONVSEARCH_LLM_MODEL": "fake-model"}
    rw = get_rewriter("auto", Settings.from_env(env))
    try:  # the learned auto at the threshold chosen on the folds
        assert rw.name == "auto" and rw.enhancer.below == UNSURE_BELOW == LLMSettings().unsure_below
    finally:
        rw.close()
    rw = get_rewriter("auto", Settings.from_env({**env, "CONVSEARCH_LLM_UNSURE_BELOW": "-1"}))
    try:
        assert rw.name == "auto" and not hasattr(rw.enhancer, "assess")  # the rules' auto (setting below 0)
    finally:
        rw.close()
    assert isinstance(get_rewriter("auto", Settings.from_env({"CONVSEARCH_LLM_UNSURE_BELOW": "0.15"})), RuleRewriter)


def test_the_confidence_is_the_learned_doubt_over_the_offline_answer(tmp_path):
    # the shipped model file has the ask section: the confidence is the doubt's rank of the turn's ask row
    a = AskWhenUnsure(Passthrough()).assess(EnhanceRequest("how much is he worth?", EN))
    assert a.source == "doubt" and a.row is not None and a.row.shape == (len(ASK_NAMES),)
    doubt = ask_models(LearnedRewriter().resolver.models)
    assert doubt is not None and a.confidence == pytest.approx(doubt.full.confidence(a.row))
    # a model file without it: the resolver's own confidence, as before the section existed
    d = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    del d["ask"]
    (tmp_path / "learned.json").write_text(json.dumps(d), encoding="utf-8")
    b = AskWhenUnsure(Passthrough(), LearnedRewriter(tmp_path / "learned.json")).assess(
        EnhanceRequest("how much is he worth?", EN))
    assert b.source == "resolver" and b.offline.query == a.offline.query
    assert b.confidence == pytest.approx(
        LearnedRewriter().resolve(EN, "how much is he worth?").confidence)


def test_the_pipeline_hands_it_turns_the_rules_call_standalone(srv):
    rw = auto(srv, below=0)
    try:
        d, r, _, _ = plan_queries("What is the boiling point of water?", EN, rewriter=rw, settings=Settings())
    finally:
        rw.close()
    assert not d.needed  # the rules' gate: standalone; the learned side still answers (no LLM at threshold 0)
    assert r.method == "learned" and "no LLM call" in r.reason and srv.requests == []


CANARD = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "conv-rewrite" / "canard" / "dev.jsonl"


def test_a_training_record_is_doubted_by_the_fold_models_that_never_saw_its_dialog():
    if not CANARD.is_file():
        pytest.skip(f"shared data not found: {CANARD}")
    lr = LearnedRewriter()
    assert lr.out_of_fold(CANARD) == "canard"
    ask = AskWhenUnsure(Passthrough(), lr)
    doubt = ask_models(lr.resolver.models)
    seen = set()
    for r in load_records(CANARD, limit=60):
        if not r.history:
            continue
        a = ask.assess(EnhanceRequest(r.question, tuple(r.messages())))
        if not a.askable:
            continue
        k = lr.folds.fold(r.messages(), r.question)
        assert k == fold_of(f"canard/dev/{dialog_of_id(r.id)}")
        assert a.confidence == pytest.approx(doubt.folds[k].confidence(a.row))
        seen.add(k)
    assert len(seen) >= 2  # several folds' models answered


def test_nothing_to_ask_sends_nothing_whatever_the_threshold(srv):
    rw = auto(srv, below=5.0)
    try:
        thanks = rw.rewrite(EN, "Thanks!")
        first = rw.rewrite((), "When did SpaceX first launch a rocket?")
    finally:
        rw.close()
    assert srv.requests == []
    assert thanks.reason.startswith("nothing to ask (social): no LLM call")
    assert first.reason.startswith("nothing to ask (no_context): no LLM call")
    a = AskWhenUnsure(Passthrough()).assess(EnhanceRequest("Thanks!", EN))
    assert not a.askable and a.row is None  # no doubt computed, and no training row (learned.ask_train)
