"""A bare yes to an offer of information asks for that information; a yes to an offered action does not."""

from __future__ import annotations

import pytest

from convsearch import Message, RuleRewriter, needs_rewrite
from convsearch.resolve.offer import accepted_offer

U = lambda s: Message("user", s)  # noqa: E731
A = lambda s: Message("assistant", s)  # noqa: E731

INFO = A("There is no cure yet. Would you like me to give you more information on alternative therapies?")


@pytest.mark.parametrize("yes", ["Yes please!", "Sure.", "yes, please", "OK", "Yes. Please do."])
def test_yes_to_an_information_offer(yes):
    assert accepted_offer(yes, [U("Is there a cure for IBS?"), INFO]) == "give me more information on alternative therapies"
    r = RuleRewriter().rewrite([U("Is there a cure for IBS?"), INFO], yes)
    assert r.rewritten == f"{yes.rstrip()} give me more information on alternative therapies"
    assert needs_rewrite([U("Is there a cure for IBS?"), INFO], yes).needed


def test_offer_pronoun_points_at_what_the_answer_named():
    h = [U("I want cheap Italian food."), A("Da Vinci Pizzeria is cheap. Would you like their location?")]
    assert RuleRewriter().rewrite(h, "Yes.").rewritten == "Yes. The location of Da Vinci Pizzeria"


@pytest.mark.parametrize("history,query", [
    ([U("Remove Stoddy."), A("Would you like me to remove Stoddy and add Adrienne?")], "Yes."),  # an action
    ([U("Is there a cure?"), INFO], "Yes, and what about diet changes?"),  # more than a yes
    ([U("Is there a cure?"), A("There is no cure yet.")], "Yes please"),  # no offer
    ([INFO, U("Hmm.")], "Yes please"),  # the offer is not the latest turn
])
def test_not_an_accepted_information_offer(history, query):
    assert accepted_offer(query, history) is None


@pytest.mark.parametrize("offer", ["Would you like me to add eggs to your shopping list too?",
                                   "Should I call the number on their website?"])
def test_yes_to_an_offered_action_is_not_a_search_even_with_an_information_word(offer):
    assert accepted_offer("Yes please", [U("Buy milk."), A(offer)]) is None
