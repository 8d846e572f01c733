"""English restoration precision on answer-bearing histories: what a long answer passage is about
(``entities.en_salient_noun``) and when it replaces a focus the passage left behind (``lang.en.passage_subject``)."""

from __future__ import annotations

from convsearch.lang.en import steps as en
from convsearch.resolve import compose
from convsearch.resolve.entities import mentions
from convsearch.resolve.focus import en_salient_noun
from convsearch.resolve.rules import RuleRewriter
from convsearch.types import Message

# a passage (more than 40 words) about composting that never says "balcony"
COMPOST = ("Many people start composting with a simple bin. A good compost pile needs a mix of green waste and brown "
           "waste, and the compost pile should stay about as damp as a wrung-out sponge. Turning the compost pile "
           "every week lets air in, so the material breaks down faster and does not smell.")
# a passage about one politician, named in full once and by surname after that
SENATOR = ("Senator Maria Okafor announced on Monday that she would not seek another term. Okafor, who has served "
           "since 2009, said her family came first. In her last year Okafor led the work on water policy, and "
           "critics said that she had left the party without a candidate for the autumn race in the district.")


def salient(text: str) -> str | None:
    m = en_salient_noun(text, mentions(text, "en"))
    return m.text if m is not None else None


def test_the_passage_subject_is_the_noun_it_names_most_often() -> None:
    assert salient(COMPOST) == "compost pile"


def test_a_surname_counts_for_the_full_name() -> None:
    # "Okafor" twice and "Senator Maria Okafor" once: one person named three times, written as the passage writes
    # her most often (neither form alone is named three times)
    assert salient(SENATOR) == "Okafor"


def test_a_short_answer_or_a_passage_without_a_repeated_noun_has_no_subject() -> None:
    assert salient("The compost pile, the compost pile, the compost pile.") is None  # a short answer
    varied = ("The museum opened in 1901 and holds paintings, sculpture and furniture from four centuries. Visitors "
              "can join a guided tour on weekends, and the cafe on the top floor looks out over the river and the "
              "old harbour, where ferries leave for the islands.")
    assert salient(varied) is None


def test_times_and_units_are_no_subject() -> None:
    text = ("Soak the beans for eight hours. After eight hours, drain them and cook them for two hours. Two hours "
            "is enough for most kinds; older beans may need another hour, and salt is best added at the end of "
            "cooking so that the skins stay soft.")
    assert salient(text) not in ("hours", "eight hours", "two hours", "hour")


def rewrite(history: list[Message], query: str) -> str:
    return RuleRewriter().rewrite(history, query).rewritten


def test_a_pronoun_after_a_passage_that_left_the_focus_behind_takes_the_passage_subject() -> None:
    h = [Message("user", "I live in a small flat with a balcony. Where do I start?"), Message("assistant", COMPOST)]
    out = rewrite(h, "How often should I water it?")
    assert "compost pile" in out and "balcony" not in out


def test_a_passage_that_still_names_the_focus_keeps_it() -> None:
    passage = COMPOST.replace("Many people start composting", "In a small flat, many people start composting")
    h = [Message("user", "I live in a small flat with a balcony. Where do I start?"), Message("assistant", passage)]
    t = en.turn("How often should I water it?", h)
    before = t.ent
    en.passage_subject(t)
    assert t.ent == before


def test_a_short_answer_never_moves_the_focus() -> None:
    h = [Message("user", "What is the Okavango Delta?"), Message("assistant", "A large inland delta in Botswana.")]
    assert rewrite(h, "When is it flooded?") == "When is the Okavango Delta flooded?"


def test_a_query_that_names_the_passage_subject_is_left_to_the_other_rules() -> None:
    h = [Message("user", "I live in a small flat with a balcony. Where do I start?"), Message("assistant", COMPOST)]
    t = en.turn("Does the compost pile attract flies?", h)
    before = t.ent
    en.passage_subject(t)
    assert t.ent == before


# --- a capitalised word opening a sentence on a common noun phrase ("Border collies are …") ------------------


def texts(text: str) -> list[tuple[str, bool]]:
    return [(m.text, m.proper) for m in mentions(text, "en")]


def test_a_sentence_initial_capital_on_a_common_noun_is_one_common_phrase() -> None:
    assert texts("Border collies learn new commands fast.")[0] == ("Border collies", False)
    # "usually" is no noun of the phrase
    assert texts("Most dogs nap. Diagonal cracks usually mean settling.")[1] == ("Diagonal cracks", False)


def test_a_name_the_text_capitalises_inside_a_sentence_stays_a_name() -> None:
    assert ("Google", True) in texts("Google search is down again today. I use Google daily.")
    assert texts("Thyssen museum?")[0] == ("Thyssen", True)  # a bare phrase: a name as often as not
    assert texts("Michael Jordan played basketball.")[0] == ("Michael Jordan", True)
    assert texts("NASA budgets grew.")[0][1] is True  # an abbreviation is a name


