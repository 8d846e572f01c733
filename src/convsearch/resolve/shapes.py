"""Shapes of a query that the gate, the rule steps and the rewriter all read: a social turn, the courtesy words
around a request (set aside, then put back), how many things a question names, and whether it names a thing of its
own after a passage."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import lexicon as lx
from ..lang import detect, reading
from ..lang.base import Mention
from ..lang.timeref import is_time_phrase
from ..lang.zh.mentions import zh_common_person
from ..text import words
from ..types import Message
from .passage_name import passage_history

SOCIAL_RE = re.compile(r"\b(thank(s| you)|goodbye|bye|that'?s all|have a (good|nice|great) (day|one|night))\b|"
                        r"谢谢|多谢|再见|拜拜|辛苦了", re.IGNORECASE)


def is_social(query: str) -> bool:
    """Thanks, goodbyes and sign-offs with nothing else in them: a turn that closes the exchange rather than
    asks for anything ("Thank you, that's all I need" yes; "pick the quickest route, thank you" no)."""
    if not SOCIAL_RE.search(query):
        return False
    # "Thanks! What else is there?" asks for more (a question mark after thanks asks in English, not in Chinese)
    if "?" in query and detect(query).mark_asks:
        return False
    rest = SOCIAL_RE.sub(" ", query)
    return not any(w not in lx.STOP_EN and w not in lx.STOP_ZH and w not in lx.ZH_INTERJECTIONS
                   and w not in _SOCIAL_WORDS for w in words(rest))


_SOCIAL_WORDS = frozenset({"no", "yes", "ok", "okay", "great", "perfect", "cheers", "goodbye", "bye", "day", "good",
                           "nice", "awesome", "cool", "wonderful", "excellent", "好的", "不用了", "没有了", "好"})


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
    c = reading(lang).courtesy
    return c.asked(query) if c is not None and c.asked is not None else query


def split_opener(query: str, lang: str) -> tuple[str, str, str]:
    """The query's courtesy or discourse openers, the rest, and a courtesy closer taken out of the rest (each
    empty when there is none, or when nothing else is left). A closer before the final mark comes out of the
    rest; one after a finished sentence ("… it? Thanks!") keeps its own marks.

    >>> split_opener("Ok, call her please?", "en"), split_opener("okay", "en")
    (('Ok, ', 'call her?', ' please'), ('', 'okay', ''))
    >>> split_opener("请问有什么副作用啊？", "zh"), split_opener("How do I update it? Thanks!", "en")
    (('请问', '有什么副作用？', '啊'), ('', 'How do I update it?', ' Thanks!'))
    """
    courtesy = reading(lang).courtesy
    if courtesy is None:
        return "", query, ""
    m = courtesy.opener.match(query)
    opener, rest = ("", query) if m is None or m.end() >= len(query.rstrip()) else (query[:m.end()], query[m.end():])
    c = courtesy.closer.search(rest)
    if c is None or len(rest[:c.start()].split()) < courtesy.closer_after or is_social(rest) or (
            courtesy.closer_asks is not None and not courtesy.closer_asks(rest[:c.start()])):
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
    courtesy = reading(lang).courtesy
    if opener and courtesy is not None and courtesy.lower_after_opener and rewritten[:1].isupper() \
            and (first in lx.EN_WH or first in lx.EN_AUX) \
            and opener.rstrip()[-1:] not in ".!?":  # ("Okay. Did …" keeps its capital: a sentence of its own)
        rewritten = rewritten[0].lower() + rewritten[1:]  # "hey, how do I …", not "hey, How do I …"
    if closer and closer[-1] in _FINAL_MARKS:
        rewritten += closer  # "… Thanks!" after a finished sentence
    elif closer:
        core = rewritten.rstrip(_FINAL_MARKS)
        rewritten = core + closer + rewritten[len(core):]
    return opener + rewritten


_FINAL_MARKS = "?？!！.。 "


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
    return len(m.text) >= 4 if reading(lang).unspaced else len(m.text.split()) >= 2


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
