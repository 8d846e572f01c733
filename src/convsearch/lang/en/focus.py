"""How an English conversation's focus moves (``FOCUS``, read by ``rewrite.focus``): the request part of a user turn
that opens with feedback, a definite phrase pointing back ("the system"), a turn opening a (sub)topic ("Tell me
about X") and a question about what a word of the answer means."""

from __future__ import annotations

import re

from ...text import word_at
from ..base import FocusForms, Mention
from .markers import en_feedback_pronoun, has_pronoun
from .mentions import EN_DETS, en_tokens, mentions

_EN_SENT_RE = re.compile(r"[^.!?]+[.!?]*\s*")
_EN_THANKS_RE = re.compile(r"^\W*(?:(?:ok|okay|great|wow|oh|ah|yes|no)\W+)?(?:thanks|thank you|thank u|many thanks)\b",
                           re.IGNORECASE)


def _en_feedback_sentence(sent: str) -> bool:
    """"Thanks for that suggestion.", "That sounds intriguing!", "Those are excellent points, thanks!": a
    sentence about the last answer, whose nouns name no subject to search for."""
    if _EN_THANKS_RE.match(sent):
        return True
    toks = en_tokens(sent)
    k = next((i for i, t in enumerate(toks) if t[0].isalnum()), None)
    return k is not None and en_feedback_pronoun(toks, k)


def en_request_part(text: str) -> str:
    """An English user turn without its feedback sentences ("Thanks for that suggestion. Are there any
    specific foods I should avoid?" → "Are there any specific foods I should avoid?"); the whole turn when
    every sentence is feedback."""
    sents = _EN_SENT_RE.findall(text)
    if len(sents) < 2:
        return text
    kept = [x for x in sents if not _en_feedback_sentence(x)]
    return "".join(kept) if kept else text


_EN_TOPIC_SET_RE = re.compile(
    r"^\s*(?:(?:so|and|ok|okay|now|then)\s*,?\s+)?(?:"
    r"(?:what|who)(?:\s+|['’])(?:is|are|was|were|s)|(?:can you\s+|could you\s+|please\s+)?tell (?:me|us)"
    r"(?:\s+(?:some|something|a bit|a little|more|all))*\s+about|describe|explain|define|(?:what|how) about"
    r")\s+(.+?)[\s?.!]*$", re.IGNORECASE)


def en_topic_setting(text: str) -> bool:
    """Does an English user turn open a (sub)topic ("What is X?", "Tell me about X", "What about X?") rather than
    ask about an aspect of the current one ("What is the best time to visit?", "What are the types of X?")?"""
    m = _EN_TOPIC_SET_RE.match(text)
    if not m or has_pronoun(m.group(1)):
        return False
    ms = mentions(m.group(1))
    if not ms or ms[0].relational:
        return False
    lead = m.group(1).lower().split()
    while lead and (lead[0] in EN_DETS or lead[0] in ("some", "more", "any")):
        lead = lead[1:]
    return " ".join(lead).startswith(ms[0].text.lower())


def _definite(text: str, phrase: str) -> bool:
    """'the system' in a follow-up usually points back (bridging) rather than opening a new subject."""
    tl = text.lower()
    for i in word_at(tl, phrase.lower()):
        if tl[:i].rstrip().endswith("the") and not tl[i + len(phrase):].lstrip().startswith("of "):
            return True
    return False


# "How much memory does the team wiki server need?", "How many titles has Real Madrid won?": the noun after "how
# much / many" is what is asked about the subject that follows the auxiliary, and a later "it" stands for that
_EN_HOW_MUCH_RE = re.compile(r"^\W*how\s+(?:much|many)\s+\S.*?\s(?:do|does|did|has|have|had|will|would|can|could|"
                             r"should|is|are|was|were)\s+(\S.*)$", re.IGNORECASE)


_EN_DEFINITE = EN_DETS - {"a", "an"}


def _head_rank(text: str, x: Mention) -> int:
    """The order a user turn's mentions are picked in: the subject of a how-much question first when it is a name
    or a definite phrase ("the team wiki server"; not "an hour of rowing", a measure), then as named."""
    if text[:12].lower().lstrip(" \t\"'(").startswith("how") and (m := _EN_HOW_MUCH_RE.match(text)):
        subject = m.group(1).lower()
        if x.text.lower() in subject and (x.proper or subject.split(None, 1)[0] in _EN_DEFINITE):
            return 0
    return 1


# (English statements of need set no subject: on CamRest and iKAT, where users open with "I'm looking for …", the
# reply's noun is what follow-ups leave out, −3.4 F1; an answer's size is its words, split at spaces)
FOCUS = FocusForms(
    request_part=en_request_part,
    points_back=_definite,
    sets_topic=en_topic_setting,
    head_rank=_head_rank,
    meaning=re.compile(r"\bwhat\s+(?:does|do|did)\b.*\b(?:mean|stand\s+for)\b|\bwhat\s+is\s+meant\s+by\b|"
                       r"\bwhat\s+counts\s+as\b|\b(?:meaning|definition)\s+of\b|^\W*define\b|"
                       r"\bwhat\s+do\s+you\s+mean\b", re.IGNORECASE),
)
