"""The name a passage goes on with, for a proper-noun run a retrieved passage produced by gluing its heading to
its text: "Ada Lovelace Augusta Ada King (born …)" (a word repeats). Written into a query such a run adds words
nobody typed; the name the passages also use on its own ("Ada Lovelace") is what a person would write.

>>> from convsearch.types import Message
>>> text = "Ada Lovelace Augusta Ada King (born 1815) was a mathematician. " * 5 + "Ada Lovelace wrote notes."
>>> h = [Message("user", "Who wrote the first program?"), Message("assistant", text)]
>>> passage_name(Mention("Ada Lovelace Augusta Ada King", True, "proper", "king"), h).text
'Ada Lovelace'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..lang import detect
from ..lang.base import Mention
from ..types import Message
from .focus import Focus

# dialog answers run up to ~33 words (CANARD, MuDoCo, CamRest, Alexa), CAsT 2021 / iKAT passages 76-378
PASSAGE_WORDS = 40


def passage_history(history: Sequence[Message]) -> bool:
    """Does the latest answer read as a passage (a retrieved or generated paragraph) rather than a reply?

    >>> passage_history([Message("user", "What is AnySearch?"), Message("assistant", "A search service.")])
    False
    """
    last = next((m.content for m in reversed(history) if m.role == "assistant"), "")
    # in a language written without spaces a word is ~2 characters
    size = len(last) / 2 if detect(last).unspaced else len(last.split())
    return size > PASSAGE_WORDS

_MIN_WORDS = 3  # a two-word name is a name ("Johnny Bench", "Tesla Roadster")


def _count(text: str, phrase: str) -> int:
    return len(re.findall(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", text))


def passage_name(ent: Mention | None, history: Sequence[Message]) -> Mention | None:
    """``ent`` cut to the part of it the passages also name on its own (the longest leading or trailing run of at
    least two words), when ``ent`` is a proper-noun run from a passage (an answer of more than 40 words) that no
    user turn typed and that reads as glued (it repeats a word); else ``ent``."""
    if ent is None or not ent.proper or not ent.text.isascii():
        return ent
    words = ent.text.split()
    if len(words) < _MIN_WORDS:
        return ent
    low = ent.text.lower()
    if any(m.role == "user" and low in m.content.lower() for m in history):
        return ent  # the user's own words
    lows = [w.lower() for w in words]
    if len(set(lows)) == len(lows):
        # "Queen Rania of Jordan", "Gus Van Sant": a full name. (Cutting runs of five words or more too, as
        # "Baseball Card Hall of Fame Johnny Bench", cost iKAT 2023 tune 0.65 restoration F1: not kept.)
        return ent
    passages = [m.content for m in history if m.role == "assistant" and len(m.content.split()) > PASSAGE_WORDS]
    if not any(ent.text in p for p in passages):
        return ent  # only passages glue headings to their text
    said = "\n".join(passages)
    whole = _count(said, ent.text)
    parts = [" ".join(words[:k]) for k in range(2, len(words))] + [" ".join(words[-k:]) for k in range(2, len(words))]
    alone = [p for p in parts if _count(said, p) > whole * _count(ent.text, p)]  # named outside the run too
    if not alone:
        return ent
    best = max(alone, key=lambda p: (len(p.split()), _count(said, p)))
    return replace(ent, text=best, head=best.split()[-1].lower(), det="")


def passage_focus(focus: Focus, history: Sequence[Message]) -> Focus:
    """The focus with its entity, subject and person each cut by ``passage_name``."""
    return replace(focus, entity=passage_name(focus.entity, history), subject=passage_name(focus.subject, history),
                   person=passage_name(focus.person, history))
