"""The follow-up gate ``needs_rewrite``: zh and en markers, short queries, no content noun, standalone queries."""

from __future__ import annotations

import pytest

from convsearch import Decision, DecisionKind, Message, RuleRewriter, needs_rewrite


def U(s: str) -> Message:
    return Message("user", s)


def A(s: str) -> Message:
    return Message("assistant", s)


ZH_HISTORY = [U("AnySearch 和 NovaDB 哪个检索更快？"), A("AnySearch 在小索引上更快。")]
EN_HISTORY = [U("Tell me about AnySearch and NovaDB."), A("Both are search engines.")]


# --- no history, no topic: never -------------------------------------------------------------------

@pytest.mark.parametrize("query", ["价格呢？", "它多少钱？", "那番禺呢？", "what about NovaDB?", "Is it free?", "Why?"])
def test_no_history_and_no_topic_never_rewrites(query):
    d = needs_rewrite([], query)
    assert d == Decision(False, "no history and no session topic", 1.0, DecisionKind.NO_CONTEXT)


def test_no_history_but_a_topic_can_rewrite():
    assert needs_rewrite([], "价格是多少", topic="AnySearch").needed is True
    assert needs_rewrite([], "How much does it cost?", topic="AnySearch").needed is True


# --- zh markers --------------------------------------------------------------------------------------

@pytest.mark.parametrize("query", [
    "它支持中文吗？",
    "它们都开源吗？",
    "这个怎么部署？",
    "该产品如何部署？",
    "其部署方式有哪些？",
    "前者怎么收费？",
    "后者怎么收费？",
    "上面提到的产品怎么收费？",
])
def test_zh_pronouns_and_demonstratives(query):
    d = needs_rewrite(ZH_HISTORY, query)
    assert d.needed is True
    assert d.reason == "pronoun or demonstrative"
    assert d.confidence >= 0.8


@pytest.mark.parametrize("query", ["这款怎么收费？", "这款产品支持中文吗？"])
def test_zh_zhe_kuan_marker(query):
    d = needs_rewrite([U("AnySearch 支持哪些检索方式？")], query)
    assert d.needed is True
    assert d.reason == "pronoun or demonstrative"


@pytest.mark.parametrize("query", ["价格呢？", "部署呢", "那番禺呢？", "免费额度呢~"])
def test_zh_ellipsis_ne(query):
    d = needs_rewrite(ZH_HISTORY, query)
    assert d.needed is True
    assert d.reason == "ellipsis: 'X呢'"


@pytest.mark.parametrize("query", ["那审批需要多久？", "那么部署要多久？", "还有别的检索方式吗？", "另外，怎么部署？"])
def test_zh_leading_follow_up_markers(query):
    d = needs_rewrite(ZH_HISTORY, query)
    assert d.needed is True
    assert d.reason == "leading follow-up marker"


@pytest.mark.parametrize("query", ["价格？", "怎么样？", "多少钱？"])
def test_zh_very_short(query):
    d = needs_rewrite(ZH_HISTORY, query)
    assert d.needed is True
    assert d.reason == "very short query"


# --- en markers --------------------------------------------------------------------------------------

@pytest.mark.parametrize("query", [
    "Is it open source?",
    "What are its limits?",
    "Are they open source?",
    "What is their license?",
    "How much is that?",
    "What did he build?",
    "Where does she live?",
    "Can I install this?",
])
def test_en_pronouns(query):
    d = needs_rewrite(EN_HISTORY, query)
    assert d.needed is True
    assert d.reason == "pronoun or demonstrative"


@pytest.mark.parametrize("query", ["Is this fast?", "Is that free?", "How does this compare?"])
def test_en_this_that_as_pronoun_before_adjective(query):
    assert needs_rewrite(EN_HISTORY, query).needed is True


@pytest.mark.parametrize("query", ["What about NovaDB?", "what about the price?", "How about the free plan?",
                                   "and NovaDB?", "And the license?", "So, what about Lumen CRM?"])
def test_en_ellipsis(query):
    d = needs_rewrite(EN_HISTORY, query)
    assert d.needed is True
    assert d.reason == "ellipsis: 'what about X' / 'and X'"


