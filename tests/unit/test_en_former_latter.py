"""English "the former" / "the latter" after a question that joined two things (a rule added as one gate check and
one rule step in lang/en/steps.py)."""

from __future__ import annotations

import pytest

from convsearch.resolve.rules import RuleRewriter
from convsearch.types import Message

COMPARED = [Message("user", "Which is bigger, Lyon or Marseille?"),
            Message("assistant", "Marseille is bigger, with about 870,000 people.")]


@pytest.mark.parametrize(("query", "want"), [
    ("How old is the latter?", "How old is Marseille?"),
    ("Does the former have a metro?", "Does Lyon have a metro?"),
    ("What is the latter's population?", "What is Marseille's population?"),
])
def test_the_former_and_the_latter_take_the_two_things_named(query, want) -> None:
    r = RuleRewriter().rewrite(COMPARED, query)
    assert r.rewritten == want and r.reason.startswith("gate: the former / the latter"), r


def test_an_adjective_former_is_no_reference() -> None:
    r = RuleRewriter().rewrite(COMPARED, "Who was the former mayor?")
    assert "the former mayor" in r.rewritten and "former →" not in r.reason


def test_without_two_things_named_nothing_is_taken() -> None:
    r = RuleRewriter().rewrite([Message("user", "Tell me about Lyon.")], "Is the latter older?")
    assert "former" not in r.reason and "latter →" not in r.reason


def test_an_answer_listing_items_keeps_the_ordinal_reading() -> None:
    h = [Message("user", "Which is bigger, Lyon or Marseille?"),
         Message("assistant", "Two options: 1. Nice 2. Toulouse")]
    r = RuleRewriter().rewrite(h, "How far is the latter?")
    assert "Toulouse" in r.rewritten and r.reason.split("; ")[1].startswith("ordinal"), r
