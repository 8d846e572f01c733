"""The Pipeline object: plan without I/O, search / asearch, the parts it owns and closes, from_settings."""

from __future__ import annotations

import asyncio
import logging

import pytest

from convsearch import (
    InMemoryBackend,
    InputError,
    Pipeline,
    Rewriter,
    RuleRewriter,
    SearchResponse,
    Settings,
    TurnPlan,
    search_with_context,
)
from convsearch.rewrite import Passthrough, Scripted, get_rewriter
from convsearch.testing.backends import ScriptedBackend
from convsearch.types import Document

DOCS = [Document("zh", "AnySearch 的价格：专业版每月 99 元", title="AnySearch 价格"),
        Document("en", "SpaceX first launched Falcon 1 in 2006", title="Falcon 1")]
ZH = [{"role": "user", "content": "AnySearch 支持哪些检索方式？"},
      {"role": "assistant", "content": "关键词和混合检索。"}]
EN = [{"role": "user", "content": "Who founded SpaceX?"}, {"role": "assistant", "content": "Elon Musk, in 2002."}]


class Closing:
    """A variant maker / HyDE writer stand-in that counts its closes."""

    def __init__(self) -> None:
        self.closed = 0

    def __call__(self, query: str, *, max_variants: int = 3, calls: list | None = None) -> list[str]:
        return []

    def close(self) -> None:
        self.closed += 1


@pytest.mark.parametrize("query,history,standalone", [
    ("价格呢？", ZH, "AnySearch 的价格"), ("When did it first launch?", EN, "When did SpaceX first launch?")])
def test_plan_is_the_front_of_a_turn_without_searching(query, history, standalone, caplog):
    b = InMemoryBackend(DOCS)
    caplog.set_level(logging.INFO, logger="convsearch.events")
    with Pipeline(b) as p:
        plan = p.plan(query, history)
    assert isinstance(plan, TurnPlan) and plan.standalone_query == standalone
    assert plan.queries[0] == standalone and set(plan.variants) <= set(plan.queries)
    assert plan.decision.needed and len(plan.history) == 2
    assert list(plan.timings_ms) == ["window", "gate", "rewrite", "variants"]
    assert b.queries == []  # nothing searched
    assert '"event": "rewrite"' in caplog.text


def test_plan_options_mode_and_variants():
    with Pipeline(InMemoryBackend()) as p:
        assert p.plan("价格呢？", ZH, max_variants=0).variants == ()
        # dual: the rewrite, the query as typed, then the follow-up's history variant
        assert p.plan("价格呢？", ZH, mode="dual", max_variants=0).queries == (
            "AnySearch 的价格", "价格呢？", f"{ZH[0]['content']} 价格呢？")
        with pytest.raises(InputError, match="query is empty"):
            p.plan("   ")


def test_search_matches_the_one_call_convenience():
    b = InMemoryBackend(DOCS)
    with Pipeline(b) as p:
        r = p.search("价格呢？", ZH, top_k=1)
    assert isinstance(r, SearchResponse) and r.hits[0].id == "zh" and not r.partial
    one = search_with_context("价格呢？", ZH, backend=b, top_k=1)
    assert [h.id for h in one.hits] == [h.id for h in r.hits] and one.trace.queries == r.trace.queries
    run = r.trace.backends[0]
    assert (run.backend, run.status, run.queries) == ("memory", "ok", r.trace.queries)


def test_asearch_on_one_backend():
    with Pipeline(InMemoryBackend(DOCS)) as p:
        r = asyncio.run(p.asearch("When did it first launch?", EN))
    assert r.standalone_query == "When did SpaceX first launch?" and r.hits[0].id == "en"


def test_the_gate_runs_once_in_a_pipeline_turn(monkeypatch):
    from convsearch.resolve import gate

    calls = []
    real = gate.decide
    for where in ("convsearch.pipeline", "convsearch.resolve.gate", "convsearch.resolve.rules"):
        monkeypatch.setattr(f"{where}.decide", lambda a: calls.append(a.query) or real(a))
    with Pipeline(InMemoryBackend(DOCS), rewriter=get_rewriter("auto", Settings())) as p:
        p.search("价格呢？", ZH)
    assert calls == ["价格呢？"]


def test_close_releases_what_it_owns_only_and_is_idempotent():
    backend = ScriptedBackend("kb", DOCS)
    vm, hyde = Closing(), Closing()
    p = Pipeline(backend, variant_maker=vm, hyde=hyde, owns=(vm,))
    p.search("SpaceX launch")
    p.close()
    p.close()
    assert (vm.closed, hyde.closed, backend.closed) == (1, 0, 0)  # hyde and the backend are the caller's
    with Pipeline(backend, owns_backends=True):
        pass
    assert backend.closed == 1


def test_from_settings_opens_the_configured_backends_lazily_and_closes_them(monkeypatch):
    monkeypatch.setenv("CONVSEARCH_BACKENDS", "memory")
    monkeypatch.setenv("CONVSEARCH_REWRITER", "rules")
    with Pipeline.from_settings() as p:
        assert isinstance(p.rewriter, RuleRewriter) and p.variant_maker is None and p.hyde is None
        assert "not opened" in repr(p)
        assert p.search("价格呢？", ZH).trace.backends[0].backend == "memory"
        assert [b.name for b in p.backends] == ["memory"]


def test_every_rewriter_declares_uncertain_below_and_close():
    for rw in (RuleRewriter(), Passthrough(), Scripted({}), get_rewriter("auto", Settings())):
        assert isinstance(rw, Rewriter)
        assert rw.uncertain_below == 0.0
        rw.close()
