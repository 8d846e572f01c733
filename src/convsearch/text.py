"""Tokenization shared by every stage: one place, loaded once.

Chinese is segmented with rjieba (jieba-rs: the jieba dictionary and HMM, in Rust, ~10x faster than
pure-Python jieba); POS tags come from the same dictionary. English search terms are stemmed with
PyStemmer (the Snowball stemmers in C, as bm25s uses). Latin text is split on ``\\w+`` runs and
lowercased. Mixed text is split into CJK and non-CJK runs first, so "AnySearch的价格" gives
["anysearch", "的", "价格"].
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from itertools import islice

import rjieba
import Stemmer

_EN_STEMMER = Stemmer.Stemmer("english")

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RE = re.compile(f"[{_CJK}]")
CJK_ONLY_RE = re.compile(f"[{_CJK}]+")  # (fullmatch: a word of CJK characters only)
# the marks and spaces a question or a fragment ends with, in either script
TRAIL_MARKS = "？?！!。.，,~～ \t"
_NONCJK_WORD = f"[^\\W_{_CJK}]+"
_RUNS_RE = re.compile(f"([{_CJK}]+)|({_NONCJK_WORD}(?:['’]{_NONCJK_WORD})*)", re.UNICODE)
_LATIN_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_LATIN_RUN_RE = re.compile(f"{_NONCJK_WORD}(?:['’]{_NONCJK_WORD})*", re.UNICODE)  # _RUNS_RE's second group


def normalize(text: str) -> str:
    """NFKC (full-width → half-width) and collapse whitespace."""
    return collapse_spaces(_nfkc(text))


def collapse_spaces(text: str) -> str:
    """``" ".join(text.split())``: whitespace runs as one space, none at either end.

    >>> collapse_spaces("  a \\t b\\n")
    'a b'
    """
    # Every whitespace character but the space is unprintable (Cc, Zl, Zp or Zs), so printable text without a
    # double, leading or trailing space already is its own result: two scans in C instead of a list of words
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())


# Full-width forms, the ideographic space and "…" decompose (NFKD) to plain ASCII. Replacing a character by its
# NFKD leaves the string's NFKD, hence its NFKC, unchanged; so when the replaced string is already NFKC (an exact
# check), it IS the NFKC of the original. Chinese text is mostly CJK plus full-width punctuation, for which this
# costs ~1 µs instead of NFKC's ~13 µs per 100 characters.
_FULLWIDTH = {c: unicodedata.normalize("NFKD", chr(c)) for c in (*range(0xFF01, 0xFF5F), 0x3000, 0x2026)}
_COMMON_FULLWIDTH = tuple((chr(c), _FULLWIDTH[c]) for c in (0xFF0C, 0xFF1F, 0xFF01, 0xFF1A, 0xFF1B, 0xFF08, 0xFF09,
                                                            0x3000))


# the common full-width marks but the ideographic space: caseless, and no space on either side of the swap
_FULLWIDTH_MARKS = tuple((a, b) for a, b in _COMMON_FULLWIDTH if not a.isspace())


def ascii_marks(text: str) -> str:
    """``text`` with the common full-width marks (，？！：；（）) in their ASCII forms, as NFKC writes them."""
    for a, b in _FULLWIDTH_MARKS:
        text = text.replace(a, b)
    return text


def _nfkc(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    out = text
    for a, b in _COMMON_FULLWIDTH:
        out = out.replace(a, b)
    if unicodedata.is_normalized("NFKC", out):
        return out
    out = text.translate(_FULLWIDTH)
    return out if unicodedata.is_normalized("NFKC", out) else unicodedata.normalize("NFKC", text)


def detect_lang(text: str) -> str:
    """'zh' when the text has any CJK ideograph and they are at least 20% of its letters or frame it (a final
    呢/吗/吧, a leading 那/还有/另外), else 'en'.

    >>> detect_lang("Rocky Linux 呢"), detect_lang("What does 你好 mean?"), detect_lang("How to pronounce 呢")
    ('zh', 'en', 'en')
    """
    cjk = len(CJK_RE.findall(text))
    if not cjk:
        return "en"
    letters = sum(map(str.isalpha, text))  # (one True per letter)
    # a Chinese frame around a Latin name ("Rocky Linux 呢", "那 Windows 11 呢") is Chinese whatever the ratio;
    # an English sentence quoting a Chinese word ("How to pronounce 呢") is not
    if cjk / max(letters, 1) >= 0.2:
        return "zh"
    latin = _LATIN_WORDS_RE.findall(text)
    return "zh" if _ZH_FRAME_RE.search(text) and len(latin) <= 4 and not any(w.lower() in _EN_FRAME_WORDS
                                                                              for w in latin) else "en"


_LATIN_WORDS_RE = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_EN_FRAME_WORDS = frozenset({"how", "what", "to", "is", "the", "a", "an", "do", "does", "say", "pronounce", "translate",
                             "mean", "means", "word", "of", "in", "and"})


_ZH_FRAME_RE = re.compile(r"[呢吗吧][\s?？!！。.~～]*$|^\s*(?:那么|那|还有|另外)")


@lru_cache(maxsize=8192)
def _cut_cjk(run: str) -> tuple[str, ...]:
    return tuple(rjieba.cut(run))


_DEMONSTRATIVE = frozenset("这那")
_CLASSIFIERS = frozenset("个款家种些位部台项件样")


@lru_cache(maxsize=8192)
def _tag_cjk(run: str) -> tuple[tuple[str, str], ...]:
    """jieba tags, with demonstrative + classifier glued back (这/款 → 这款 'r'): jieba splits them."""
    out: list[tuple[str, str]] = []
    for w, t in rjieba.tag(run):
        if out and out[-1][0] in _DEMONSTRATIVE and w[:1] in _CLASSIFIERS:
            head = out.pop()[0] + w[0]
            out.append((head, "r"))
            if len(w) > 1:
                out.append((w[1:], t))
            continue
        out.append((w, "n" if t in _NAME_TAGS and w in _ZH_COMMON_NOUNS else t))
    return tuple(out)


_NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})


def _zh_common_nouns() -> frozenset[str]:
    from . import lexicon as lx  # the lexicon's data files, read once

    return lx.ATTRIBUTES_ZH | frozenset(lx.RELATIONAL_ZH) | lx.ZH_ROLE_NOUNS


# Attribute, relational and role words jieba sometimes tags as names (续航 'nr', 师傅 'nr'): always common nouns
_ZH_COMMON_NOUNS = _zh_common_nouns()


def words(text: str, *, lower: bool = True) -> list[str]:
    """Word tokens: jieba words for CJK runs, ``\\w+`` runs (apostrophes kept inside) for the rest."""
    if text.isascii():  # no CJK run; ASCII lower() keeps every character's class, so lower first
        return _LATIN_RUN_RE.findall(text.lower() if lower else text)
    out: list[str] = []
    for m in _RUNS_RE.finditer(text):
        cjk, latin = m.group(1), m.group(2)
        if cjk:
            out.extend(_cut_cjk(cjk))
        else:
            out.append(latin.lower() if lower else latin)
    return out


def tagged(text: str) -> list[tuple[str, str]]:
    """(word, POS) pairs. CJK words carry jieba's tags; Latin words get 'eng' (jieba's tag for them),
    or 'm' when numeric."""
    out: list[tuple[str, str]] = []
    for m in _RUNS_RE.finditer(text):
        cjk, latin = m.group(1), m.group(2)
        if cjk:
            out.extend(_tag_cjk(cjk))
        else:
            out.append((latin, "m" if latin.isdigit() else "eng"))
    return out


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _EN_STEMMER.stemWord(word)


def stem(word: str) -> str:
    """The Snowball stem of a Latin word (renewing → renew), as the index stems it."""
    return _stem(word)


def index_terms(text: str) -> list[str]:
    """Search terms: ``words`` with Latin words Snowball-stemmed (launches/launched → launch), CJK as is.
    The index and the queries both use this, so they always agree."""
    return [w if is_cjk(w) else _stem(w) for w in words(text)]


def count_tokens(text: str) -> int:
    """Token count with the same tokenizer the index uses (jieba words + Latin words)."""
    return len(words(text, lower=False))


# characters no token holds (tokens: CJK runs cut by jieba, and letter or digit runs with inner apostrophes)
_NEVER_IN_TOKEN = (" ", "，", "。", "、", "？", "！", "：", "；", ",", ".", "?", "!", "\n", "“", "”", "（", "）")
_LATIN_WORD_START_RE = re.compile(f"[^\\W_{_CJK}]")
_ASCII_WORD_RE = re.compile("[A-Za-z0-9]")  # the same class on ASCII text


_BLOCK = 16  # tokens per compiled pattern: any limit is blocks of 16 and a rest, so at most 32 patterns compile


@lru_cache(maxsize=2 * _BLOCK)
def _runs_re(n: int, ascii_only: bool) -> re.Pattern[str]:
    """``n`` (1..16) Latin runs of a text without CJK and what precedes each: the ``n``-th ``_RUNS_RE`` match from
    where this match starts ends where it ends. Possessive, as ``finditer``'s matches are maximal: a run is never
    split in two to make up the count. On ASCII text ``[^\\W_]`` is ``[A-Za-z0-9]`` (a simpler class, twice as
    fast)."""
    word, other = ("[A-Za-z0-9]", "[^A-Za-z0-9]") if ascii_only else (f"[^\\W_{_CJK}]", f"[\\W_{_CJK}]")
    return re.compile(f"(?:{other}*+{word}++(?:['’]{word}++)*+){{{n}}}")


def _end_of_runs(head: str, limit: int, ascii_only: bool) -> int | None:
    """Where the ``limit``-th Latin run of ``head`` (no CJK) ends; None when it has fewer: a few matches in C, no
    match object per token."""
    pos = 0
    blocks, rest = divmod(limit, _BLOCK)
    for k in range(blocks + (rest > 0)):
        m = _runs_re(_BLOCK if k < blocks else rest, ascii_only).match(head, pos)
        if m is None:
            return None
        pos = m.end()
    return pos


def truncate_tokens(text: str, limit: int, ellipsis: str = "…") -> str:
    """Cut ``text`` to at most ``limit`` tokens, at a token boundary, keeping the original characters."""
    if len(text) <= limit:  # every token is at least one character
        return text
    head = text[: limit * 24]  # tokens here are far shorter than 24 characters: bound the scan
    if head.isascii() or not CJK_RE.search(head):  # every match one token: the (limit + 1)-th match is the cut
        if limit >= 0:  # past the first ``limit`` tokens, the next one's start
            ascii_only = head.isascii()
            end = _end_of_runs(head, limit, ascii_only)
            start = _ASCII_WORD_RE if ascii_only else _LATIN_WORD_START_RE
            cut = start.search(head, end) if end is not None else None
        else:
            cut = next(islice(_RUNS_RE.finditer(head), limit, None), None)
        if cut is not None:
            return head[: cut.start()].rstrip() + ellipsis
        return text if len(head) == len(text) else head.rstrip() + ellipsis
    if limit >= 0 and len(head) - sum(map(head.count, _NEVER_IN_TOKEN)) <= limit:
        # tokens are disjoint, non-empty and hold none of these characters: no more of them than the rest
        # (jieba is not asked)
        return text if len(head) == len(text) else head.rstrip() + ellipsis
    n = 0
    for m in _RUNS_RE.finditer(head):
        cjk = m.group(1)
        if cjk:
            pos = m.start()
            for w in _cut_cjk(cjk):
                n += 1
                if n > limit:
                    return head[:pos].rstrip() + ellipsis
                pos += len(w)
        else:
            n += 1
            if n > limit:
                return head[: m.start()].rstrip() + ellipsis
    return text if len(head) == len(text) else head.rstrip() + ellipsis


def is_cjk(token: str) -> bool:
    return bool(CJK_RE.search(token))


def word_at(text_lower: str, word: str) -> Iterator[int]:
    """Start offsets of ``word`` in ``text_lower`` on word boundaries (str.find: no pattern to compile)."""
    i = text_lower.find(word)
    n = len(word)
    while i >= 0:
        if (i == 0 or not text_lower[i - 1].isalnum()) and (i + n == len(text_lower)
                                                             or not text_lower[i + n].isalnum()):
            yield i
        i = text_lower.find(word, i + 1)