@pytest.mark.parametrize("query", ["Why?", "how much", "Tell more"])
def test_en_very_short(query):
    d = needs_rewrite(EN_HISTORY, query)
    assert d.needed is True
    assert d.reason in ("very short query", "no content noun")


@pytest.mark.parametrize("query", ["Price?", "Cost?"])
def test_en_capitalised_single_word_is_short_not_proper(query):
    d = needs_rewrite(EN_HISTORY, query)
    assert d.needed is True


@pytest.mark.parametrize("history,query", [
    (EN_HISTORY, "Can you explain more?"),
    (EN_HISTORY, "Tell me more."),
    (ZH_HISTORY, "能不能再详细说说"),
    (ZH_HISTORY, "可以再详细介绍一下吗"),
])
def test_no_content_noun_rewrites(history, query):
    d = needs_rewrite(history, query)
    assert d.needed is True
    assert d.reason == "no content noun"


@pytest.mark.parametrize("history,query", [(ZH_HISTORY, "有什么区别吗？"), (EN_HISTORY, "What are the main differences?")])
def test_only_relational_nouns_rewrite(history, query):
    d = needs_rewrite(history, query)
    assert d.needed is True
    assert d.reason.startswith("only relational nouns")


def test_ellipsis_not_fooled_by_words_that_start_with_and():
    # "Android" starts with "and" but is no ellipsis frame
    d = needs_rewrite(EN_HISTORY, "Android phones with the best battery life in 2024")
    assert d.needed is False


# --- standalone --------------------------------------------------------------------------------------

STANDALONE = [
    (ZH_HISTORY, "如何在 Linux 服务器上部署 Elasticsearch 集群？"),
    (ZH_HISTORY, "北京今天天气怎么样？"),
    (ZH_HISTORY, "公司的报销流程是什么？"),
    (EN_HISTORY, "What is the capital of France?"),
    (EN_HISTORY, "Where is the Eiffel Tower located?"),
    (EN_HISTORY, "How do I reset my password in the admin console?"),
    (EN_HISTORY, "  What is the capital of France?  "),
]


@pytest.mark.parametrize("history,query", STANDALONE)
def test_standalone_question_is_not_rewritten(history, query):
    d = needs_rewrite(history, query)
    assert d.needed is False
    assert d.reason in ("names its own entity", "standalone")


@pytest.mark.parametrize("history,query", STANDALONE)
def test_standalone_question_comes_back_byte_identical(history, query):
    r = RuleRewriter().rewrite(history, query)
    assert r.rewritten == query
    assert r.rewritten.encode("utf-8") == query.encode("utf-8")
    assert r.original == query
    assert r.changed is False and r.fell_back is False
    assert r.reason.startswith("gate: ")


def test_query_naming_the_session_topic_is_standalone():
    d = needs_rewrite([U("hello")], "price of anysearch plans", topic="AnySearch")
    assert d == Decision(False, "names the session topic", 0.7, DecisionKind.TOPIC)


def test_query_not_naming_the_session_topic_rewrites_with_low_confidence():
    d = needs_rewrite([U("hello")], "How much are the plans per month?", topic="AnySearch")
    assert d.needed is True
    assert d.reason == "does not name the session topic"
    assert d.confidence < 0.6


def test_decision_is_frozen():
    d = needs_rewrite(EN_HISTORY, "Is it free?")
    with pytest.raises(AttributeError):
        d.needed = False  # type: ignore[misc]


def test_zh_ne_is_an_ellipsis_only_after_a_short_verbless_phrase():
    from convsearch.lang.zh.markers import zh_ellipsis
    assert zh_ellipsis("价格呢？") and zh_ellipsis("那番禺呢") and zh_ellipsis("那如果是年假呢？")
    assert not zh_ellipsis("你觉得呢")  # a modal particle after a verb
    assert not zh_ellipsis("我们正在讨论这个方案的细节呢")
    h = [Message("user", "明天去爬山吗"), Message("assistant", "好呀")]
    assert not needs_rewrite(h, "那会不会下雨呢").reason.startswith("ellipsis")


