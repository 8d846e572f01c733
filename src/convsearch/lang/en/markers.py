"""English reference markers that are shapes of the question alone: an ellipsis ("what about X", "and X?", a bare
fragment asked as a question), an information question (not a command to the assistant, nor a reply), a pronoun
that is feedback on the answer ("That's very helpful") and a demonstrative used as a determiner ("that album")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ... import lexicon as lx
from ..base import Courtesy, IntroducedForms
from .mentions import en_tokens

EN_ELLIPSIS_RE = re.compile(r"^\s*(?:(?:so|ok|okay|and|but)\s*,?\s+)?(what about|how about|and|what of|"
                            r"(?:the\s+)?same(?:\s+question|\s+thing)?\s+for|what if)\b",
                             re.IGNORECASE)
def en_ellipsis(query: str) -> re.Match[str] | None:
    """'what about X', 'how about X', or 'and X?' — a bare 'And …' opens an ellipsis only when what follows is
    short (≤ 4 words): "And let's call mom back." is a whole request."""
    m = EN_ELLIPSIS_RE.match(query) or _EN_PREP_FRAGMENT_RE.match(query) or _bare_fragment(query)
    if m and m.group(1).lower() == "and" and len(rest := query[m.end():].split()) > 4 and (
            len(rest) > EN_AND_FRAGMENT_MAX or not query.rstrip().endswith("?")
            or any(w.lower().strip(",.?!") in EN_CLAUSE_WORDS or "'" in w for w in rest)):
        return None  # a longer "And …?" is an ellipsis only while it has no verb ("And the net income that year?")
    return m


EN_AND_FRAGMENT_MAX = 8
# "for a powerlifter?", "in winter?": a bare prepositional phrase asked as a question (its lead is empty)
_EN_PREP_FRAGMENT_RE = re.compile(r"^\s*()(?=(?:for|in|on|at|with|without|during|from|near|under|over)\s+"
                                  r"[\w'’.$-]+(?:\s+[\w'’.$-]+){0,3}\s*\?\s*$)", re.IGNORECASE)
EN_CLAUSE_WORDS = lx.EN_AUX | lx.EN_VERBS | lx.EN_SUBJECT_PRONOUNS | lx.EN_WH
# "California state?", "Hard boiled?": a bare phrase of up to three words asked as a question
_EN_BARE_FRAGMENT_RE = re.compile(r"^\s*()(?=[\w'’.$-]+(?:\s+[\w'’.$-]+){0,2}\s*\?\s*$)")
# reactions asked as a question ("Sorry?", "Seriously?", "Details?"); openers (hmm, nice, cool), stop words and wh-words
# are left out by their own lists
_EN_NOT_FRAGMENT = frozenset({"huh", "right", "seriously", "sorry", "pardon", "lol", "done", "details", "example",
                              "examples", "source", "sources"})


def _bare_fragment(query: str) -> re.Match[str] | None:
    """A phrase with no verb, pronoun or wh-word, asked as a question: it leans on the previous question."""
    m = _EN_BARE_FRAGMENT_RE.match(query)
    if m is None:
        return None
    ws = [w.lower().strip(",.?!") for w in query.split()]
    return None if any(w in EN_CLAUSE_WORDS or w in _EN_NOT_FRAGMENT or w in lx.STOP_EN or w in lx.EN_OPENERS
                       for w in ws) else m


# An information question (wh-word, auxiliary, "tell me about"), not a command to the assistant ("can you
# cancel that reminder?"): only such a question is about the conversation's subject when it names nothing.
_EN_INFO_Q_RE = re.compile(r"^\W*(?:(?:so|and|but|ok|okay|also|then)\s*,?\s+)?"
                           r"(?:what|who|whom|whose|when|where|why|how|which|"
                           r"is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|may|might|must|"
                           r"tell me|describe|explain|list|give me|any|anything|anyone|anybody|anywhere|else)\b",
                           re.IGNORECASE)
EN_REQUEST_RE = re.compile(r"^\W*(?:(?:so|and|but|ok|okay|also|then)\s*,?\s+)?"
                           r"(?:can|could|will|would)\s+you\s+(?:please\s+)?"
                            r"(?!tell|give me|provide|explain|describe|list)", re.IGNORECASE)


def en_info_question(q: str) -> bool:
    """An English question asking for information ("What are popular trails?", "Tell me about X"), not a
    command to the assistant ("Can you cancel that reminder?", "Answer that.") nor a reply ("Yes.")."""
    if not any(c.isalpha() for c in q):
        return False  # "?" alone asks nothing
    return bool(_EN_INFO_Q_RE.match(q) or q.rstrip().endswith("?")) and not EN_REQUEST_RE.match(q)


_EN_VERDICT_OPENERS = frozenset({"not", "too", "so", "exactly", "just", "what"})


def en_feedback_pronoun(toks: Sequence[str], k: int) -> bool:
    """Token k is a pronoun that points at the last answer or at nothing, not at an entity: "That's very
    helpful", "It sounds wonderful", "Those are excellent points", "appreciate it", "Will it rain?"."""
    low = toks[k].lower()
    if low not in ("it", "that", "this", "these", "those", "they"):
        return False
    prev = toks[k - 1].lower() if k > 0 else ""
    prev2 = toks[k - 2].lower() if k > 1 else ""
    if prev in ("appreciate", "appreciated") or (prev == "for" and prev2 in ("thanks", "you", "thank")):
        return True
    j = k + 1
    if low in ("that", "this") and (k == 0 or toks[k - 1] in (".", "!", "?", ";")) and j < len(toks) \
            and toks[j].lower() in _EN_VERDICT_OPENERS:
        return True  # "That's not what I wanted.", "That's too basic": a verdict on the answer (the 's is cut off)
    if low == "it":
        while j < len(toks) and j <= k + 4 and toks[j].lower() in lx.EN_WEATHER_GLUE:
            j += 1
        if j < len(toks) and toks[j].lower() in lx.EN_WEATHER:
            return True  # "Will it drizzle?", "Is it going to be humid?"
        j = k + 1
    if j < len(toks) and toks[j].lower() in lx.EN_PERCEPTION:
        return True
    while j < len(toks) and j <= k + 4 and toks[j].lower() in lx.EN_INTENSIFIERS:
        j += 1
    return j > k + 1 and j < len(toks) and toks[j].lower() in lx.EN_EVALUATIVE


