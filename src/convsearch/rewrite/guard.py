"""Guardrails shared by every rewriter: a rewrite may only add words found in the conversation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .. import lexicon as lx
from ..text import is_cjk, words
from ..types import Message


def content_words(text: str) -> set[str]:
    """Lower-cased words that carry content: no stop words, no punctuation, no single Latin letters;
    a possessive 's is dropped ("zappa's" → "zappa")."""
    out = set()
    for w in words(text):
        if w.endswith(("'s", "’s")):
            w = w[:-2]
        if w and w not in lx.STOP_EN and w not in lx.STOP_ZH and (len(w) > 1 or not w.isascii()):
            out.add(w)
    return out


def added_words(rewritten: str, query: str) -> set[str]:
    return content_words(rewritten) - content_words(query)


def unfaithful_words(rewritten: str, query: str, history: Sequence[Message], topic: str | None = None,
                     extra: Iterable[str] = ()) -> set[str]:
    """Content words of ``rewritten`` found neither in the query, the history, the topic nor ``extra``.

    Chinese is compared on characters as well as words, because jieba cuts a joined string differently
    (板泉井水 vs 板泉 / 井水; an entity put before a query can fuse with its first word): a CJK word counts
    as known when every character of it occurs in the sources.
    """
    added = added_words(rewritten, query)
    if not added:
        return set()
    source = " ".join([query, topic or "", *(m.content for m in history), *extra])
    known = content_words(source)
    lowered = source.lower()
    chars = set(lowered)
    return {w for w in added if w not in known and w not in lowered
            and not (is_cjk(w) and all(ch in chars for ch in w))}
