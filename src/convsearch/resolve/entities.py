"""Mentions of either language, and the references a query makes to them: a session topic and a partial name of
it ("Divac" on a page about "Vlade Divac"), a definite phrase naming an earlier turn's entity by its head ("the
expedition"), a class phrase ("that album"), pronouns, and whether a text leans on the focus.

``mentions(text, lang)`` asks the language's mention finder (``lang/zh/mentions.py``, ``lang/en/mentions.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import lexicon as lx
from ..lang import detect, reading
from ..lang.base import Mention
from ..lang.en.mentions import is_cap
from ..lang.zh.mentions import compiled
from ..text import CJK_RE, is_cjk, word_at
from ..types import Message


def mentions(text: str, lang: str | None = None) -> tuple[Mention, ...]:
    """Noun phrases of ``text``, found by the pack of ``lang`` (default: the language ``text`` is in); each pack
    caches its answers (history turns are read again on every later turn)."""
    return (reading(lang) if lang else detect(text)).mentions(text)


def leans_on_focus(text: str, lang: str) -> bool:
    """Does this user turn point back at the conversation's focus rather than move on? A pronoun, an aspect
    noun ("价格呢？", "What about the price?") or a 呢-ellipsis. One definition for ``find_focus`` (the
    focus stays fresh) and the Chinese rules (an older focus stays usable)."""
    if has_pronoun(text, lang):
        return True
    if any(m.relational for m in mentions(text, lang)):
        return True
    # a 呢-ellipsis keeps the focus; an English one ("what about X") names a new subject of its own
    forms = reading(lang).focus
    keeps = forms.ellipsis_keeps if forms is not None else None
    return keeps is not None and keeps(text)


_ATTRIBUTE_WORDS = lx.ATTRIBUTES_EN | lx.ATTRIBUTES_ZH


def attribute_noun(m: Mention) -> bool:
    """An attribute of some entity rather than an entity ("annual fee", "年费", "battery life"): a common noun
    whose text or head is in the attribute lexicon (data/slots.txt)."""
    return not m.proper and (m.text.lower() in _ATTRIBUTE_WORDS or m.head.lower() in _ATTRIBUTE_WORDS)


def named_in(ent: Mention, text: str) -> bool:
    """Does ``text`` name ``ent``: its text or head (spaces ignored), or for a brand + model name the model
    without the brand ("Mate 60 Pro" for "华为 Mate 60 Pro")?

    >>> named_in(Mention("华为 Mate 60 Pro", True, "eng", "华为 Mate 60 Pro"), "Mate 60 Pro 主摄 5000 万像素")
    True
    """
    flat = text.replace(" ", "")
    if ent.text.replace(" ", "") in flat or (len(ent.head) > 1 and ent.head.replace(" ", "") in flat):
        return True
    words_ = ent.text.split()
    tail = " ".join(words_[1:])
    return ent.proper and len(words_) > 1 and any(c.isdigit() for c in tail) and tail.replace(" ", "") in flat


def has_pronoun(text: str, lang: str) -> bool:
    """Does ``text`` use a pronoun or demonstrative standing for something named before (the language's test)?"""
    return reading(lang).has_pronoun(text)


_TOPIC_SEP_RE = re.compile(r"\s+[|:\-–—]\s+|[:：|｜]\s*")
_PAREN_RE = re.compile(r"\s*[(（][^)）]*[)）]")
_WORD_RE = re.compile(r"[\w'’-]+")


def topic_entity(topic: str) -> str:
    """The entity a session topic names: a page title's first segment ("Frank Zappa: Disbandment" →
    "Frank Zappa"; "AnySearch | Pricing" → "AnySearch")."""
    return _PAREN_RE.sub("", _TOPIC_SEP_RE.split(topic.strip(), maxsplit=1)[0]).strip()


def topic_section(topic: str) -> str:
    """The section a session topic names after its entity ("Frank Zappa: Disbandment" → "Disbandment"), or ""."""
    parts = _TOPIC_SEP_RE.split(topic.strip(), maxsplit=1)
    return parts[1].strip() if len(parts) > 1 else ""


def name_like(topic: str) -> bool:
    """Does the session topic name an entity ("Vinnie Paz", "AnySearch", "深圳") rather than describe a
    subject ("Dating tips", "head and neck cancer")? English: every content word capitalised; Chinese: a
    proper noun among its words."""
    if not topic:
        return False
    if CJK_RE.search(topic):  # (a CJK character anywhere: ``is_cjk`` of one of them)
        return any(m.proper for m in mentions(topic, "zh"))
    content = [w for w in _WORD_RE.findall(topic) if w.lower() not in lx.STOP_EN and w.lower() not in lx.EN_CONNECTORS]
    return bool(content) and all(is_cap(w) or not w[:1].isalpha() for w in content)  # "Ludwig Mies van der Rohe"


def _cuts_latin_word(text: str, start: int, end: int) -> bool:
    """Does ``text[start:end]`` begin or end inside a Latin word ("An" of "AnySearch" is no mention)?"""
    def latin(ch: str) -> bool:
        return ch.isascii() and ch.isalnum()

    return bool((start > 0 and latin(text[start]) and latin(text[start - 1]))
                or (end < len(text) and latin(text[end - 1]) and latin(text[end])))


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # (what \w is in ASCII)


def _ascii_words_span(text: str, words_: list[str]) -> tuple[int, int] | None:
    r"""The first span of ``text`` that ``\bw1\s+w2…\b`` matches (case-insensitively: ``text`` and ``words_`` are
    lower-case ASCII, no word empty or opening with a space), found with str.find: the leftmost start where the
    words follow each other, whitespace between them, at a word boundary on both ends."""
    first, n = words_[0], len(text)
    s = text.find(first)
    while s >= 0:
        if (s > 0 and _word_char(text[s - 1])) == _word_char(first[0]):
            s = text.find(first, s + 1)
            continue  # no \b before it
        e = s + len(first)
        for w in words_[1:]:
            k = e
            while k < n and text[k].isspace():
                k += 1
            if k == e or not text.startswith(w, k):
                e = -1
                break
            e = k + len(w)
        if e >= 0 and _word_char(text[e - 1]) != (e < n and _word_char(text[e])):
            return s, e
        s = text.find(first, s + 1)
    return None


def partial_name_span(query: str, name: str) -> tuple[int, int] | None:
    """Character span of a partial mention of ``name`` in ``query`` ("paz" or "Divac" for "Vinnie Paz",
    "Vlade Divac"), or None when the query has the whole name or none of it. Only content words count."""
    if not name or name.lower() in query.lower():
        return None
    if is_cjk(name[0]):
        for size in range(len(name) - 1, 1, -1):
            for i in range(len(name) - size + 1):
                part = name[i:i + size]
                j = query.find(part)
                if j >= 0 and part not in lx.STOP_ZH and not _cuts_latin_word(query, j, j + size):
                    return j, j + size
        return None
    parts = [w for w in _WORD_RE.findall(name) if w.lower() not in lx.STOP_EN]
    if len(parts) < 2:
        return None
    # ASCII on both sides: a case-insensitive match needs every word of the window in query.lower(); most
    # windows fail that test, and skipping them skips compiling a pattern per new name (~80 µs each)
    ascii_low = query.lower() if query.isascii() else None
    for size in range(len(parts) - 1, 0, -1):
        for i in range(len(parts) - size + 1):
            if ascii_low is not None and any(p.isascii() and p.lower() not in ascii_low for p in parts[i:i + size]):
                continue
            if ascii_low is not None and all(p.isascii() for p in parts[i:i + size]):
                # every character ASCII: the pattern below matched by hand, without compiling it (the same span)
                span = _ascii_words_span(ascii_low, [p.lower() for p in parts[i:i + size]])
                if span is not None:
                    return span
                continue
            pat = r"\b" + r"\s+".join(re.escape(p) for p in parts[i:i + size]) + r"\b"
            m = compiled(pat).search(query)
            if m:
                return m.start(), m.end()
    return None


_DEF_NP_RE = re.compile(r"\bthe\s+((?:[\w'’/-]+\s+){0,2}?)([A-Za-z][\w'’-]*)\b(?!\s+of\b)", re.IGNORECASE)


def _modifier_suffix(words_: list[str]) -> list[str]:
    """The run of modifiers right before a head noun: content words, or and/of/& inside a capitalised name."""
    out: list[str] = []
    for i in range(len(words_) - 1, -1, -1):
        w = words_[i]
        low = w.lower()
        if low in ("and", "of", "&"):
            if out and out[0][:1].isupper() and i > 0 and words_[i - 1][:1].isupper():
                out.insert(0, w)
                continue
            break
        if low in lx.STOP_EN or low in lx.RELATIONAL_EN:
            break
        out.insert(0, w)
    return out


def definite_expansion(query: str, history: Sequence[Message]) -> tuple[int, int, str] | None:
    """A definite noun phrase of the query whose head an earlier turn named more fully: "the expedition"
    after "the Lewis and Clark expedition" → (start, end, "Lewis and Clark expedition"). Most recent first.
    Only names qualify as the fuller form ("Lewis and Clark"), not "12" or a sentence-opening verb."""
    for m in _DEF_NP_RE.finditer(query):
        head = m.group(2)
        low = head.lower()
        if low in lx.STOP_EN or low in lx.RELATIONAL_EN or len(low) < 3:
            continue
        for msg in reversed(history):
            text = msg.content
            for i in word_at(text.lower(), low):
                before = text[:i].split()[-6:]
                if before and not before[-1][-1:].isalnum():
                    before = []  # punctuation right before the head ends the phrase
                cut = max((k + 1 for k, w in enumerate(before) if not w[-1:].isalnum()), default=0)
                mods = _modifier_suffix(before[cut:])
                if not mods or not all(is_cap(w) or w.lower() in ("and", "of", "&") for w in mods):
                    continue
                if not text[: i].strip()[: -len(" ".join(mods))].strip():
                    continue  # the name would open the message: likely a capitalised verb ("Answering call")
                full = " ".join(mods) + " " + text[i:i + len(head)]
                if full.lower() in query.lower():
                    continue
                return m.start(2) - len(m.group(1)), m.end(2), full
    return None


_EN_CLASS_REF_RE = re.compile(r"\b(the|this|that)\s+(" + "|".join(sorted(lx.EN_WORKS)) + r")\b(?!\s+(?:of|that|which)\b)",
                              re.IGNORECASE)
_EN_NAME_GLUE_RE = re.compile(r"\s*,?\s*(?:(?:called|titled|entitled|named)\s+)?(?:the\s+)?[\"“‘']?\s*$", re.IGNORECASE)
_EN_CLASS_TURNS = 4  # how far back a class noun looks for the name it stands for


def class_reference(query: str, history: Sequence[Message], own: str = "") -> tuple[int, int, str] | None:
    """A class noun the query uses for a named thing ("the album", "this film") and the nearest name of that class
    in the history: a name right after the noun ("the 1982 album Computer Games", "second album, entitled
    \"Teen Spirit\""), most recent turn first → (start, end, name). ``own``: the conversation's own entity,
    never the answer (the band is no album of itself)."""
    m = _EN_CLASS_REF_RE.search(query)
    if m is None:
        return None
    noun = m.group(2).lower()
    own_l = own.lower()
    for msg in list(reversed(history))[:_EN_CLASS_TURNS]:
        text = msg.content
        low = text.lower()
        names = [x for x in mentions(text, "en") if x.proper]
        for i in word_at(low, noun):
            after = i + len(noun)
            for x in names:
                j = text.find(x.text, after)
                if j < 0 or not _EN_NAME_GLUE_RE.fullmatch(text[after:j]) or text[after:j].count(",") > 1:
                    continue
                if x.text.lower() in own_l or x.text.lower() in query.lower() or len(x.text) < 2:
                    continue
                return m.start(), m.end(), x.text
    return None