def demonstrative_det(toks: Sequence[str], k: int) -> bool:
    """'that album' (a determiner) rather than 'that' (a pronoun)."""
    low = toks[k].lower()
    if low not in lx.EN_DEMONSTRATIVES:
        return False
    nxt = toks[k + 1].lower() if k + 1 < len(toks) else ""
    if not (nxt and nxt[0].isalnum() and nxt not in lx.EN_FUNCTION):
        return False
    # "Is that free?" / "How does this compare?": right after an auxiliary and closing the clause, the
    # demonstrative is the subject and the next word its predicate
    prev = toks[k - 1].lower() if k > 0 else ""
    after = toks[k + 2] if k + 2 < len(toks) else ""
    if prev in lx.EN_AUX and (not after or not after[0].isalnum()):
        return False
    return True


def has_pronoun(text: str) -> bool:
    """A pronoun or demonstrative standing alone for something named before (it, they, his, that; not "that
    album", nor the "that" of "That's very helpful")."""
    toks = en_tokens(text)
    lows = [t.lower() for t in toks]
    pronouns = lx.EN_PRONOUNS
    if pronouns.isdisjoint(lows):
        return False  # no pronoun at all (most texts): one test
    for k, low in enumerate(lows):
        if low in pronouns and not demonstrative_det(toks, k) and not en_feedback_pronoun(toks, k):
            return True
    return False


# Openers with nothing to search for in them, one or several ("ok, so hey, …"): "can you tell me" before the
# question it wraps; an interjection (ok, hey) needs a comma, or a space before a question word, so that "okay",
# "Hello Kitty toys?" and "Hi res audio?" stay whole. A closer: "please" (not after "say"), "thanks" after a comma or
# a finished sentence (not "the opposite of thanks").
_EN_ASKS_NEXT = r"(?=(?:what|who|whom|whose|when|where|why|how|which|and|is|are|was|were|do|does|did|can|could|" \
                r"will|would|should|any|tell|so|ok|okay|hey|oh)\b)"