def test_no_half_name_is_written_for_a_pronoun() -> None:
    h = [Message("user", "What do cracks in a basement wall mean?"),
         Message("assistant", "Diagonal cracks usually mean the foundation has settled.")]
    out = rewrite(h, "Can they be repaired?")
    assert "Diagonal be" not in out and out != "Can they be repaired?"


# --- a name's possessive pronoun as "the <noun phrase> of <name>" ------------------------------------------


def test_a_names_possessive_becomes_the_noun_phrase_of_the_name() -> None:
    h = [Message("user", "Tell me about Golden Wok."), Message("assistant", "A Chinese restaurant in the north.")]
    want = "What is the address and phone number of Golden Wok?"
    assert rewrite(h, "What is their address and phone number?") == want
    assert rewrite(h, "Can I have their postcode, please?") == "Can I have the postcode of Golden Wok, please?"


def test_a_common_noun_owner_keeps_the_possessive() -> None:
    h = [Message("user", "What is a virtual machine?"),
         Message("assistant", "It is software that emulates a computer.")]
    assert rewrite(h, "What are its advantages?") == "What are virtual machine's advantages?"


def test_a_noun_phrase_that_goes_on_keeps_the_possessive() -> None:
    assert compose.possessive_of("Did their album sell well?", 4, 9, "Fleet Foxes") is None
    assert compose.possessive_of("Is their food good?", 3, 8, "Cote") is None
    assert compose.possessive_of("Their menu?", 0, 5, "Cote") == "The menu of Cote?"


# --- "their" after an answer that opens on a name it brought in ------------------------------------------


def test_their_after_an_answer_opening_on_a_new_name_is_that_names() -> None:
    h = [Message("user", "How about a Korean restaurant?"),
         Message("assistant", "Little Seoul is an expensive Korean restaurant in the centre.")]
    assert rewrite(h, "What is their phone number?") == "What is the phone number of Little Seoul?"


def test_a_name_the_user_gave_or_a_sentence_opener_is_no_new_subject() -> None:
    h = [Message("user", "Is Little Seoul any good?"), Message("assistant", "Little Seoul is popular.")]
    t = en.turn("What is their phone number?", h)
    before = t.ent
    en.answer_subject(t)
    assert t.ent == before
    h2 = [Message("user", "Any Korean places?"), Message("assistant", "There is one in the centre.")]
    t2 = en.turn("What are their hours?", h2)
    before2 = t2.ent
    en.answer_subject(t2)
    assert t2.ent == before2


def test_what_about_swaps_the_noun_inside_a_compound_nearest_in_meaning():
    from convsearch import Message, RuleRewriter
    rw = RuleRewriter()
    h = [Message("user", "How long should I roast a whole duck?"), Message("assistant", "About 2 hours at 180°C.")]
    assert rw.rewrite(h, "what about a goose").rewritten == "How long should I roast a whole goose?"
    # the fragment's own head noun is no candidate: "Chinese food" does not replace the food of "international food"
    h = [Message("user", "I am looking for a restaurant in the north that serves international food."),
         Message("assistant", "There are none.")]
    assert "international Chinese" not in rw.rewrite(h, "How about Chinese food?").rewritten


def test_they_is_no_one_definite_thing():
    from convsearch import Message, RuleRewriter
    h = [Message("user", "how warm should the basking spot be for a leopard tortoise"),
         Message("assistant", "Keep the basking spot around 35 degrees, with a cooler end near 24 degrees.")]
    out = RuleRewriter().rewrite(h, "how long do they usually live").rewritten
    assert "leopard tortoise" in out and "basking spot" not in out


# --- review of this session's English rules ---------------------------------------------------------------

def test_review_possessive_of_only_where_the_noun_phrase_ends_the_clause():
    from convsearch import Message, RuleRewriter
    rw = RuleRewriter()
    h = [Message("user", "How about a French restaurant?"), Message("assistant", "Cote is a French restaurant.")]
    assert rw.rewrite(h, "Is their food tasty?").rewritten == "Is Cote's food tasty?"  # a yes/no subject goes on
    assert rw.rewrite(h, "What is their address too?").rewritten == "What is the address of Cote too?"
    assert rw.rewrite(h, "Can you give me their address").rewritten == "Can you give me the address of Cote"


def test_review_answer_subject_is_a_name_and_a_brand_keeps_its_verb_out():
    from convsearch import Message, RuleRewriter
    rw = RuleRewriter()
    north = Message("user", "I want a restaurant in the north.")
    out = rw.rewrite([north, Message("assistant", "The Golden Wok is a Chinese restaurant in the north.")],
                     "What is their phone number?").rewritten
    assert "Golden Wok" in out
    out = rw.rewrite([north, Message("assistant", "Parking is free at the Acorn Guest House.")],
                     "What is their phone number?").rewritten
    assert "of Parking" not in out and "Parking's" not in out
    h = [Message("user", "Any business news?"), Message("assistant", "Coca-Cola sales rose 4% last year.")]
    assert "rose" not in rw.rewrite(h, "Who is its CEO?").rewritten
