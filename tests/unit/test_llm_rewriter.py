"""LLMRewriter, enhancers (Chain, Gated, SkipFilterOnly, Logged, HyDE), variants, summaries and the ``llm`` /
``auto`` rewriters, over the in-process ScriptedLLM double (no network)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from convsearch import InMemoryBackend, Settings, search_with_context
from convsearch.errors import ConfigError
from convsearch.infra.cache import MemoryCache, cache_key
from convsearch.llm import LLMRateLimited, LLMTimeout, ScriptedLLM
from convsearch.resolve.rules import RuleRewriter
from convsearch.rewrite import REWRITERS, get_rewriter
from convsearch.rewrite.enhance import LLM as LLMEnhancer
from convsearch.rewrite.enhance import (
    Chain,
    EnhanceRequest,
    EnhancerRewriter,
    Gated,
    HyDE,
    Logged,
    Passthrough,
    Rules,
    SkipFilterOnly,
    auto_rewriter,
    hyde_search,
)
from convsearch.rewrite.llm import (
    REWRITE_PROMPTS,
    GuardLimits,
    HybridVariants,
    LLMRewriter,
    LLMSummarizer,
    LLMVariants,
    merge_variants,
)
from convsearch.types import Document, Message

ZH = (Message("user", "AnySearch 支持哪些检索方式？"), Message("assistant", "支持 BM25、向量和混合检索。"))
EN = (Message("user", "Who founded SpaceX?"), Message("assistant", "Elon Musk founded SpaceX in 2002."))



# --- LLMRewriter ------------------------------------------------------------------------------------
def test_messages_are_system_then_real_turns_then_the_query():
    llm = ScriptedLLM(["AnySearch 的价格"])
    r = LLMRewriter(llm).rewrite(ZH, "价格呢？")
    assert (r.rewritten, r.method, r.fell_back) == ("AnySearch 的价格", "llm", False)
    assert r.reason.startswith("llm: rewrote (1 call")
    msgs = llm.calls[0][0]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[0]["content"].startswith("你的任务") and "30 个字" in msgs[0]["content"]
    assert [m["content"] for m in msgs[1:]] == [ZH[0].content, ZH[1].content, "价格呢？"]
    assert llm.calls[0][2] is not None and llm.calls[0][2] <= 3.0  # a budget is always passed


def test_english_prompt_topic_and_window():
    llm = ScriptedLLM(["When did SpaceX first launch a rocket?"])
    hist = tuple(Message("user" if i % 2 == 0 else "assistant", f"turn {i} about SpaceX") for i in range(10)) + EN
    rw = LLMRewriter(llm, window=4)
    r = rw.rewrite(hist, "When did it first launch a rocket?", topic="SpaceX | History")
    assert not r.fell_back
    msgs = llm.calls[0][0]
    assert msgs[0]["content"] == rw.plan(hist, "x", "SpaceX | History").system
    system = msgs[0]["content"]
    assert "At most 20 words" in system and "The conversation is about: SpaceX | History" in system
    assert len(msgs) == 1 + 4 + 1 and msgs[-2]["content"] == EN[1].content


def test_tool_messages_and_partial_messages_never_reach_the_llm():
    llm = ScriptedLLM(["AnySearch 的价格"])
    hist = (*ZH, Message("assistant", "{\"tool\": \"secret output\"}", kind="tool_result"),
            Message("assistant", "half a messa", partial=True))
    LLMRewriter(llm).rewrite(hist, "价格呢？")
    assert "secret output" not in str(llm.calls[0][0]) and "half a messa" not in str(llm.calls[0][0])


def test_gate_resolved_turns_cost_no_call():
    llm = ScriptedLLM([])
    r = LLMRewriter(llm).rewrite(EN, "What is the capital of France?")
    assert r.method == "gate" and r.rewritten == "What is the capital of France?" and llm.calls == []
    assert LLMRewriter(llm).rewrite((), "价格呢？").method == "gate"  # no history, no topic
    assert llm.calls == []


def test_uncertain_gate_verdicts_may_ask_the_llm():
    llm = ScriptedLLM(["What is the capital of France?"])
    rw = LLMRewriter(llm, uncertain_below=0.95)
    r = rw.rewrite(EN, "What is the capital of France?")
    assert r.method == "llm" and len(llm.calls) == 1


def test_cache_avoids_a_second_call_and_keys_on_what_is_sent():
    llm = ScriptedLLM(default="AnySearch 的价格")
    rw = LLMRewriter(llm)
    a = rw.rewrite(ZH, "价格呢？")
    b = rw.rewrite(ZH, "价格呢？")
    assert a.rewritten == b.rewritten and len(llm.calls) == 1 and b.reason.startswith("llm: cache hit")
    rw.rewrite(ZH, "价格呢？", topic="AnySearch")  # another topic: another prompt
    rw.rewrite(ZH[:1], "价格呢？")               # another window
    assert len(llm.calls) == 3
    other = LLMRewriter(ScriptedLLM(default="AnySearch 的价格", model="other"), cache=rw.cache)
    other.rewrite(ZH, "价格呢？")
    assert len(other.llm.calls) == 1  # another model: a miss in the same cache


def test_failures_are_not_cached():
    llm = ScriptedLLM([LLMTimeout("slow"), "AnySearch 的价格"])
    rw = LLMRewriter(llm)
    assert rw.rewrite(ZH, "价格呢？").fell_back
    assert not rw.rewrite(ZH, "价格呢？").fell_back and len(llm.calls) == 2


def test_overlong_output_is_reasked_once_within_the_budget():
    llm = ScriptedLLM(["AnySearch 支持哪些检索方式以及价格" * 3, "AnySearch 的价格"])
    r = LLMRewriter(llm).rewrite(ZH, "价格呢？")
    assert r.rewritten == "AnySearch 的价格" and "after a re-ask (2 calls" in r.reason
    second = llm.calls[1][0]
    assert second[-2]["role"] == "assistant" and second[-1]["role"] == "user" and "太长了" in second[-1]["content"]
    assert llm.calls[1][2] < llm.calls[0][2]  # the re-ask gets what is left of the same budget


def test_overlong_twice_falls_back():
    long = "AnySearch 支持哪些检索方式以及价格" * 3
    r = LLMRewriter(ScriptedLLM([long, long])).rewrite(ZH, "价格呢？")
    assert r.fell_back and r.rewritten == "价格呢？" and "too long" in r.reason and "after a re-ask" in r.reason


def test_no_reask_when_disabled():
    llm = ScriptedLLM(["AnySearch 支持哪些检索方式以及价格" * 3])
    r = LLMRewriter(llm, reask=False).rewrite(ZH, "价格呢？")
    assert r.fell_back and len(llm.calls) == 1


@pytest.mark.parametrize("reply, why", [
    ("AnySearch 的价格和折扣", "unfaithful: adds 折扣"),
    ("AnySearch pricing", "language changed"),
    ("  ", "empty content"),
    (LLMTimeout("timed out (budget 3.00 s)"), "timed out"),
    (LLMRateLimited("rate limited (HTTP 429)"), "rate limited"),
])
def test_llm_rewriter_falls_back_to_the_original_with_the_reason(reply, why):
    r = LLMRewriter(ScriptedLLM([reply])).rewrite(ZH, "价格呢？")
    assert r.fell_back and r.rewritten == "价格呢？" and r.method == "llm"
    assert r.reason.startswith("llm fell back: ") and why in r.reason


def test_blocked_words():
    rw = LLMRewriter(ScriptedLLM(["AnySearch 的价格"]), limits=GuardLimits(blocked=("anysearch",)))
    r = rw.rewrite(ZH, "价格呢？")
    assert r.fell_back and "blocked words" in r.reason


def test_custom_system_prompt():
    llm = ScriptedLLM(["AnySearch 的价格"])
    LLMRewriter(llm, system_prompt="Rewrite. Max {max_zh_chars} chars. JSON like {\"q\": 1} is fine.").rewrite(
        ZH, "价格呢？")
    assert llm.calls[0][0][0]["content"] == "Rewrite. Max 30 chars. JSON like {\"q\": 1} is fine."


def test_default_prompts_say_what_the_issue_asks():
    en, zh = REWRITE_PROMPTS["en"], REWRITE_PROMPTS["zh"]
    for needle in ("LAST message", "standalone", "never add", "Keep names", "language", "unchanged", "Do not answer"):
        assert needle in en
    for needle in ("最后一条消息", "独立", "不要添加", "保持原样", "同一种语言", "原样返回", "不要回答"):
        assert needle in zh


def test_async_twin():
    llm = ScriptedLLM(default="AnySearch 的价格")
    r = asyncio.run(LLMRewriter(llm).arewrite(ZH, "价格呢？"))
    assert r.rewritten == "AnySearch 的价格" and len(llm.calls) == 1


# --- enhancers --------------------------------------------------------------------------------------
def test_chain_llm_then_rules_then_original():
    ok = Chain(LLMEnhancer(ScriptedLLM(["AnySearch 的价格"])), Rules())
    r = ok.enhance(EnhanceRequest("价格呢？", ZH))
    assert (r.query, r.method, r.fell_back) == ("AnySearch 的价格", "llm", False)

    to_rules = Chain(LLMEnhancer(ScriptedLLM([LLMTimeout("timed out (budget 3.00 s)")])), Rules())
    r = to_rules.enhance(EnhanceRequest("价格呢？", ZH))
    assert (r.query, r.method, r.fell_back) == ("AnySearch 的价格", "rules", True)
    assert r.reason.startswith("llm fell back: timed out") and "rules:" in r.reason and len(r.steps) == 2

    class Failing:
        name = "failing"

        def enhance(self, req):
            from convsearch.rewrite.enhance import Enhanced
            return Enhanced(req.query, req.query, "failing", "always fails", True)

    r = Chain(Failing(), Failing()).enhance(EnhanceRequest("价格呢？", ZH))
    assert (r.query, r.method, r.fell_back) == ("价格呢？", "original", True)
    assert r.reason == "always fails; always fails; kept the original"
    with pytest.raises(ValueError):
        Chain()


def test_gated_skips_the_inner_enhancer_for_standalone_turns():
    llm = ScriptedLLM([])
    e = Gated(LLMEnhancer(llm))
    r = e.enhance(EnhanceRequest("What is the capital of France?", EN))
    assert r.method == "gate" and not r.fell_back and llm.calls == []


def test_filter_only_requests_make_no_call():
    llm = ScriptedLLM([])
    e = SkipFilterOnly(LLMEnhancer(llm))
    r = e.enhance(EnhanceRequest("", ZH, filters={"lang": "zh"}))
    assert r.skipped and r.method == "skip" and llm.calls == []
    # an empty query without filters still never reaches the LLM
    assert LLMEnhancer(llm).enhance(EnhanceRequest("  ", ZH)).fell_back and llm.calls == []


def test_logged_decorator(caplog):
    e = Logged(Passthrough())
    with caplog.at_level(logging.DEBUG, logger="convsearch.enhance"):
        r = e.enhance(EnhanceRequest("价格呢？", ZH))
    assert r.query == "价格呢？"
    assert any("enhance passthrough: '价格呢？' → '价格呢？' [passthrough" in m for m in caplog.messages)


def test_hyde_adds_a_dense_query_and_keeps_the_keyword_query():
    llm = ScriptedLLM(["AnySearch 免费版每月 1000 次查询，专业版每月 99 元。"])
    r = HyDE(llm, inner=Rules()).enhance(EnhanceRequest("价格呢？", ZH))
    assert r.query == "AnySearch 的价格" and r.dense_query.startswith("AnySearch 免费版")
    assert "hyde:" in r.reason
    assert llm.calls[0][0][-1]["content"] == "AnySearch 的价格"
    failed = HyDE(ScriptedLLM([LLMTimeout("slow")])).enhance(EnhanceRequest("AnySearch 的价格"))
    assert failed.dense_query is None and "hyde fell back: slow" in failed.reason and not failed.fell_back


def test_hyde_search_uses_one_search_without_a_dense_side():
    backend = InMemoryBackend([Document("p", "AnySearch 的价格：专业版每月 99 元。", title="价格")])
    r = HyDE(ScriptedLLM(["专业版每月 99 元"])).enhance(EnhanceRequest("AnySearch 价格"))
    assert [h.id for h in hyde_search(backend, r, top_k=3)] == ["p"]


def test_enhancer_rewriter_and_auto():
    assert isinstance(auto_rewriter(None), RuleRewriter)
    auto = auto_rewriter(ScriptedLLM([LLMTimeout("timed out")]))
    r = auto.rewrite(ZH, "价格呢？")
    assert (r.rewritten, r.method, r.fell_back) == ("AnySearch 的价格", "rules", True)
    assert auto.name == "auto" and isinstance(EnhancerRewriter(Passthrough()).rewrite(ZH, "x").rewritten, str)


# --- variants ---------------------------------------------------------------------------------------
def test_merge_variants_dedups_and_caps():
    assert merge_variants("AnySearch 价格", ["AnySearch 收费", "anysearch  价格", "AnySearch 收费！"],
                          ["AnySearch 费用", "AnySearch 多少钱"], cap=2) == ["AnySearch 收费", "AnySearch 费用"]
    assert merge_variants("q", [], cap=3) == []


def test_llm_variants_are_structured_checked_and_merged_with_heuristic_ones():
    llm = ScriptedLLM(['{"variants": ["AnySearch 的收费标准", "AnySearch pricing", "天气怎么样", '
                       '"AnySearch 的价格", "AnySearch 的收费标准"]}'])
    v = LLMVariants(llm)
    got, why = v.generate("AnySearch 的价格", 3)
    assert got == ["AnySearch 的收费标准"]  # off-language, unrelated and duplicate ones dropped
    assert why == "llm variants: 1 of 5 kept"
    assert llm.calls[0][1].__name__ == "VariantList"
    table = ["AnySearch 的收费标准", "AnySearch 的费用", "AnySearch 多少钱", "AnySearch 的价钱"]
    hybrid = HybridVariants(v, heuristic=lambda q, max_variants: table[:max_variants])
    assert hybrid("AnySearch 的价格", max_variants=3) == ["AnySearch 的收费标准", "AnySearch 的费用",
                                                        "AnySearch 多少钱"]
    assert hybrid("AnySearch 的价格", max_variants=0) == []
    assert HybridVariants(v)("AnySearch 的价格", max_variants=3)[0] == "AnySearch 的收费标准"  # the real table
    assert len(llm.calls) == 1  # the second call was a cache hit


def test_llm_variants_fail_open():
    v = LLMVariants(ScriptedLLM(['{"wrong": 1}']))
    got, why = v.generate("AnySearch 的价格", 3)
    assert got == [] and "does not match VariantList" in why
    assert HybridVariants(LLMVariants(ScriptedLLM([LLMTimeout("slow")])))("AnySearch 的价格", max_variants=2)


# --- summaries --------------------------------------------------------------------------------------
def test_summarizer_caps_length_and_fails_open():
    s = LLMSummarizer(ScriptedLLM(["用户在了解 AnySearch 的检索方式和价格。" * 5]), max_chars=40)
    out = s.summarize([{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
                       {"role": "assistant", "content": "支持 BM25、向量和混合检索。"},
                       {"role": "tool", "content": "tool output", "tool_call_id": "1"}])
    assert out is not None and len(out) <= 40 and out.startswith("用户在了解")
    msgs = s.llm.calls[0][0]
    assert msgs[-1] == {"role": "user", "content": "请总结以上对话。"} and "tool output" not in str(msgs)
    assert LLMSummarizer(ScriptedLLM([LLMTimeout("slow")])).summarize(list(ZH)) is None
    assert LLMSummarizer(ScriptedLLM(["  "])).summarize(list(ZH)) is None
    assert LLMSummarizer(ScriptedLLM([])).summarize([]) is None


# --- cache ------------------------------------------------------------------------------------------
def test_rewriters_keep_their_entries_in_their_own_namespace():
    shared = MemoryCache()
    a = LLMRewriter(ScriptedLLM(default="AnySearch 的价格"), cache=shared, cache_ns="acme:rewrite")
    b = LLMRewriter(ScriptedLLM(default="AnySearch 的价格"), cache=shared, cache_ns="beta:rewrite")
    a.rewrite(ZH, "价格呢？"), a.rewrite(ZH, "价格呢？"), b.rewrite(ZH, "价格呢？")
    assert len(a.llm.calls) == 1 and len(b.llm.calls) == 1  # one tenant's entry never answers another's
    assert shared.stats("acme:rewrite").hits == 1 and shared.stats("beta:rewrite").size == 1


def test_cache_key_depends_on_every_input():
    base = dict(model="m", prompt="p", turns=[("user", "a")], query="q", topic=None)
    k = cache_key("rewrite", **base)
    for change in ({"model": "n"}, {"prompt": "p2"}, {"turns": [("user", "b")]}, {"query": "q2"}, {"topic": "t"}):
        assert cache_key("rewrite", **{**base, **change}) != k
    assert cache_key("variants", **base) != k and cache_key("rewrite", **base) == k


# --- get_rewriter and the pipeline ------------------------------------------------------------------
def test_rewriter_names():
    assert set(REWRITERS) == {"rules", "passthrough", "llm", "auto", "learned"}


def test_llm_rewriter_without_configuration_is_a_config_error():
    with pytest.raises(ConfigError, match="CONVSEARCH_LLM_BASE_URL.*CONVSEARCH_LLM_MODEL"):
        get_rewriter("llm", Settings())
    assert isinstance(get_rewriter("auto", Settings()), RuleRewriter)


def test_pipeline_uses_an_llm_rewriter_and_traces_its_fallback():
    backend = InMemoryBackend([Document("p", "AnySearch 的价格：专业版每月 99 元。", title="AnySearch 价格")])
    auto = auto_rewriter(ScriptedLLM([LLMTimeout("timed out (budget 3.00 s)")]))
    r = search_with_context("价格呢？", [{"role": "user", "content": ZH[0].content}], backend=backend, rewriter=auto)
    assert r.standalone_query == "AnySearch 的价格" and r.rewrite.fell_back
    assert r.trace.notes == ("rewrite fell back to rules",) and "timed out" in r.trace.rewrite.reason
    ok = auto_rewriter(ScriptedLLM(["AnySearch 的价格"]))
    r = search_with_context("价格呢？", [{"role": "user", "content": ZH[0].content}], backend=backend, rewriter=ok)
    assert r.rewrite.method == "llm" and r.trace.notes == () and r.hits[0].id == "p"


def test_pipeline_asks_an_uncertain_rewriter_about_low_confidence_standalone_verdicts():
    llm = ScriptedLLM(default=lambda msgs: msgs[-1]["content"])
    backend = InMemoryBackend([])
    auto = auto_rewriter(llm, uncertain_below=0.95)
    search_with_context("What is the capital of France?", list(EN), backend=backend, rewriter=auto)
    assert len(llm.calls) == 1
    search_with_context("What is the capital of France?", list(EN), backend=backend, rewriter=auto_rewriter(llm))
    assert len(llm.calls) == 1  # the default asks nothing about standalone turns


def test_a_stored_summary_goes_into_the_system_prompt_not_the_turns():
    summary = Message("user", "topics: NovaDB; AnySearch", name="summary")
    llm = ScriptedLLM(["NovaDB 的价格"])
    r = LLMRewriter(llm).rewrite((summary, Message("user", "它支持哪些检索方式？")), "价格呢？")
    msgs = llm.calls[0][0]
    assert "更早对话的摘要：topics: NovaDB; AnySearch" in msgs[0]["content"]
    assert [m["role"] for m in msgs] == ["system", "user", "user"] and "topics:" not in msgs[1]["content"]
    assert r.rewritten == "NovaDB 的价格" and not r.fell_back  # words from the summary are faithful


def test_the_summarizer_updates_a_previous_summary():
    from convsearch.history.summary import Summarizer

    s = LLMSummarizer(ScriptedLLM(["The user compares NovaDB and AnySearch pricing."]))
    assert isinstance(s, Summarizer)  # plugs into the history store's refresh
    out = s.summarize([Message("user", "topics: NovaDB", name="summary"), *EN])
    assert out == "The user compares NovaDB and AnySearch pricing."
    msgs = s.llm.calls[0][0]
    assert "The summary so far (update it): topics: NovaDB" in msgs[0]["content"]
    assert msgs[1]["content"] == EN[0].content


# --- token usage reaches the result ---------------------------------------------------------------------
def test_every_llm_call_of_a_rewrite_is_in_the_result_with_its_tokens():
    from convsearch.llm import LLMBadOutput
    from convsearch.types import Completion, Usage

    long = Completion(text="AnySearch 支持哪些检索方式以及价格" * 3, usage=Usage(120, 40))
    llm = ScriptedLLM([long, Completion(text="AnySearch 的价格", usage=Usage(150, 6))], model="m1")
    rw = LLMRewriter(llm)
    r = rw.rewrite(ZH, "价格呢？")
    assert r.rewritten == "AnySearch 的价格" and [c.step for c in r.llm_calls] == ["rewrite", "rewrite"]
    assert r.usage == Usage(270, 46) and all(c.model == "m1" and c.ms >= 0 and not c.error for c in r.llm_calls)
    cached = rw.rewrite(ZH, "价格呢？")
    assert "cache hit" in cached.reason and cached.llm_calls == ()  # no call, no tokens
    # a failed LLM step still reports its call (and what a rejected reply cost), through the chain to rules
    bad = LLMBadOutput("empty content", usage=Usage(80, 0))
    auto = auto_rewriter(ScriptedLLM([bad]))
    r = auto.rewrite(EN, "When did it first launch a rocket?")
    assert r.method == "rules" and r.fell_back and len(r.llm_calls) == 1
    assert r.llm_calls[0].error == "empty content" and r.usage == Usage(80, 0)


def test_variants_hyde_and_summaries_append_their_calls():
    from convsearch.types import Usage

    calls: list = []
    v = LLMVariants(ScriptedLLM(['{"variants": ["AnySearch 的收费标准"]}'], usage=Usage(60, 12)))
    assert HybridVariants(v)("AnySearch 的价格", max_variants=2, calls=calls)[0] == "AnySearch 的收费标准"
    e = HyDE(ScriptedLLM(["AnySearch 专业版每月 99 元。"], usage=Usage(40, 20)), inner=Rules()).enhance(
        EnhanceRequest("价格呢？", ZH))
    assert [c.step for c in e.llm_calls] == ["hyde"] and e.as_rewrite().usage == Usage(40, 20)
    LLMSummarizer(ScriptedLLM(["The user asks about SpaceX."], usage=Usage(30, 8))).summarize(list(EN), calls=calls)
    assert [c.step for c in calls] == ["variants", "summary"]
    assert sum((c.usage for c in calls), Usage()) == Usage(90, 20)


def test_auto_reads_the_decision_and_skips_the_llm_where_the_rules_are_sure():
    """An ordinal into a listed answer, a yes to an offer: the gate's Decision says the rules are sure, so the
    ``auto`` rewriter answers with them and makes no LLM call; a pronoun turn still asks the LLM."""
    llm = ScriptedLLM(default="When did SpaceX first launch a rocket?")
    auto = auto_rewriter(llm)
    listed = [Message("user", "Which note apps work offline?"), Message("assistant", "1. Obsidian 2. Joplin 3. Logseq")]
    r = auto.rewrite(listed, "Does the second one sync?")
    assert "Joplin" in r.rewritten and r.method == "rules" and len(llm.calls) == 0
    offered = [Message("user", "Is the Louvre open on Mondays?"),
               Message("assistant", "No, it is closed. Would you like the opening hours?")]
    assert "opening hours" in auto.rewrite(offered, "Yes please").rewritten and len(llm.calls) == 0
    r = auto.rewrite(list(EN), "When did it first launch a rocket?")
    assert r.method == "llm" and len(llm.calls) == 1
