"""A proper-noun run a retrieved passage glued from its heading and its text ("Ada Lovelace Augusta Ada King (born
…)") is written into a query as the name the passages go on with ("Ada Lovelace"); full names, the user's own
words, short replies and Chinese names are left as they are."""

from __future__ import annotations

from test_gate import A, U  # the message helpers of the gate tests

from convsearch import RuleRewriter
from convsearch.lang.base import Mention
from convsearch.resolve.passage_name import passage_name

PASSAGE = ("Ada Lovelace Augusta Ada King (born 10 December 1815) was an English mathematician and writer, chiefly "
           "known for her work on Charles Babbage's proposed mechanical general-purpose computer, the Analytical "
           "Engine. Ada Lovelace was the first to recognise that the machine had applications beyond pure "
           "calculation, and she published the first algorithm intended to be carried out by such a machine.")
HISTORY = [U("Who wrote the first computer program?"), A(PASSAGE)]
GLUED = Mention("Ada Lovelace Augusta Ada King", True, "proper", "king")


def test_a_glued_heading_is_cut_to_the_name_the_passage_goes_on_with():
    assert passage_name(GLUED, HISTORY).text == "Ada Lovelace"


def test_the_pronoun_takes_the_short_name():
    out = RuleRewriter().rewrite(HISTORY, "When did she die?").rewritten
    assert out == "When did Ada Lovelace die?"


def test_a_full_name_without_a_repeated_word_stays_whole():
    m = Mention("Augusta Ada King", True, "proper", "king")
    h = [U("Who was Byron's daughter?"), A(PASSAGE.replace("Ada Lovelace Augusta Ada King", "Augusta Ada King"))]
    assert passage_name(m, h) == m


def test_the_users_own_words_stay_whole():
    h = [U("Tell me about Ada Lovelace Augusta Ada King."), A(PASSAGE)]
    assert passage_name(GLUED, h) == GLUED


def test_a_short_reply_is_no_passage():
    h = [U("Who wrote the first computer program?"), A("Ada Lovelace Augusta Ada King; Ada Lovelace for short.")]
    assert passage_name(GLUED, h) == GLUED


def test_chinese_and_missing_names_pass_through():
    zh = Mention("阿达·洛芙莱斯", True, "nr", "阿达·洛芙莱斯")
    assert passage_name(zh, [U("谁写了第一个程序？"), A("阿达·洛芙莱斯" * 30)]) == zh
    assert passage_name(None, HISTORY) is None
