"""Positional references to a listed item ("the third step", "the last one", "第二种")."""

from __future__ import annotations

import pytest

from convsearch import Message, RuleRewriter, needs_rewrite
from convsearch.resolve.ordinal import find_ordinal, list_items, lists_in, resolve_ordinal

U = lambda s: Message("user", s)  # noqa: E731
A = lambda s: Message("assistant", s)  # noqa: E731

HOTELS = A("Hotels near the Piazza Navona include the Hotel Navona, the Eitch Borromini Palazzo, and the Hotel Raphael.")
STEPS = A("Here are the steps: 1. Research your target market. 2. Define your services and prices. "
          "3) Write a business plan: goals, strategies and projections. 4. Register the business.")


def rewrite(history, query):
    return RuleRewriter().rewrite(history, query)


@pytest.mark.parametrize("query,positions", [
    ("Tell me more about the first one.", (1,)),
    ("Can you compare the third and fourth options?", (3, 4)),
    ("Compare the last two options", (-2, -1)),
    ("Which is cheaper, the former?", (1,)),
    ("What does step 2 involve?", (2,)),
])
def test_find_ordinal_positions(query, positions):
    ref = find_ordinal(query, "en")
    assert ref is not None and ref.positions == positions


@pytest.mark.parametrize("query", ["What was the first time you went there?", "Who won the second world war?",
                                   "Tell me about the hotel."])
def test_not_a_positional_reference(query):
    assert find_ordinal(query, "en") is None


def test_numbered_list_items_use_the_title_or_first_clause():
    assert list_items(STEPS.content, "en") == ("Research your target market", "Define your services and prices",
                                               "Write a business plan", "Register the business")


def test_inline_series_of_names():
    assert list_items(HOTELS.content, "en") == ("the Hotel Navona", "the Eitch Borromini Palazzo", "the Hotel Raphael")
    r = rewrite([U("Any hotels near Piazza Navona?"), HOTELS], "Is the last one expensive?")
    assert r.rewritten == "Is the Hotel Raphael expensive?"
    assert needs_rewrite([U("Any hotels near Piazza Navona?"), HOTELS], "Is the last one expensive?").needed


def test_numbered_reference_is_replaced_by_the_item():
    r = rewrite([U("How do I start a business?"), STEPS], "Can you tell me about the third step?")
    assert r.rewritten == "Can you tell me about Write a business plan?"


def test_plain_nouns_answer_only_a_reference_that_names_their_kind():
    a = A("Some treatment technologies, like reverse osmosis and nanofiltration, help with desalination.")
    assert resolve_ordinal("Compare the last two technologies you mentioned.", [a], "en")[2] == \
        "reverse osmosis and nanofiltration"
    b = A("The room has air conditioning, wi-fi, and an elevator.")
    assert resolve_ordinal("Tell me more about the last one.", [b], "en") is None


def test_older_list_only_while_the_latest_answer_is_about_one_of_its_items():
    about_first = A("The Hotel Navona is a small hotel in a historic building.")
    h = [U("Any hotels near Piazza Navona?"), HOTELS, U("Tell me about the first one."), about_first]
    assert rewrite(h, "Tell me more about the last one.").rewritten == "Tell me more about the Hotel Raphael."
    unrelated = A("You can fund a business with loans or investors.")
    h2 = [U("How do I start a business?"), STEPS, U("How do I pay for it?"), unrelated]
    assert resolve_ordinal("Compare the third and fourth options.", h2, "en") is None


def test_zh_series_and_numbered_list():
    a = A("AnySearch 支持关键词检索、向量检索和混合检索三种方式。")
    assert list_items(a.content, "zh") == ("关键词检索", "向量检索", "混合检索")
    assert rewrite([U("AnySearch 支持哪些检索方式？"), a], "第三种怎么收费？").rewritten == "混合检索怎么收费"
    assert rewrite([U("AnySearch 支持哪些检索方式？"), a], "第二种呢？").rewritten == "向量检索"
    b = A("推荐以下几家：1. 海底捞 2. 西贝莜面村 3. 外婆家")
    assert rewrite([U("附近有什么餐厅"), b], "最后一家人均多少？").rewritten == "外婆家人均多少"


def test_no_list_no_rewrite_from_ordinal():
    h = [U("Tell me about Rome."), A("Rome is the capital of Italy.")]
    assert resolve_ordinal("Tell me more about the first one.", h, "en") is None
    assert lists_in("Rome is the capital of Italy.", "en") == ()


def test_plain_nouns_answer_a_reference_named_by_the_question():
    h = [U("What deployment options does NovaDB offer?"),
         A("NovaDB runs as a managed cloud service, on your own Kubernetes with the NovaDB Operator, or as a single binary.")]
    r = rewrite(h, "How do I install the second option?")
    assert r.rewritten == "How do I install my own Kubernetes with the NovaDB Operator?"  # seen from the user's side
    assert rewrite(h, "Is the last option free?").rewritten == "Is a single binary free?"


@pytest.mark.parametrize("query", ["Why do I need a plan in the first place?", "What was the first question I asked?",
                                   "What happens in the first two weeks?", "Is option 0 ok?"])
def test_idioms_and_impossible_positions_are_not_references(query):
    assert resolve_ordinal(query, [U("How do I start?"), STEPS], "en") is None


@pytest.mark.parametrize("query", ["最后一个问题，价格是多少？", "最后一点，怎么部署？", "第0种呢"])
def test_zh_one_last_question_is_not_a_reference(query):
    a = A("AnySearch 支持关键词检索、向量检索和混合检索三种方式。")
    assert resolve_ordinal(query, [a], "zh") is None


def test_zh_series_splits_on_the_conjunction_word_not_inside_a_name():
    assert list_items("推荐你去故宫、颐和园和长城看看。", "zh") == ("故宫", "颐和园", "长城")


def test_long_capitalised_answers_parse_in_bounded_time():
    import time
    t = time.perf_counter()
    for text in ("WORD " * 1400, "Word " * 2500, "Tools such as " + "Word " * 3000 + "."):
        lists_in(text, "en")
    assert time.perf_counter() - t < 0.5  # was seconds with a backtracking pattern


def test_bracketed_descriptions_are_no_part_of_the_series():
    from convsearch.resolve.ordinal import lists_in
    zh = "可以试试这三种：白茶（清淡，适合夏天、下午喝）、红茶（温和，冬天喝暖胃）、普洱（耐泡、可以存放）。"
    assert lists_in(zh, "zh")[0][0] == ("白茶", "红茶", "普洱")
    en = ("Hotels near the Piazza Navona include the Hotel Navona (cheap, central), the Eitch Borromini Palazzo "
          "(a rooftop bar, quiet rooms), and the Hotel Raphael.")
    assert lists_in(en, "en")[0][0] == ("the Hotel Navona", "the Eitch Borromini Palazzo", "the Hotel Raphael")
