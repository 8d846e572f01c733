"""The contract every language pack passes (``lang.base.LanguagePack``), as a pytest base class.

Subclass it, provide a ``pack`` fixture and describe the language with a few texts::

    class TestSpanish(LanguagePackContract):
        samples = ("¿Qué tiempo hace en Sevilla?",)               # texts in the language: claimed >= 0.5
        foreign = ("Who founded SpaceX?",)                         # texts in others: claimed less than those
        named = (("¿Qué tiempo hace en Sevilla?", "Sevilla"),)     # a text and a name its mentions find
        with_pronoun = ("¿Y ella?",)
        without_pronoun = ("¿Qué tiempo hace en Sevilla?",)

        @pytest.fixture
        def pack(self):
            return PACK

What every pack must do:

- say who it is: ``code`` (ISO 639-1: two lower-case letters), ``name``, ``stopwords`` (lower-case words);
- ``claims(text)``: a number in 0..1 for any text; its own samples at least 0.5, and more than the foreign ones
  (``fallback = True``: the pack that reads what no other claims, English, may claim every text alike);
- ``words(text)``: lower-case tokens, none blank; none for an empty text; the same answer twice;
- ``mentions(text)``: ``Mention``s whose text is in the text (the case may differ), the names of ``named`` among them;
- ``has_pronoun(text)``: a bool, True on ``with_pronoun`` and False on ``without_pronoun``;
- never raise on odd input (empty, blank, punctuation, emoji, control characters, another script, a long text);
- the optional parts (``agent``, ``stated``, ``llm``, ``courtesy``, ``ordinal``, ``introduced``, ``focus``,
  ``frame``) None or of their type, ``unspaced`` a bool; the texts' templates use only the placeholders their
  readers fill (``AgentTexts``, ``LLMTexts``: a pack's prompt with another name in braces would fail at its first
  turn), and format with them.

Needs pytest (a dev dependency); nothing else in convsearch imports this module.
"""

from __future__ import annotations

import string
from dataclasses import fields
from typing import Any, ClassVar

import pytest

from ..lang.base import (
    AgentTexts,
    Courtesy,
    FocusForms,
    FrameForms,
    IntroducedForms,
    LanguagePack,
    LLMTexts,
    Mention,
    OrdinalForms,
    StatedForms,
)

ODD_TEXTS = ("", " ", "\n\t", "？？", "??!", "…", "🔥🔥🔥", "它🔥呢？", "\x00\x07", "\u200b", "ﾟ∀ﾟ)ノ",
             "Привет, как дела?", "مرحبا", "12345 67.8%", "AnySearch 支持 BM25 and vectors", "a" * 5000,
             "价格呢？" * 800, "SELECT * FROM t; --", "((([[[{{{", "\\d+(?:x)")

# the placeholders each template's reader fills (the comments of ``lang.base``); ``{{`` is a literal brace
AGENT_FIELDS: dict[str, frozenset[str]] = {
    "system": frozenset({"today", "max_searches", "max_chars", "max_words"}),
    "searched": frozenset({"searched"}),
    "your_query": frozenset({"query"}),
    "repeat_refusal": frozenset({"query", "refs"}),
    "budget_refusal": frozenset({"used"}),
    "final_instruction": frozenset({"reason"}),
    "memory_summary": frozenset({"summary"}),
    "repair": frozenset({"problems", "nums"}),
    "cites_unknown": frozenset({"nums"}),
    "uncited": frozenset({"sentence"}),
}
LLM_FIELDS: dict[str, frozenset[str]] = {
    "rewrite": frozenset({"topic_clause", "topic_line", "max_zh_chars", "max_en_words"}),
    "topic_line": frozenset({"topic"}),
    "reask": frozenset({"why", "cap"}),
    "variants": frozenset({"n", "max_zh_chars", "max_en_words"}),
    "hyde": frozenset({"max_chars"}),
    "summary": frozenset({"max_chars"}),
    "summary_line": frozenset({"summary"}),
    "previous_summary": frozenset({"summary"}),
}
OPTIONAL: dict[str, type] = {"agent": AgentTexts, "stated": StatedForms, "llm": LLMTexts, "courtesy": Courtesy,
                             "ordinal": OrdinalForms, "introduced": IntroducedForms, "focus": FocusForms,
                             "frame": FrameForms}


