"""The faithfulness guard tokenises only the parts that can hold an added word, and answers as if it read them all."""

from __future__ import annotations

import importlib

from hypothesis import given, settings
from hypothesis import strategies as st

from convsearch import lexicon as lx
from convsearch.resolve.guard import content_words, unfaithful_words
from convsearch.text import is_cjk, stem, words
from convsearch.types import Message

guard = importlib.import_module("convsearch.resolve.guard")


def every_part(rewritten: str, query: str, history: list[Message], topic: str | None = None) -> set[str]:
    """The guard's definition read literally: every part tokenised (the code before parts were skipped)."""
    added = content_words(rewritten) - content_words(query)
    if not added:
        return set()
    parts = [query, topic or "", *(m.content for m in history)]
    known = set().union(*map(content_words, parts))
    lowered = " ".join(parts).lower()
    bad = {w for w in added if w not in known and not (is_cjk(w) and guard._known_cjk(w, lowered))}
    if any(not is_cjk(w) for w in bad):
        stems = {stem(k) for k in words(lowered) if not is_cjk(k)}
        bad = {w for w in bad if is_cjk(w) or stem(lx.EN_SINGULAR_OF.get(w, w)) not in stems}
    return bad


def test_a_final_sigma_word_is_found_in_a_text_whose_lower_case_spells_it_otherwise():
    # "ΑΣ.Α" lower-cases to "ασ.α" (Σ before a letter), its word "ΑΣ" to "ας": not a substring, still a word of it
    assert "ας" not in "ΑΣ.Α".lower() and "ας" in content_words("ΑΣ.Α")
    assert unfaithful_words("ΑΣ", "?", [Message("user", "ΑΣ.Α")]) == set()


def test_a_possessive_and_a_longer_word_holding_the_added_one():
    h = [Message("user", "Is Zappa's band touring?"), Message("assistant", "Every category of fan goes.")]
    assert unfaithful_words("When did Zappa tour?", "When did he tour?", h) == set()
    assert unfaithful_words("When did the cat tour?", "When did it tour?", h) == {"cat"}  # "category" is no "cat"


def test_only_parts_that_can_hold_an_added_word_are_tokenised(monkeypatch):
    read: list[str] = []
    real = guard._content_words_cached

    def spy(text: str) -> tuple[str, ...]:
        read.append(text)
        return real(text)

    monkeypatch.setattr(guard, "_content_words_cached", spy)
    h = [Message("user", "Who founded SpaceX?"), Message("assistant", "Elon Musk founded it in 2002."),
         Message("user", "小米汽车的续航呢？")]
    assert unfaithful_words("When did SpaceX launch?", "When did it launch?", h) == set()
    assert read == ["Who founded SpaceX?"]  # not the query, the empty topic, the answer nor the Chinese turn


VOCAB = ["Zappa's", "zappa", "Zappa", "category", "cat", "ΟΔΟΣ", "οδος", "ΑΣ.Α", "ΑΣ", "板泉井水", "板泉", "井水",
         "renewing", "renew", "mice", "mouse", "Tesla", "SpaceX", "the", "of", "价格", "呢", "？", ",", "'s",
         "İstanbul", "istanbul", "ſtar", "star", "Straße", "STRASSE", "iPhone", "iphone"]
texts = st.lists(st.sampled_from(VOCAB), max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(rewritten=texts, query=texts, history=st.lists(texts, max_size=4), topic=st.none() | texts)
def test_the_same_words_as_reading_every_part(rewritten, query, history, topic):
    msgs = [Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(history)]
    assert unfaithful_words(rewritten, query, msgs, topic) == every_part(rewritten, query, msgs, topic)
