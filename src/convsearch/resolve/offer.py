"""A bare "yes" to an offer of information: "Yes please!" after "…, would you like me to give you more
information on alternative therapies?" asks for that information.

Only offers of information count (the offered phrase names information, details, a location, a phone number,
more about something …); a "yes" to an offered action ("Would you like me to call Anna?") is an answer, not a
search, and stays as typed. The rewrite is the acceptance followed by the offered phrase seen from the
user's side ("give you" → "give me"), so every added word comes from the history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import lexicon as lx
from ..lang.en.markers import user_side
from ..types import Message

_LATIN_RUN_RE = re.compile(r"[A-Za-z]+")

_ACCEPT_RE = re.compile(r"^\s*(?:(?:yes|yeah|yep|sure|ok|okay|please|please do|of course|definitely|absolutely|"
                        r"that would be (?:great|nice|helpful)|sounds good|go ahead)[\s,.!]*){1,3}$", re.IGNORECASE)
_OFFER_RE = re.compile(r"(?:would you like|do you want|do you need|shall i|should i|can i|may i)\s+"
                       r"(?:me\s+to\s+|to\s+)?([^?]{2,160})\?\s*$", re.IGNORECASE)


def accepted_offer(query: str, history: Sequence[Message]) -> str | None:
    """The information the user says yes to, as the user would ask for it; None when the query is not a
    bare acceptance of the latest answer's offer of information."""
    if not history or history[-1].role != "assistant" or not _ACCEPT_RE.match(query):
        return None
    m = _OFFER_RE.search(history[-1].content.strip())
    if m is None:
        return None
    phrase = m.group(1).strip().rstrip(",;")
    tokens = [w.lower() for w in _LATIN_RUN_RE.findall(phrase)]
    if not tokens or not set(tokens) & lx.EN_INFO_OFFER:
        return None
    # "give you more information" / "their location" offer information; "add eggs to your list" or "call the
    # number" offer an action, even when an information word appears in them
    if tokens[0] not in lx.EN_INFO_OFFER_VERBS and tokens[0] not in lx.EN_FUNCTION and tokens[0] not in lx.EN_INFO_OFFER:
        return None
    return user_side(phrase)


__all__ = ["accepted_offer", "user_side"]
