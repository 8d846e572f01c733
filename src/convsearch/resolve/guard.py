"""Guardrails shared by every rewriter: a rewrite may only add words found in the conversation.

LLM output passes more checks (``output_problem``): not empty, not too long (default 30 Chinese characters /
20 English words), no blocked word, the query's language, and faithful (the one definition above).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from .. import lexicon as lx
from ..lang import detect, reading
from ..text import CJK_RE, is_cjk, stem, words
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


@lru_cache(maxsize=4096)
def _content_words_cached(text: str) -> tuple[str, ...]:
    # a tuple of strings, not a frozenset: the collector stops tracking it, so the thousands of cached entries
    # are not walked again by every young-generation collection (a frozenset is always tracked)
    return tuple(content_words(text))


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
    parts = [query, topic or "", *(m.content for m in history), *extra]
    # the content words of the joined source are the union of each part's (no word crosses the joining space),
    # so a history message is tokenised once per process, not again on every later turn. Only the added words are
    # looked up in them, and each word of a part is a substring of its lower case (jieba's words are pieces of the
    # text; a Latin word is its run lower-cased, which is the same characters of the whole text lower-cased, Σ
    # aside: its lower case depends on the letters around it): a part whose lower case holds none of the added
    # words knows none of them, and is not tokenised at all (most of a new history's messages). The query is none:
    # no added word is one of its words. (Each part is lower-cased once: joined by spaces, the parts' lower cases are
    # the joined text's, Σ included, as a space is neither cased nor case-ignorable.)
    lows = [p.lower() for p in parts]
    known = set().union(*(_content_words_cached(p) for p, low in zip(parts[1:], lows[1:])
                          if "\u03a3" in p or any(w in low for w in added)))
    unknown = [w for w in added if w not in known]
    if not unknown:
        return set()
    lowered = " ".join(lows)
    bad = {w for w in unknown if not (is_cjk(w) and _known_cjk(w, lowered))}
    if any(not is_cjk(w) for w in bad):  # "renewing" for "renew": another form of a word that is there
        stems = {stem(k) for k in words(lowered) if not is_cjk(k)}  # every word: "get" is no content word
        bad = {w for w in bad if is_cjk(w) or stem(lx.EN_SINGULAR_OF.get(w, w)) not in stems}  # (mice: mouse)
    return bad


def _known_cjk(word: str, source: str) -> bool:
    """A CJK word is known when it occurs in the source, or is two adjacent source strings fused by the
    segmenter (an entity put before "看海" can come back as "水逆看" + "海")."""
    if word in source:
        return True
    return any(word[:i] in source and word[i:] in source for i in range(1, len(word)))


def is_faithful(rewritten: str, query: str, context: str) -> bool:
    """True when every content word ``rewritten`` adds to ``query`` occurs in ``context``."""
    return not unfaithful_words(rewritten, query, (), extra=(context,))


# --- LLM output: length, blocked words, language ---------------------------------------------------
_LATIN_RUN_RE = re.compile(r"[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+(?:['’.\-][^\W_]+)*", re.UNICODE)

MAX_ZH_CHARS = 30
MAX_EN_WORDS = 20


def query_length(text: str, lang: str) -> int:
    """Length as the caps count it: in a language written without spaces (zh), its characters plus Latin words
    (a name counts once: "AnySearch 的价格" is 4); else words."""
    latin = len(_LATIN_RUN_RE.findall(text))
    return len(CJK_RE.findall(text)) + latin if reading(lang).unspaced else latin


def length_problem(rewritten: str, query: str, lang: str, *, max_zh_chars: int = MAX_ZH_CHARS,
                   max_en_words: int = MAX_EN_WORDS) -> str | None:
    """Why ``rewritten`` is too long, or None. A query already near or over the cap keeps a third of the cap
    as room for what a rewrite adds (a 28-character question may still gain an entity)."""
    unspaced = reading(lang).unspaced
    limit = max_zh_chars if unspaced else max_en_words
    cap = max(limit, query_length(query, lang) + limit // 3)
    n = query_length(rewritten, lang)
    unit = "characters" if unspaced else "words"
    return f"too long ({n} {unit} > {cap})" if n > cap else None


def blocked_words_found(text: str, blocked: Iterable[str]) -> set[str]:
    """Entries of ``blocked`` found in ``text``: Chinese as substrings, Latin as whole words (any case)."""
    low = text.lower()
    found = set()
    for b in blocked:
        w = b.strip().lower()
        if not w:
            continue
        if CJK_RE.search(w):
            if w in low:
                found.add(b.strip())
        elif re.search(rf"(?<![\w]){re.escape(w)}(?![\w])", low):
            found.add(b.strip())
    return found


def language_problem(rewritten: str, query: str) -> str | None:
    """A rewrite must stay in the query's language: a Chinese query's rewrite keeps Chinese characters (a
    Latin name may dominate it: "AnySearch 价格"), an English query's rewrite stays English (``detect_lang``)."""
    want = detect(query)
    if want.unspaced:
        return None if CJK_RE.search(rewritten) else f"language changed ({want.code} → en)"
    got = detect(rewritten).code
    return f"language changed ({want.code} → {got})" if got != want.code else None


