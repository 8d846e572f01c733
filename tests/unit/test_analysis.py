"""One analysis per turn: built once (``analyse``), handed to the gate's checks and the rule rewriter as an argument;
nothing is computed twice, and the trace shows what was computed."""

from __future__ import annotations

import json

import pytest

from convsearch import InMemoryBackend, search_with_context
from convsearch.config import Settings
from convsearch.pipeline import plan_turn
from convsearch.resolve import analysis as analysis_module
from convsearch.resolve.analysis import Analysis, analyse
from convsearch.resolve.gate import decide
from convsearch.resolve.language import language
from convsearch.resolve.rules import RuleRewriter
from convsearch.types import Document, Message

LISTED = [Message("user", "Which note apps work offline?"),
          Message("assistant", "Three do: 1. Obsidian 2. Joplin 3. Logseq")]


def _counting(monkeypatch, name: str) -> list[str]:
    calls: list[str] = []
    real = getattr(analysis_module, name)

    def counted(text, *args):
        calls.append(text)
        return real(text, *args)

    monkeypatch.setattr(analysis_module, name, counted)
    return calls


@pytest.mark.parametrize(("name", "query", "history", "want"), [
    ("resolve_ordinal", "Does the second one sync?", LISTED, "Joplin"),
    ("accepted_offer", "Yes please", [Message("user", "Is the Louvre open on Mondays?"),
                                      Message("assistant", "No, it is closed. Would you like the opening hours?")],
     "opening hours"),
])
def test_the_rewriter_reads_what_the_gate_found(monkeypatch, name, query, history, want) -> None:
    calls = _counting(monkeypatch, name)
    a = analyse(history, query)
    r = RuleRewriter().rewrite(history, query, decision=decide(a), analysis=a)
    assert want in r.rewritten, r
    assert calls == [query]  # the gate asked once; the rewriter read its answer
    calls.clear()
    planned = plan_turn(query, history, rewriter=RuleRewriter(), settings=Settings())
    assert want in planned.rewrite.rewritten and calls == [query]  # so does the pipeline's plan


def test_an_analysis_of_another_turn_is_not_read(monkeypatch) -> None:
    calls = _counting(monkeypatch, "resolve_ordinal")
    other = analyse(LISTED, "Does the third one sync?")
    r = RuleRewriter().rewrite(LISTED, "Does the second one sync?", decision=decide(other), analysis=other)
    assert "Joplin" in r.rewritten and "Logseq" not in r.rewritten
    assert calls == ["Does the third one sync?", "Does the second one sync?"]


def test_the_analysis_keeps_each_fact_once_and_lists_it() -> None:
    a = Analysis(tuple(LISTED), "Does the second one sync?", None, language("en"))
    assert a.ordinal() is a.ordinal() and a.ordinal()[2] == "Joplin"
    assert a.focus is a.focus
    facts = a.describe()["facts"]
    assert set(facts) == {"ordinal", "focus"} and facts["ordinal"][2] == "Joplin"
    assert a.matches(tuple(LISTED), "Does the second one sync?", None)
    assert not a.matches(tuple(LISTED[:1]), "Does the second one sync?", None)


def test_the_trace_shows_the_analysis_as_plain_data() -> None:
    docs = [Document(id="p", title="AnySearch 价格", text="AnySearch 的价格与套餐", lang="zh")]
    r = search_with_context("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}],
                            backend=InMemoryBackend(docs))
    got = r.trace.analysis
    assert got is not None and got["lang"] == "zh" and got["query"] == "价格呢？"
    assert got["facts"]["topic_focus"]["entity"] == "AnySearch"  # the focus the rewrite read
    assert got["facts"]["frame"] == "AnySearch 支持哪些检索方式？" and got["facts"]["offer"] is None  # the gate's
    out = r.to_dict()
    assert out["trace"]["decision"]["analysis"] == got
    json.dumps(out, ensure_ascii=False)  # plain data all the way down


def test_the_candidates_carry_what_a_resolver_reads() -> None:
    a = Analysis((Message("user", "Who founded SpaceX?"), Message("assistant", "Elon Musk founded SpaceX in 2002.")),
                 "When did it first launch a rocket?", None, language("en"))
    got = {c.text: c for c in a.candidates}
    assert set(got) == {"Elon Musk", "SpaceX"}
    assert got["SpaceX"].is_focus and got["SpaceX"].in_frame and not got["SpaceX"].in_query
    assert got["Elon Musk"].role == "assistant" and got["Elon Musk"].distance == 1 and not got["Elon Musk"].is_focus
    zh = Analysis((Message("user", "深圳最近三天适合露营吗？"), Message("assistant", "适合，天气晴。")), "那番禺呢？",
                  None, language("zh"))
    place = next(c for c in zh.candidates if c.text == "深圳")
    assert place.slot == "place" and place.turn == 0 and place.distance == 2 and place.proper
    assert "candidates" not in Analysis(tuple(LISTED), "Does it sync?", None, language("en")).describe()["facts"]
    assert "candidates" in zh.describe(candidates=True)["facts"]
