"""The contract every ``Rewriter`` passes (``rewrite.base``), as a pytest base class.

Subclass it and provide a ``make_rewriter`` fixture: a callable that opens a new rewriter (the suite closes what it
opens)::

    class TestMyRewriter(RewriterContract):
        @pytest.fixture
        def make_rewriter(self):
            return lambda: MyRewriter()

What every rewriter must do, in Chinese and in English:

- say who it is: ``name`` (text), ``uncertain_below`` (a number), ``cost`` (``pure``, ``compute`` or ``io``; a
  rewriter that does not say is taken as ``io``), ``rewrite`` and ``close``;
- return a ``RewriteResult`` whose ``original`` is the query as given, with a method and a reason, for a list or a
  tuple of history alike, with or without a topic, with or without the gate's ``decision`` (the same answer either
  way);
- leave a standalone question with no history unchanged (``standalone_unchanged``; a rewriter that may rephrase it
  sets it False and must then say why);
- resolve the follow-ups of ``followups`` (each must name what it refers to) when ``resolves`` is True, and return
  every query unchanged when it is False (the pass-through);
- never raise on odd input: an empty or blank query, only punctuation, emoji, control characters, a very long
  text, an empty history, a history of one assistant message or of empty messages; never empty a query that was
  not empty;
- answer the same query the same way twice; ``close()`` once opened.

``topic_followups`` (queries whose referent only the session topic gives) are checked when ``uses_topic`` is True.

Needs pytest (a dev dependency); nothing else in convsearch imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import pytest

from ..resolve.gate import needs_rewrite
from ..rewrite.base import Rewriter
from ..types import Message, RewriteResult

ZH_HISTORY = (Message("user", "AnySearch 支持哪些检索方式？"), Message("assistant", "支持 BM25、向量和混合检索。"))
EN_HISTORY = (Message("user", "Who founded SpaceX?"), Message("assistant", "Elon Musk founded SpaceX in 2002."))

# (history, query, a word the resolved query must hold)
FOLLOWUPS: tuple[tuple[tuple[Message, ...], str, str], ...] = (
    (ZH_HISTORY, "价格呢？", "AnySearch"),
    (EN_HISTORY, "When did it first launch a rocket?", "SpaceX"),
)
# (topic, query, a word the resolved query must hold): no history, the session topic names the referent
TOPIC_FOLLOWUPS: tuple[tuple[str, str, str], ...] = (
    ("AnySearch 产品文档", "价格呢？", "AnySearch"),
    ("AnySearch", "how much does it cost?", "AnySearch"),
)
STANDALONE = ("AnySearch 支持哪些检索方式？", "Who founded SpaceX?", "番禺最近三天适合露营吗？",
              "What is the capital of France?")
ODD_QUERIES = ("", "   ", "？？", "??", "…", "🔥🔥🔥", "它🔥呢？", "\x00\x07", "\u200b", "a\nb\tc",
               "价格" * 1500, "how about it " * 400, "ﾟ∀ﾟ)ノ", "SELECT * FROM users; --")
ODD_HISTORIES: tuple[tuple[Message, ...], ...] = (
    (),
    (Message("assistant", "你好！有什么可以帮你？"),),
    (Message("user", ""), Message("assistant", "")),
    (Message("user", "🔥"), Message("assistant", "？？")),
    ZH_HISTORY + EN_HISTORY,
)
COSTS = frozenset({"pure", "compute", "io"})


class RewriterContract:
    """Subclass with a ``make_rewriter`` fixture (a callable opening a new rewriter); adjust the class attributes
    to what the rewriter does."""

    resolves: ClassVar[bool] = True  # resolves follow-ups (False: returns every query as given)
    uses_topic: ClassVar[bool] = True  # resolves with the session topic when there is no history
    standalone_unchanged: ClassVar[bool] = True
    followups: ClassVar[tuple[tuple[tuple[Message, ...], str, str], ...]] = FOLLOWUPS
    topic_followups: ClassVar[tuple[tuple[str, str, str], ...]] = TOPIC_FOLLOWUPS

    @pytest.fixture
    def make_rewriter(self) -> Callable[[], Rewriter]:
        raise NotImplementedError("a RewriterContract subclass provides the make_rewriter fixture")

    @pytest.fixture
    def rewriter(self, make_rewriter: Callable[[], Rewriter]) -> Iterator[Rewriter]:
        rw = make_rewriter()
        yield rw
        rw.close()

    # --- helpers -----------------------------------------------------------------------------------------------
    @staticmethod
    def check_result(r: Any, query: str) -> RewriteResult:
        assert isinstance(r, RewriteResult), f"rewrite() returned {type(r).__name__}, not a RewriteResult"
        assert r.original == query, "original must be the query as given"
        assert isinstance(r.rewritten, str) and isinstance(r.method, str) and r.method
        assert isinstance(r.reason, str) and isinstance(r.fell_back, bool)
        assert isinstance(r.llm_calls, tuple)
        return r

    # --- the contract ------------------------------------------------------------------------------------------
    def test_says_who_it_is(self, rewriter: Rewriter) -> None:
        assert isinstance(rewriter, Rewriter)
        assert isinstance(rewriter.name, str) and rewriter.name
        assert isinstance(rewriter.uncertain_below, (int, float))
        assert getattr(rewriter, "cost", "io") in COSTS
        assert callable(rewriter.rewrite) and callable(rewriter.close)

    @pytest.mark.parametrize("which", ["zh", "en"])
    def test_returns_a_result_keeping_the_original(self, rewriter: Rewriter, which: str) -> None:
        history, query, _ = self.followups[0 if which == "zh" else 1]
        for h in (history, list(history)):
            r = self.check_result(rewriter.rewrite(h, query), query)
            assert r.rewritten.strip(), "a query that was not empty must not come back empty"

    @pytest.mark.parametrize("query", STANDALONE)
    def test_a_standalone_question_without_history(self, rewriter: Rewriter, query: str) -> None:
        r = self.check_result(rewriter.rewrite([], query), query)
        if self.standalone_unchanged:
            assert r.rewritten == query, f"{query!r} has nothing to resolve, got {r.rewritten!r} ({r.reason})"
        else:
            assert r.rewritten == query or r.reason, "a changed standalone question must say why"

    def test_follow_ups(self, rewriter: Rewriter) -> None:
        for history, query, needle in self.followups:
            r = self.check_result(rewriter.rewrite(history, query), query)
            if self.resolves:
                assert needle.lower() in r.rewritten.lower() and r.changed, \
                    f"{query!r} after {history[-1].content!r}: {r.rewritten!r} ({r.reason})"
                assert r.reason, "a rewrite says why"
            else:
                assert r.rewritten == query

    def test_the_session_topic(self, rewriter: Rewriter) -> None:
        for topic, query, needle in self.topic_followups:
            r = self.check_result(rewriter.rewrite([], query, topic=topic), query)
            if self.resolves and self.uses_topic:
                assert needle.lower() in r.rewritten.lower(), f"{query!r} in topic {topic!r}: {r.rewritten!r}"
            elif not self.resolves:
                assert r.rewritten == query
            # a question about something else, which names its own subject, keeps it whatever the topic and history
            if self.standalone_unchanged:
                for standalone in STANDALONE[1:3]:
                    assert rewriter.rewrite(ZH_HISTORY, standalone, topic=topic).rewritten == standalone

    def test_the_gates_decision_changes_nothing(self, rewriter: Rewriter) -> None:
        for history, query, _ in self.followups:
            plain = self.check_result(rewriter.rewrite(history, query), query)
            d = needs_rewrite(history, query)
            given = self.check_result(rewriter.rewrite(history, query, decision=d), query)
            assert given.rewritten == plain.rewritten

    def test_the_same_turn_twice_gives_the_same_answer(self, rewriter: Rewriter) -> None:
        for history, query, _ in self.followups:
            assert rewriter.rewrite(history, query).rewritten == rewriter.rewrite(history, query).rewritten

    @pytest.mark.parametrize("history", ODD_HISTORIES, ids=["empty", "assistant-only", "empty-messages",
                                                            "odd-messages", "long"])
    def test_never_raises_on_odd_input(self, rewriter: Rewriter, history: Sequence[Message]) -> None:
        for query in ODD_QUERIES:
            for topic in (None, "", "AnySearch"):
                r = self.check_result(rewriter.rewrite(history, query, topic=topic), query)
                if query.strip():
                    assert r.rewritten.strip(), f"{query[:20]!r} came back empty ({r.reason})"

    def test_close(self, make_rewriter: Callable[[], Rewriter]) -> None:
        rw = make_rewriter()
        self.check_result(rw.rewrite(ZH_HISTORY, "价格呢？"), "价格呢？")
        assert rw.close() is None


__all__ = ["EN_HISTORY", "FOLLOWUPS", "ODD_HISTORIES", "ODD_QUERIES", "RewriterContract", "STANDALONE",
           "TOPIC_FOLLOWUPS", "ZH_HISTORY"]