def placeholders(template: str) -> set[str]:
    """The names a ``str.format`` template fills (``{{`` is no placeholder)."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template)
            if name is not None}


class LanguagePackContract:
    """Subclass with a ``pack`` fixture and the texts that describe the language (see the module docstring)."""

    samples: ClassVar[tuple[str, ...]] = ()
    fallback: ClassVar[bool] = False
    foreign: ClassVar[tuple[str, ...]] = ()
    named: ClassVar[tuple[tuple[str, str], ...]] = ()
    with_pronoun: ClassVar[tuple[str, ...]] = ()
    without_pronoun: ClassVar[tuple[str, ...]] = ()

    @pytest.fixture
    def pack(self) -> LanguagePack:
        raise NotImplementedError("a LanguagePackContract subclass provides the pack fixture")

    def test_the_subclass_describes_its_language(self) -> None:
        assert self.samples and self.foreign and self.named and self.with_pronoun and self.without_pronoun, \
            "set samples, foreign, named, with_pronoun and without_pronoun"

    def test_says_who_it_is(self, pack: LanguagePack) -> None:
        assert isinstance(pack, LanguagePack)
        assert isinstance(pack.code, str) and len(pack.code) == 2 and pack.code.isalpha() and pack.code.islower()
        assert isinstance(pack.name, str) and pack.name.strip()
        assert isinstance(pack.stopwords, frozenset)
        assert all(isinstance(w, str) and w == w.lower() and w.strip() for w in pack.stopwords)

    def test_claims_its_own_texts(self, pack: LanguagePack) -> None:
        own = [pack.claims(t) for t in self.samples]
        assert all(0.0 <= c <= 1.0 for c in own) and min(own) >= 0.5, dict(zip(self.samples, own, strict=True))
        for t in self.foreign:
            c = pack.claims(t)
            assert 0.0 <= c <= 1.0 and (c < min(own) or self.fallback and c <= min(own)), f"{t!r} claimed {c}"

    def test_words(self, pack: LanguagePack) -> None:
        assert list(pack.words("")) == []
        for t in (*self.samples, *self.foreign):
            ws = pack.words(t)
            assert isinstance(ws, list) and ws, t
            assert all(isinstance(w, str) and w.strip() and w == w.lower() for w in ws), ws
            assert pack.words(t) == ws

    def test_mentions(self, pack: LanguagePack) -> None:
        for text, name in self.named:
            ms = pack.mentions(text)
            assert isinstance(ms, tuple) and all(isinstance(m, Mention) for m in ms)
            assert all(m.text and m.text.lower() in text.lower() for m in ms), [m.text for m in ms]
            assert any(name.lower() in m.text.lower() for m in ms), f"{name!r} not among {[m.text for m in ms]}"

    def test_pronouns(self, pack: LanguagePack) -> None:
        for t in self.with_pronoun:
            assert pack.has_pronoun(t) is True, t
        for t in self.without_pronoun:
            assert pack.has_pronoun(t) is False, t

    @pytest.mark.parametrize("text", ODD_TEXTS, ids=lambda t: repr(t[:12]))
    def test_never_raises_on_odd_input(self, pack: LanguagePack, text: str) -> None:
        c = pack.claims(text)
        assert isinstance(c, (int, float)) and 0.0 <= c <= 1.0
        assert all(isinstance(w, str) and w.strip() for w in pack.words(text))
        assert all(isinstance(m, Mention) for m in pack.mentions(text))
        assert isinstance(pack.has_pronoun(text), bool)

    def test_the_optional_parts_have_their_types(self, pack: LanguagePack) -> None:
        assert isinstance(pack.unspaced, bool)
        for name, kind in OPTIONAL.items():
            value = getattr(pack, name)
            assert value is None or isinstance(value, kind), f"{name} is a {type(value).__name__}"

    def test_the_texts_fill_only_what_their_readers_give(self, pack: LanguagePack) -> None:
        for part, allowed in (("agent", AGENT_FIELDS), ("llm", LLM_FIELDS)):
            texts: Any = getattr(pack, part)
            if texts is None:
                continue
            for f in fields(texts):
                template = getattr(texts, f.name)
                assert isinstance(template, str) and template.strip(), f"{part}.{f.name} is empty"
                names = allowed.get(f.name, frozenset())
                extra = placeholders(template) - names
                assert not extra, f"{part}.{f.name} fills {sorted(extra)}: its reader gives only {sorted(names)}"
                template.format(**{n: "x" for n in names})


__all__ = ["AGENT_FIELDS", "LLM_FIELDS", "LanguagePackContract", "ODD_TEXTS", "placeholders"]