def test_zh_pronoun_after_a_person_named_in_the_query_is_no_follow_up():
    h = [Message("user", "周末去爬山吗"), Message("assistant", "香山不错")]
    assert not needs_rewrite(h, "我妈说她周末要加班").needed  # 她 is 我妈
    assert needs_rewrite(h, "他们说周末人多").needed  # nobody named before 他们
    # 它 is not a person, so the person check does not apply; 它 here is 香山 (named in the same query), which the
    # gate does not see yet: a known limitation, pinned so a change to it is noticed
    assert needs_rewrite(h, "每次去香山它都很堵").needed


def test_zh_question_without_the_product_the_user_asked_about_leans_on_it():
    h = [Message("user", "AnySearch 支持哪些检索方式？"), Message("assistant", "支持三种检索方式。"),
         Message("user", "价格呢？"), Message("assistant", "标准版每月 499 元。")]
    d = needs_rewrite(h, "有免费额度吗？")
    assert d.needed and d.confidence == 0.5
    assert RuleRewriter().rewrite(h, "有免费额度吗？").rewritten == "AnySearch 有免费额度吗"
    assert not needs_rewrite(h, "深圳今天天气怎么样？").needed  # names its own place
    chat = [Message("user", "今天好累"), Message("assistant", "早点休息")]
    assert not needs_rewrite(chat, "你晚饭吃了吗？").needed  # no named focus: chit-chat stays as typed


# --- the verdict as data, and one gate per turn -------------------------------------------------------------

@pytest.mark.parametrize("history,query,kind", [
    (["AnySearch 支持哪些检索方式？"], "价格呢？", DecisionKind.ELLIPSIS),
    (["AnySearch 支持哪些检索方式？"], "那怎么部署", DecisionKind.LEADING),
    (["Who founded SpaceX?"], "what about Tesla?", DecisionKind.ELLIPSIS),
    (["Who founded SpaceX?"], "When did it first launch a rocket?", DecisionKind.PRONOUN),
    (["Who founded SpaceX?"], "Thanks, goodbye!", DecisionKind.SOCIAL),
])
def test_decision_kind_says_which_check_decided(history, query, kind):
    d = needs_rewrite([Message("user", h) for h in history], query)
    assert d.kind is kind
    assert d.is_frame == (kind in (DecisionKind.ELLIPSIS, DecisionKind.LEADING))


@pytest.mark.parametrize("rewriter", ["rules", "auto"])
def test_a_turn_gates_exactly_once(monkeypatch, rewriter):
    """The pipeline hands its analysis and Decision to the rewriter, which does not ask the gate again."""
    from convsearch import InMemoryBackend, Settings, search_with_context
    from convsearch.resolve import gate

    calls = []
    real = gate.decide

    def counted(a):
        calls.append(a.query)
        return real(a)

    for where in ("convsearch.pipeline", "convsearch.resolve.gate", "convsearch.resolve.rules"):
        monkeypatch.setattr(f"{where}.decide", counted)
    r = search_with_context("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}],
                            backend=InMemoryBackend(), settings=Settings(rewriter=rewriter))
    assert r.standalone_query != "价格呢？"
    assert calls == ["价格呢？"]


SONY = [Message("user", "Should I buy the Sony WH-1000XM5?"),
        Message("assistant", "The Sony WH-1000XM5 has class-leading noise cancelling and 30 hours of battery.")]


@pytest.mark.parametrize("query", ["A heat pump seems right. How much does it cost?",
                                   "What is mortadella and where is it from?",
                                   "我想买一台空气炸锅，它耗电吗？"])
def test_it_whose_antecedent_the_query_brings_in_needs_nothing(query):
    assert not needs_rewrite(SONY, query).needed


@pytest.mark.parametrize("query", ["The case looks nice. Is it waterproof?",
                                   "The price seems high. Is it negotiable?"])
def test_a_definite_noun_points_back_so_it_still_needs_the_conversation(query):
    """'the case' is the Sony's case: a definite article refers back, it brings nothing in."""
    assert needs_rewrite(SONY, query).needed
