"""Shapes of a query that the gate, the rule steps and the rewriter all read: a social turn, the courtesy words
around a request (set aside, then put back), how many things a question names, and whether it names a thing of its
own after a passage."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .. import lexicon as lx
from ..lang.base import Mention
from ..lang.en.markers import EN_AND_FRAGMENT_MAX, EN_CLAUSE_WORDS, EN_ELLIPSIS_RE
from ..lang.timeref import is_time_phrase
from ..lang.zh.markers import ZH_QUESTION_RE
from ..lang.zh.mentions import zh_common_person
from ..text import detect_lang, words
from ..types import Message
from .passage_name import passage_history

SOCIAL_RE = re.compile(r"\b(thank(s| you)|goodbye|bye|that'?s all|have a (good|nice|great) (day|one|night))\b|"
                        r"谢谢|多谢|再见|拜拜|辛苦了", re.IGNORECASE)


def is_social(query: str) -> bool:
    """Thanks, goodbyes and sign-offs with nothing else in them: a turn that closes the exchange rather than
    asks for anything ("Thank you, that's all I need" yes; "pick the quickest route, thank you" no)."""
    if not SOCIAL_RE.search(query):
        return False
    if "?" in query and detect_lang(query) == "en":  # "Thanks! What else is there?" asks for more
        return False
    rest = SOCIAL_RE.sub(" ", query)
    return not any(w not in lx.STOP_EN and w not in lx.STOP_ZH and w not in lx.ZH_INTERJECTIONS
                   and w not in _SOCIAL_WORDS for w in words(rest))


_SOCIAL_WORDS = frozenset({"no", "yes", "ok", "okay", "great", "perfect", "cheers", "goodbye", "bye", "day", "good",
                           "nice", "awesome", "cool", "wonderful", "excellent", "好的", "不用了", "没有了", "好"})


@lru_cache(maxsize=4096)  # the gate, the rules and the gate they call read the same query
def asked_form(query: str, lang: str) -> str:
    """The form of a query the gate and the rules read: a wh-word's 's typed without its apostrophe is spelt
    out ("whats" → "what's"), a courtesy or discourse opener is set aside ("请问那广州呢？"
    → "那广州呢？", "hey, what about DynamoDB?" → "what about DynamoDB?"; the rules put it back), and an English
    follow-up opening with
    and / what about / how about … is a question whether or not its question mark was typed.

    >>> asked_form("and on Windows", "en"), asked_form("and on Windows?", "en"), asked_form("hard boiled", "en")
    ('and on Windows?', 'and on Windows?', 'hard boiled')
    >>> asked_form("请问那广州呢？", "zh"), asked_form("嗯，有什么副作用", "zh"), asked_form("嗯嗯", "zh")
    ('那广州呢？', '有什么副作用', '嗯嗯')
    """
    query = split_opener(query, lang)[1]
    if lang == "en":
        query = _EN_WH_S_RE.sub(r"\1's", query)  # "whats the fee" is "what's the fee"
        m = EN_ELLIPSIS_RE.match(query)
        rest = query[m.end():].split() if m else []
        if m and query.rstrip()[-1:].isalnum() and len(rest) <= EN_AND_FRAGMENT_MAX and not any(
                w.lower().strip(",.") in EN_CLAUSE_WORDS or "'" in w for w in rest):
            return query.rstrip() + "?"  # not "And I need a taxi too", "and that's all": statements
    return query


_EN_WH_S_RE = re.compile(r"\b(what|how|where|who|when|why)s\b(?=\s)", re.IGNORECASE)


@lru_cache(maxsize=4096)
def split_opener(query: str, lang: str) -> tuple[str, str, str]:
    """The query's courtesy or discourse openers, the rest, and a courtesy closer taken out of the rest (each
    empty when there is none, or when nothing else is left). A closer before the final mark comes out of the
    rest; one after a finished sentence ("… it? Thanks!") keeps its own marks.

    >>> split_opener("Ok, call her please?", "en"), split_opener("okay", "en")
    (('Ok, ', 'call her?', ' please'), ('', 'okay', ''))
    >>> split_opener("请问有什么副作用啊？", "zh"), split_opener("How do I update it? Thanks!", "en")
    (('请问', '有什么副作用？', '啊'), ('', 'How do I update it?', ' Thanks!'))
    """
    opener_re, closer_re = _OPENER_RE.get(lang), _CLOSER_RE.get(lang)
    if opener_re is None or closer_re is None:
        return "", query, ""
    m = opener_re.match(query)
    opener, rest = ("", query) if m is None or m.end() >= len(query.rstrip()) else (query[:m.end()], query[m.end():])
    c = closer_re.search(rest)
    if c is None or len(rest[:c.start()].split()) < (2 if lang == "en" else 1) or is_social(rest) or (
            lang == "zh" and not ZH_QUESTION_RE.search(rest[:c.start()])):
        return opener, rest, ""  # ("That is all. Thank you." is a sign-off, "Yes please!" a reply; a Chinese reply's
        # 啊 stays: "可以啊")
    core = rest[:c.start()]
    if core.rstrip()[-1:] in _FINAL_MARKS:
        return opener, core, rest[c.start():].rstrip()
    return opener, core + c.group(2), c.group(1)


def with_courtesy(query: str, rewritten: str, lang: str) -> str:
    """Put the courtesy words ``split_opener`` set aside back around a rewrite of the rest.

    >>> with_courtesy("Ok, call her please?", "call Jen?", "en"), with_courtesy("Update it? Thanks!", "Update X?", "en")
    ('Ok, call Jen please?', 'Update X? Thanks!')
    """
    opener, _, closer = split_opener(query, lang)
    first = rewritten.split(maxsplit=1)[0].lower() if rewritten.strip() else ""
    if opener and lang == "en" and rewritten[:1].isupper() and (first in lx.EN_WH or first in lx.EN_AUX) \
            and opener.rstrip()[-1:] not in ".!?":  # ("Okay. Did …" keeps its capital: a sentence of its own)
        rewritten = rewritten[0].lower() + rewritten[1:]  # "hey, how do I …", not "hey, How do I …"
    if closer and closer[-1] in _FINAL_MARKS:
        rewritten += closer  # "… Thanks!" after a finished sentence
    elif closer:
        core = rewritten.rstrip(_FINAL_MARKS)
        rewritten = core + closer + rewritten[len(core):]
    return opener + rewritten


# Openers with nothing to search for in them, one or several ("ok, so hey, …"): a courtesy (请问, 想问一下, 我想知道;
# "can you tell me" before the question it wraps) needs no separator (请问下 / 问下 not before 午 / 面 / 雨: 下午);
# an interjection (嗯, ok, hey) needs a comma, or a space before a question word, so that "okay", "Hello Kitty toys?"
# and "Hi res audio?" stay whole.
_EN_ASKS_NEXT = r"(?=(?:what|who|whom|whose|when|where|why|how|which|and|is|are|was|were|do|does|did|can|could|" \
                r"will|would|should|any|tell|so|ok|okay|hey|oh)\b)"
_OPENER_RE = {
    "zh": re.compile(r"^(?:\s*(?:(?:那)?(?:请问一下|请问下(?![午面雨])|请问|想问一下|想问下(?![午面雨])|问一下|"
                     r"问下(?![午面雨])|麻烦问一下|麻烦问下(?![午面雨])|我?想知道|我想问问|我想问一下|请告诉我)[，,：:\s]*|"
                     r"\s*(?:嗯嗯|嗯|哦|噢|额|呃|好的|好吧|ok|OK)\s*[，,！!。.~～]+\s*))+"),
    "en": re.compile(r"^(?:\s*(?:(?:hey|hi|hello|ok|okay|oh|ah|hmm+|um+|uh+|alright)\b(?:\s*[,!.]+\s*|\s+"
                     + _EN_ASKS_NEXT
                     + r")|(?:(?:can|could|would)\s+you\s+(?:please\s+)?tell\s+me|do\s+you\s+know|i\s+wonder|"
                     r"i(?:'d|\s+would)\s+like\s+to\s+know|i\s+want(?:ed)?\s+to\s+know)\s+"
                     r"(?=(?:what|who|when|where|why|how|which|if|whether)\b)|"
                     r"(?:well|great|cool|nice|thanks|thank you|got it|i see)\s*[,!.]+\s*))+", re.IGNORECASE),
}
_FINAL_MARKS = "?？!！.。 "
# A closer: "please" (not after "say"), "thanks" after a comma or a finished sentence (not "the opposite of
# thanks"); a Chinese question's mood particle 啊 / 呀 (not 呢 or 吗, which ask)
_CLOSER_RE = {
    "zh": re.compile(r"([啊呀]+)(\s*[？?！!。.~～]*\s*)$"),
    "en": re.compile(r"((?:,\s*|(?<=[?!.])\s*|(?<!\bsay)\s+)(?:please|pls)|(?:,\s*|(?<=[?!.])\s*)(?:thanks|thank you))"
                     r"(\s*[?!.]*\s*)$", re.IGNORECASE),
}


def own_thing_over_passage(history: Sequence[Message], ms: Sequence[Mention], lang: str) -> bool:
    """After a passage, does the question name a specific thing of its own (a compound noun phrase, most often one
    the passage brought up: "What does the slow blink mean?" after a paragraph on cat behaviour)? Then it asks
    about that thing; adding the conversation's subject ("… in cats") adds words the user did not leave out."""
    return passage_history(history) and any(compound(m, lang) for m in ms)


def compound(m: Mention, lang: str) -> bool:
    """A specific thing of the query's own: a common noun phrase of two or more words ("the slow blink", "visible
    signs", "冷冻疗法"), not a single or relational noun ("the doctors", "the types", "医生")."""
    if m.proper or m.relational:
        return False
    return len(m.text) >= 4 if lang == "zh" else len(m.text.split()) >= 2


_TIME_UNITS = lx.EN_TIME_UNITS  # "this year": the mention is "year"


def things_asked(ms: Sequence[Mention]) -> int:
    """How many things a question names: its nouns, not counting relational ones (价格, types) or times ("this
    year", 今年: ``lang.timeref``)."""
    return sum(not m.relational and not is_time_phrase(m.text) and m.text.lower() not in _TIME_UNITS
               and not zh_common_person(m) for m in ms)


def shares_word(q: str, phrase: str) -> bool:
    """Does ``q`` share a content word with ``phrase``?"""
    want = {w for w in words(phrase) if w not in lx.STOP_EN}
    return bool(want & set(words(q)))
