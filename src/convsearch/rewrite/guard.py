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

    Chinese is compared on strings as well as words, because jieba cuts a joined string differently
    (板泉井水 vs 板泉 / 井水; an entity put before a query can fuse with its first word).
    """
    added = added_words(rewritten, query)
    if not added:
        return set()
    source = " ".join([query, topic or "", *(m.content for m in history), *extra])
    known = content_words(source)
    lowered = source.lower()
    return {w for w in added if w not in known and not (is_cjk(w) and _known_cjk(w, lowered))}


def _known_cjk(word: str, source: str) -> bool:
    """A CJK word is known when it occurs in the source, or is two adjacent source strings fused by the
    segmenter (an entity put before "看海" can come back as "水逆看" + "海")."""
    if word in source:
        return True
    return any(word[:i] in source and word[i:] in source for i in range(1, len(word)))


def is_faithful(rewritten: str, query: str, context: str) -> bool:
    """True when every content word ``rewritten`` adds to ``query`` occurs in ``context``."""
    return not unfaithful_words(rewritten, query, (), extra=(context,))
