"""The rule layer as ordered lists of small named steps (lang/zh/steps.py, lang/en/steps.py): order, stops, and
the extension point (adding a rule = one function + one list entry + a test)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from convsearch.lang.en import steps as en
from convsearch.lang.zh import steps as zh
from convsearch.resolve.analysis import Analysis, analyse
from convsearch.resolve.focus import find_focus
from convsearch.resolve.gate import decide
from convsearch.resolve.language import language
from convsearch.resolve.rules import Outcome, RuleRewriter
from convsearch.resolve.turn import Turn
from convsearch.types import Message

ZH_H = [Message("user", "深圳最近三天适合露营吗？"), Message("assistant", "适合，天气晴。")]
EN_H = [Message("user", "Does AnySearch support Chinese?"), Message("assistant", "Yes, it does.")]
def _turn(code, query, focus, history):
    return Turn(Analysis(tuple(history), query, None, language(code)), focus=focus)


def _zh_run(query, focus, history=(), steps=None):
    return zh.resolve(_turn("zh", query, focus, history), zh.REWRITE_STEPS if steps is None else steps)


def _en_run(query, focus, history=(), steps=None):
    return en.resolve(_turn("en", query, focus, history), en.REWRITE_STEPS if steps is None else steps)


CASES = [("zh", zh, _zh_run, ZH_H, "那番禺呢？", "番禺最近三天适合露营吗"),
         ("en", en, _en_run, EN_H, "What about NovaDB?", "Does NovaDB support Chinese?")]
WORD = {"zh": "中文", "en": "Chinese"}  # a word of the history: the guard lets the toy rule's output through


@pytest.mark.parametrize("module", [zh, en], ids=["zh", "en"])
def test_every_step_is_a_named_function_with_an_example(module) -> None:
    assert len(module.REWRITE_STEPS) >= 5
    assert language(module.__name__.rsplit(".", 2)[1]).rewrite is module.REWRITE_STEPS
    for step in module.REWRITE_STEPS:
        assert step.__name__ != "<lambda>" and ">>>" in (step.__doc__ or ""), step


@pytest.mark.parametrize(("name", "module", "rewrite", "history", "query", "want"), CASES, ids=["zh", "en"])
def test_a_step_added_to_the_list_runs_in_its_place(name, module, rewrite, history, query, want) -> None:
    focus = find_focus(history, None)
    seen: list[str] = []

    def spy(label: str):
        def step(t):
            seen.append(label)
            return None  # does not apply: the next step is tried

        step.__name__ = label
        return step

    def toy(t):
        seen.append("toy")
        return Outcome(f"{t.q} (toy)", "toy rule")

    steps = list(module.REWRITE_STEPS)
    assert rewrite(query, focus, history, steps=steps)[0] == want  # the copy behaves as the list itself
    i = steps.index(module.ellipsis)
    first = [spy("before"), *steps[:i], toy, *steps[i:]]
    out, how = rewrite(query, focus, history, steps=first)
    assert (out, how) == (f"{query.strip()} (toy)", "toy rule") and seen == ["before", "toy"]
    seen.clear()
    after = [*steps[:i + 1], toy, *steps[i + 1:]]  # the ellipsis answers first: the toy rule never runs
    assert rewrite(query, focus, history, steps=after)[0] == want and seen == []


@pytest.mark.parametrize(("name", "module", "history", "query", "want"), [
    ("zh", zh, [Message("user", "AnySearch 支持中文吗？"), Message("assistant", "支持。")], "价格呢？",
     "AnySearch 的价格"),
    ("en", en, EN_H, "What about NovaDB?", "Does NovaDB support Chinese?")], ids=["zh", "en"])
def test_the_rewriter_runs_the_languages_list(name, module, history, query, want) -> None:
    assert RuleRewriter().rewrite(history, query).rewritten == want

    def toy(t):
        return Outcome(f"{t.q.rstrip('?？')} {WORD[name]}", "toy rule")

    a = analyse(history, query)
    toyed = Analysis(a.history, a.query, a.topic, replace(a.language, rewrite=(toy, *module.REWRITE_STEPS)),
                     typed=query)
    r = RuleRewriter().rewrite(history, query, analysis=toyed)
    assert r.reason.endswith("; toy rule") and r.rewritten == f"{query.rstrip('?？')} {WORD[name]}", r


def test_a_stop_ends_the_steps_with_its_reason() -> None:
    focus = find_focus(ZH_H, None)
    ran: list[str] = []

    def later(t):
        ran.append("later")
        return Outcome("never", "never")

    steps = [*zh.REWRITE_STEPS[:zh.REWRITE_STEPS.index(zh.interjection) + 1], later]
    stopped = _zh_run("好的！", focus, ZH_H, steps=steps)
    assert stopped == (None, "an interjection (好的, 对啊), not a request")
    assert ran == []
    assert _en_run("How much does it cost?", find_focus([], None), [], steps=[en.no_focus, later]) \
        == (None, "no focus")
    assert _en_run("How much?", find_focus([], None), [], steps=[]) == (None, "no rule applies")


def test_annotating_steps_feed_the_later_ones() -> None:
    h = [Message("user", "What did they release next?"),
         Message("assistant", "The band's fourth album, Blue Harbour, came out in 2003.")]
    focus = find_focus(h, "Grey Owls")
    q = "Was that album well received?"
    full = _en_run(q, focus, h)
    without = _en_run(q, focus, h, steps=[s for s in en.REWRITE_STEPS if s is not en.class_reference])
    assert "Blue Harbour" in (full[0] or "") and full[1].startswith("class reference: that album → Blue Harbour")
    assert "Blue Harbour" not in (without[0] or "") and not without[1].startswith("class reference")


@pytest.mark.parametrize("module", [zh, en], ids=["zh", "en"])
def test_the_rule_steps_and_gate_checks_are_named_and_documented(module) -> None:
    for step in (*module.RULE_STEPS, *module.GATE_STEPS):
        assert step.__name__ != "<lambda>" and (step.__doc__ or "").strip(), step
    assert module.GATE_STEPS[-1].__name__ == "standalone"  # the last check always decides


@pytest.mark.parametrize(("history", "query", "operation", "want"), [
    ([Message("user", "Which note apps work offline?"), Message("assistant", "1. Obsidian 2. Joplin 3. Logseq")],
     "Does the second one sync?", "ordinal", "Joplin"),
    (ZH_H, "那番禺呢？", "fragment", "番禺最近三天适合露营吗"),
    (ZH_H, "谢谢", "keep", None),
])
def test_the_scorer_decides_with_the_operation_and_the_rewriter_carries_it_out(history, query, operation, want):
    from convsearch.resolve.scoring import RuleScorer

    a = analyse(history, query)
    d = decide(a)
    done = RuleScorer().decide(a, d)
    assert done.operation == operation and (want is None or want in (done.out or "")), done
    r = RuleRewriter().rewrite(history, query, decision=d, analysis=a)
    assert r.reason == done.reason and (r.rewritten == done.out if want else not r.changed)


@pytest.mark.parametrize("first, focus", [
    ("How much memory does the team wiki server need?", "team wiki server"),  # the demo's knowledge-base turn
    ("How many titles has Real Madrid won?", "Real Madrid"),
    # a measure or an indefinite subject is not what the conversation is about: the order the turn names things
    ("How many calories does an hour of rowing burn?", "calories"),
])
def test_the_subject_of_a_how_much_question_is_the_focus(first, focus) -> None:
    history = [Message("user", first), Message("assistant", "About that much.")]
    assert find_focus(history).entity.text == focus
    if focus == "team wiki server":
        out = RuleRewriter().rewrite(history, "Which port does it listen on?").rewritten
        assert out == "Which port does the team wiki server listen on?"
