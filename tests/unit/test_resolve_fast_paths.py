"""The resolver's shortcuts give what their plain definitions give: ``entities._ascii_words_span`` is the search of
``\\bw1\\s+w2…\\b`` (case-insensitive) that ``partial_name_span`` compiles otherwise; ``frame._alternation`` (entries
grouped under a branch per first character) matches where one branch per entry matched; ``en_mentions``' capital
test of an ASCII token (``lower()`` changed it) is ``is_cap``."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from convsearch import lexicon as lx
from convsearch.lang.en.mentions import en_mentions, en_tokens, is_cap
from convsearch.resolve.entities import _ascii_words_span, partial_name_span
from convsearch.resolve.frame import _alternation
from convsearch.text import is_cjk

_PIECES = ["paz", "Paz", "divac", "a", "_x", "x_", "it's", "'s", "-", "o-", "'", "Ben", "stein", "1", "9x", "K", "s"]
_SEPS = [" ", "  ", "\t", "\n", "\x1c", "", ",", ".", "_", "-", "'", "!", "\r\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_SEPS)), min_size=1, max_size=8),
       st.lists(st.sampled_from(_PIECES), min_size=1, max_size=3))
def test_ascii_words_span_is_the_regex_search(query_parts: list[tuple[str, str]], words: list[str]) -> None:
    query = "".join(w + sep for w, sep in query_parts)
    m = re.search(r"\b" + r"\s+".join(re.escape(w) for w in words) + r"\b", query, re.IGNORECASE)
    assert _ascii_words_span(query.lower(), [w.lower() for w in words]) == (m.span() if m else None)


def test_partial_name_span_finds_ascii_windows_by_hand() -> None:
    assert partial_name_span("what did divac do in 1989?", "Vlade Divac") == (9, 14)
    assert partial_name_span("Is Mies van der Rohe's chair famous?", "Ludwig Mies van der Rohe") == (3, 20)
    assert partial_name_span("divacs?", "Vlade Divac") is None  # no word boundary after it
    assert partial_name_span("Vlade Divac", "Vlade Divac") is None  # the whole name


def _one_branch_per_entry(entries: tuple[str, ...]) -> str:
    cjk: list[str] = []
    latin: list[str] = []
    for e in sorted(entries, key=len, reverse=True):
        esc = re.escape(e).replace(r"\ ", r"\s+")
        (cjk if is_cjk(e[0]) else latin).append(esc)
    if latin:
        cjk.append(rf"(?<![A-Za-z0-9])(?:{'|'.join(latin)})(?![A-Za-z0-9+#])")
    return "|".join(cjk)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["place", "time_day", "platform", "attribute_en"]), st.data())
def test_grouped_alternation_matches_as_one_branch_per_entry(kind: str, data: st.DataObject) -> None:
    entries = lx.SLOTS[kind]
    glue = st.sampled_from([" ", "", "-", "x", "1", "的", "#", ".", "\u212a", "ſ"])
    piece = st.tuples(glue, st.sampled_from(sorted(entries)), st.booleans())
    pieces = data.draw(st.lists(piece, min_size=1, max_size=5))
    text = "".join(g + (e.upper() if up else e) for g, e, up in pieces)
    grouped = re.compile(_alternation(entries), re.IGNORECASE)
    plain = re.compile(_one_branch_per_entry(entries), re.IGNORECASE)
    assert [m.span() for m in grouped.finditer(text)] == [m.span() for m in plain.finditer(text)]


@given(st.text(alphabet="AbcZz09'’-._ +,.?!İǅK", max_size=40))
def test_ascii_capital_test_is_is_cap(text: str) -> None:
    for tok in en_tokens(text):
        if tok.isascii() and not tok[0].isdigit():
            assert (tok != tok.lower()) == is_cap(tok)


def test_en_mentions_read_capitals_in_ascii_and_other_text() -> None:
    # a non-ASCII text takes the per-token test; an ASCII one with digits asks is_cap of its digit-led tokens
    assert [m.text for m in en_mentions("Is Zürich bigger than Genève?") if m.proper] == ["Zürich", "Genève"]
    assert [(m.text, m.proper) for m in en_mentions("Did the RTX 4090 beat the 5g model?")] == [
        ("RTX 4090", True), ("beat", False), ("5g model", True)]
    assert [m.text for m in en_mentions("Does the iPhone 15 Pro’s camera beat the Pixel?") if m.proper] == [
        "iPhone 15 Pro", "Pixel"]
