"""References to a listed item by its position: "the first one", "the third step", "the last two options",
"the latter", "option 2", "第二种", "最后一个".

An assistant answer that lists things lets the user pick from it by position. Two list shapes are read:

- numbered items: "1. Research your market. 2. Define your services." / "1) Executive Summary: …" / "1、…";
  an item is named by its title (the text before a colon) or else its first clause;
- an inline series: "the Hotel Navona, the Eitch Borromini Palazzo, and the Hotel Raphael",
  "Trello or Jira", "关键词检索、向量检索和混合检索"; an item is the noun phrase at its edge.

The reference is replaced by the item(s) it picks, from the most recent assistant turn whose list is long
enough (the answer just before may be about one of the items: "Tell me more about the last one." after a
paragraph on the first hotel). Everything here is pure string work on text already in the history, so the
rewrite stays faithful; lists are parsed once per distinct turn text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..lang import reading
from ..lang.base import OrdinalForms, OrdinalRef
from ..types import Message

# Numbered items: "1. ", "2) ", "3、", "(4) ", "（5）" at the start or after whitespace / sentence end.
_NUM_ITEM_RE = re.compile(r"(?:^|(?<=[\s。；;:：.!?！？]))[(（]?(\d{1,2})[.)）、](?!\d)\s*")
_TITLE_END_RE = re.compile(r"[:：]")
_CLAUSE_END_RE = re.compile(r"[.;,!?。；，！？]|\s[-–—]\s")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_MAX_LIST_CHARS = 4000  # lists are read from the head of an answer: bounded work on the gate path

_MAX_TITLE_WORDS = 10


def find_ordinal(query: str, lang: str) -> OrdinalRef | None:
    """The first positional reference in ``query``, or None (always, in a language whose pack has no
    ``OrdinalForms``)."""
    forms = reading(lang).ordinal
    return forms.find(query) if forms is not None else None


def kind_ordinal(query: str, lang: str) -> OrdinalRef | None:
    """"the first trail": a position with a noun that is no list noun, strict (only a list whose items or
    question name that noun can answer it: "Red Rocks Trail", not "the first time"); None in a language
    without such references."""
    forms = reading(lang).ordinal
    return forms.kind(query) if forms is not None and forms.kind is not None else None


_MAX_TURNS_BACK = 2  # assistant turns searched for the list, newest first


def resolve_ordinal(query: str, history: Sequence[Message], lang: str) -> tuple[int, int, str] | None:
    """(start, end, replacement) for a positional reference whose list is in one of the latest assistant
    turns; else None. A series of plain nouns ("air conditioning, wi-fi, and an elevator") only answers a
    reference that names their kind; "the last one" looks for numbered items or names."""
    forms = reading(lang).ordinal
    ref = find_ordinal(query, lang) or kind_ordinal(query, lang)
    if forms is None or ref is None:
        return None
    need = max(max(ref.positions), -min(ref.positions), 2)
    idx = [i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"][:_MAX_TURNS_BACK]
    answers = [history[i] for i in idx]
    for age, (i, msg) in enumerate(zip(idx, answers)):
        asked = next((m.content for m in reversed(history[:i]) if m.role == "user"), "")
        for items, kind in reversed(lists_in(msg.content, lang)):  # the list named last is the one meant
            if len(items) < need or (ref.pair and len(items) != 2):
                continue
            if (ref.strict or kind not in ("names", "numbered")) and not _names_kind(ref.noun, kind, items, asked) \
                    and not (not ref.strict and ref.noun in ("", "one", "ones") and _asks_for_several(asked)):
                continue
            if age and not any(it.lower() in answers[0].content.lower() for it in items):
                continue  # an older list only while the latest answer is about one of its items
            picked = [items[p - 1] if p > 0 else items[p] for p in ref.positions]
            return ref.start, ref.end, forms.and_word.join(picked)
    return None


_EN_ASKS_SEVERAL_RE = re.compile(r"^\W*(?:which|what)\b(?:\s+\w+){0,3}?\s+\w+s\b", re.IGNORECASE)


def _asks_for_several(asked: str) -> bool:
    """Did the question a list answers ask for several things ("Which vaccines are recommended …?")? Then the
    series is the answer, and "the third" picks from it even when its items are plain nouns."""
    return bool(_EN_ASKS_SEVERAL_RE.search(asked))


def _names_kind(noun: str, kind: str, items: Sequence[str], asked: str = "") -> bool:
    """Does the reference's noun name what the items are? "the last two technologies" for "technologies
    like reverse osmosis and nanofiltration", "the second drink" for "… coffee, tea, and a soft drink",
    "the second option" when the question the list answers asked for "deployment options"."""
    if not noun or noun in ("one", "ones") or len(noun) == 1:
        return False
    stem = noun.rstrip("s")
    if kind.rstrip("s") == stem or any(it.lower().rstrip("s").endswith(stem) for it in items):
        return True
    return bool(asked) and re.search(rf"\b{re.escape(stem)}s?\b", asked, re.IGNORECASE) is not None


def list_items(text: str, lang: str) -> tuple[str, ...]:
    """The items of the last list an answer gives (numbered items, names or nouns in a series)."""
    found = lists_in(text, lang)
    return found[-1][0] if found else ()


@lru_cache(maxsize=2048)
def lists_in(text: str, lang: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    """Every list in an answer, in order, each with its kind: "numbered", "names" or "nouns"."""
    pack = reading(lang)
    forms = pack.ordinal
    if forms is None:
        return ()  # a language that does not say how its answers list things has no lists read
    text = text[:_MAX_LIST_CHARS]
    numbered = _numbered_items(text, forms, pack.unspaced)
    if len(numbered) >= 2:
        return ((numbered, "numbered"),)
    out: list[tuple[tuple[str, ...], str]] = []
    # "卡坦岛（资源交易和修路，…）、璀璨宝石（…）": what a bracket says of an item is no part of the series
    for sentence in _SENTENCE_RE.split(_ASIDE_RE.sub("", text)):
        out.extend(forms.series(sentence))
    return tuple(out)


_ASIDE_RE = re.compile(r"（[^（）]{0,80}）|\([^()]{0,80}\)")


def _numbered_items(text: str, forms: OrdinalForms, unspaced: bool) -> tuple[str, ...]:
    marks = list(_NUM_ITEM_RE.finditer(text))
    # keep the first run 1, 2, 3 … in order
    run: list[re.Match[str]] = []
    for m in marks:
        if int(m.group(1)) == len(run) + 1:
            run.append(m)
    if len(run) < 2:
        return ()
    out: list[str] = []
    for i, m in enumerate(run):
        end = run[i + 1].start() if i + 1 < len(run) else len(text)
        body = text[m.end():end].strip()
        out.append(_title(body, forms, unspaced))
    return tuple(x for x in out if x) if all(out) else ()


def _title(body: str, forms: OrdinalForms, unspaced: bool) -> str:
    """An item's name: the text before a colon when short, else its first clause (capped: at 24 characters in
    a language written without spaces, else at its first words)."""
    t = _TITLE_END_RE.search(body)
    if t and forms.title_words(body[: t.start()]) <= _MAX_TITLE_WORDS:
        return body[: t.start()].strip()
    c = _CLAUSE_END_RE.search(body)
    head = body[: c.start()] if c else body
    if unspaced:
        return head.strip()[:24]
    return " ".join(head.split()[:_MAX_TITLE_WORDS])


__all__ = ["OrdinalRef", "find_ordinal", "list_items", "lists_in", "resolve_ordinal"]