_ZH_DOUBLE_DE_RE = re.compile(r"的\s*的")
_ZH_DE_TIME_RE = re.compile(r"的\s*(?:今天|明天|后天|大后天|昨天|前天|今晚|明晚|周末|下周|上周|本周|今年|明年|去年|"
                            r"周[一二三四五六日]|星期[一二三四五六日天])[？?。！!]*$")
_EN_NAME_ITS_RE = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z0-9][\w.+\-]*\s+(?:its|their)\b")
_EN_DOUBLED_RE = re.compile(r"\b([A-Za-z]{3,})\s+\1\b", re.IGNORECASE)
_ZH_LEAD_NA_RE = re.compile(r"^那(?![个些里儿么样时边种家位款])\s*")
_ZH_TRAIL_NE_RE = re.compile(r"(?<=吗)呢([？?！!。~～\s]*)$")


def fluency_repair(rewritten: str, query: str) -> str:
    """Drop what a completion leaves of the follow-up's own glue: a leading 那, a 呢 after 吗 ("那番禺最近三天
    适合露营吗呢" → "番禺最近三天适合露营吗"), a word doubled where the phrase met the frame ("fixed fixed").
    A rewrite equal to the query is left alone.

    >>> fluency_repair("那番禺最近三天适合露营吗呢", "那番禺呢？")
    '番禺最近三天适合露营吗'
    """
    if rewritten.strip() == query.strip():
        return rewritten
    out = rewritten
    if _ZH_LEAD_NA_RE.match(rewritten) and CJK_RE.search(rewritten):
        out = _ZH_LEAD_NA_RE.sub("", rewritten)
    if CJK_RE.search(out):
        out = _ZH_TRAIL_NE_RE.sub(r"\1", out).rstrip()
    m = _EN_DOUBLED_RE.search(out)
    if m and not _EN_DOUBLED_RE.search(query):
        out = out[:m.start()] + m.group(1) + out[m.end():]  # "a 15-year fixed fixed" → "a 15-year fixed"
    return out or rewritten


def fluency_problem(rewritten: str, query: str) -> str | None:
    """What no person would type, in a rewrite that changed the query: a doubled 的, 'X 的后天' (a time
    expression hung on an entity), 'Name its price'. None when it reads well.

    >>> fluency_problem("杭州的后天", "后天呢？")
    "a time expression after 的 ('X 的后天')"
    >>> fluency_problem("And Sony WH-1000XM5 its price?", "And its price?")
    "a name before its/their ('X its')"
    """
    if rewritten.strip() == query.strip():
        return None
    if _ZH_DOUBLE_DE_RE.search(rewritten) and not _ZH_DOUBLE_DE_RE.search(query):
        return "a doubled 的"
    if _ZH_DE_TIME_RE.search(rewritten) and not _ZH_DE_TIME_RE.search(query):
        return "a time expression after 的 ('X 的后天')"
    if _EN_NAME_ITS_RE.search(rewritten) and not _EN_NAME_ITS_RE.search(query):
        return "a name before its/their ('X its')"
    return None


def output_problem(rewritten: str, query: str, history: Sequence[Message], topic: str | None = None, *,
                   max_zh_chars: int = MAX_ZH_CHARS, max_en_words: int = MAX_EN_WORDS,
                   blocked: Iterable[str] = (), extra: Iterable[str] = ()) -> str | None:
    """The first reason an LLM rewrite must be rejected, or None when it may be used.

    Checked in order: empty or no words; too long; a blocked word; another language; unfaithful (content
    words found neither in the query, ``history``, ``topic`` nor ``extra``).

    >>> output_problem("AnySearch 的价格", "价格呢？", [Message("user", "AnySearch 支持哪些检索方式？")]) is None
    True
    """
    text = rewritten.strip()
    if not text:
        return "empty"
    if not any(ch.isalnum() for ch in text):
        return "no words"
    lang = detect(query).code
    why = length_problem(text, query, lang, max_zh_chars=max_zh_chars, max_en_words=max_en_words)
    if why:
        return why
    bad = blocked_words_found(text, blocked)
    if bad:
        return f"blocked words ({', '.join(sorted(bad))})"
    why = language_problem(text, query)
    if why:
        return why
    added = unfaithful_words(text, query, history, topic, extra)
    if added:
        return f"unfaithful: adds {', '.join(sorted(added)[:5])}"
    return None
