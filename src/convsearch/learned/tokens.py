"""The words a trained resolver reads, the same way in Chinese and English (the features and IDF table at inference,
the labels in ``research/learned/labels.py``).

``content_words``: ``convsearch.text.words`` (jieba words for Chinese runs, lowercased ``\\w+`` runs for the rest)
without the zh and en packs' stopwords, one-character Chinese particles and punctuation. ``read(text).has(word)``:
a Latin word is in a text when its Snowball stem is among the text's stems; a Chinese word when it is a substring of
the text (normalised, lowercased), so that a different jieba cut of the same name still matches.

>>> content_words("这家酒店的电话是多少？"), content_words("What is their address?")
(('这家', '酒店', '电话'), ('address',))
>>> read("讲礼驴肉馆的地址").has("驴肉"), read("Two restaurants nearby").has("restaurant")
(True, True)
"""

from __future__ import annotations

from functools import lru_cache

from ..lang import get
from ..text import is_cjk, normalize, stem, words

_STOP = get("zh").stopwords | get("en").stopwords
_ZH_PARTICLES = frozenset("的了吗呢吧啊呀哦嘛么是在和与及或也就都还又很太着过把被给对从向")


@lru_cache(maxsize=65536)
def content_words(text: str) -> tuple[str, ...]:
    """The content words of ``text``, in order, each once."""
    out: list[str] = []
    for w in words(text):
        if not any(ch.isalnum() for ch in w) or w in _STOP:
            continue
        if len(w) == 1 and is_cjk(w) and w in _ZH_PARTICLES:
            continue
        if w not in out:
            out.append(w)
    return tuple(out)


class Read:
    """A text as the labels and features match words against it: its Latin stems and its normalised form."""

    __slots__ = ("flat", "stems")

    def __init__(self, text: str) -> None:
        self.flat = normalize(text).lower()
        self.stems = frozenset(stem(w) for w in words(text) if not is_cjk(w))

    def has(self, word: str) -> bool:
        """Is ``word`` (a content word) in this text?"""
        return word in self.flat if is_cjk(word) else stem(word) in self.stems


@lru_cache(maxsize=16384)
def read(text: str) -> Read:
    """``Read(text)``, remembered (history turns are read again on every later turn)."""
    return Read(text)