_EN_WH_S_RE = re.compile(r"\b(what|how|where|who|when|why)s\b(?=\s)", re.IGNORECASE)


def asked(query: str) -> str:
    """A wh-word's 's typed without its apostrophe is spelt out ("whats the fee" → "what's the fee"), and a
    follow-up opening with and / what about / how about … is a question whether or not its mark was typed.

    >>> asked("whats the fee"), asked("and on Windows"), asked("And I need a taxi too")
    ("what's the fee", 'and on Windows?', 'And I need a taxi too')
    """
    query = _EN_WH_S_RE.sub(r"\1's", query)
    m = EN_ELLIPSIS_RE.match(query)
    rest = query[m.end():].split() if m else []
    if m and query.rstrip()[-1:].isalnum() and len(rest) <= EN_AND_FRAGMENT_MAX and not any(
            w.lower().strip(",.") in EN_CLAUSE_WORDS or "'" in w for w in rest):
        return query.rstrip() + "?"  # not "And I need a taxi too", "and that's all": statements
    return query


COURTESY = Courtesy(
    opener=re.compile(r"^(?:\s*(?:(?:hey|hi|hello|ok|okay|oh|ah|hmm+|um+|uh+|alright)\b(?:\s*[,!.]+\s*|\s+"
                      + _EN_ASKS_NEXT
                      + r")|(?:(?:can|could|would)\s+you\s+(?:please\s+)?tell\s+me|do\s+you\s+know|i\s+wonder|"
                      r"i(?:'d|\s+would)\s+like\s+to\s+know|i\s+want(?:ed)?\s+to\s+know)\s+"
                      r"(?=(?:what|who|when|where|why|how|which|if|whether)\b)|"
                      r"(?:well|great|cool|nice|thanks|thank you|got it|i see)\s*[,!.]+\s*))+", re.IGNORECASE),
    closer=re.compile(r"((?:,\s*|(?<=[?!.])\s*|(?<!\bsay)\s+)(?:please|pls)|(?:,\s*|(?<=[?!.])\s*)"
                      r"(?:thanks|thank you))(\s*[?!.]*\s*)$", re.IGNORECASE),
    closer_after=2,
    lower_after_opener=True,
    asked=asked,
)


_SWAP = {"you": "me", "your": "my", "yours": "mine", "yourself": "myself"}
_SWAP_RE = re.compile(r"\b(you|your|yours|yourself)\b", re.IGNORECASE)


def user_side(text: str) -> str:
    """Words an assistant wrote, as the user would say them: "give you" → "give me", "your own" → "my own"."""
    return _SWAP_RE.sub(lambda w: _SWAP[w.group(1).lower()], text)


def _opens_with(sentence: str, name: str) -> bool:
    """Does an English sentence open on ``name`` (after "the")?"""
    low = sentence.lstrip(" \t\n\"'“*-").lower()
    return low.removeprefix("the ").startswith(name.lower())


_PICK_WORD_RE = re.compile(r"[\w+#.-]+")


def _picks(name: str, clause: str) -> bool:
    """Does a (lower-case) clause name ``name`` by a whole word of it ("Go" is not in "good")?"""
    words_ = set(_PICK_WORD_RE.findall(clause))
    return any(w in words_ for w in name.lower().split())


# A question asking for an entity ("which …", "recommend …", "what's the oldest …", "I need a …").
INTRODUCED = IntroducedForms(
    asks=re.compile(r"^\W*(?:which|recommend|suggest|name)\b|\b(?:alternative|alternatives)\b|"
                    r"^\W*what\s+(?:can|could|should|would)\s+(?:i|we)\s+(?:use|try|get|buy|install|read|watch)\b|"
                    r"^\W*what(?:'s| is| are)?\s+(?:a|an|some|the best|the name)\b|"
                    # "what's the oldest university …", "I need a …"
                    r"^\W*(?:what|which|who)(?:['’]s|\s+is|\s+are|\s+was|\s+were)\s+the\s+(?:[a-z]+est|most|least)\b|"
                    r"^\W*i(?:['’]m|\s+am)?\s+(?:want|need|looking\s+for)\s+(?:a|an|some)\b", re.IGNORECASE),
    picks=_picks,
    opens_on=_opens_with,
)
