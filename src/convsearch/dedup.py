"""Deduplicate hits in three passes, each keeping the best-ranked copy:

1. same canonical URL (w3lib's ``canonicalize_url``: scheme/host case, sorted query, no fragment; plus
   tracking parameters dropped, http/https and a trailing slash folded) or same id;
2. same content fingerprint: sha256 of the normalised title + snippet;
3. near-duplicates: 64-bit SimHash (Charikar 2002) over 8-byte shingles, within ``max_bits`` Hamming
   distance, each candidate confirmed by the Jaccard similarity of the two shingle sets (≥ 0.8). Manku et
   al. (2007) use 3 bits for whole web pages; snippets are short, so a two-character edit moves up to
   ~11 bits while unrelated texts sit at 32 ± 4. The Jaccard check keeps texts from one template
   (weather outlooks differing in a city and numbers: Jaccard ~0.3) apart, so the default is 12 bits.

``keep`` chooses which copy's *position* survives when hits are re-sorted by date: "best" keeps the ranked
order; "latest" / "earliest" keep the newest / oldest copy in each group; metadata always comes from the
best-ranked copy.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import repeat
from urllib.parse import urlsplit, urlunsplit

import numpy as np
from w3lib.url import canonicalize_url, url_query_cleaner

from .text import ascii_marks, collapse_spaces, normalize
from .types import Hit

TRACKING_PARAMS = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "utm_id", "gclid",
                   "fbclid", "msclkid", "mc_cid", "mc_eid", "ref", "ref_src", "spm", "from")


_PLAIN_URL_RE = re.compile(r"https?://([a-z0-9.-]+)(/[a-z0-9._~/-]*)?$")


@lru_cache(maxsize=4096)
def canonical_url(url: str) -> str:
    """Canonical form of a URL for equality; '' for an empty or unparsable URL."""
    url = url.strip()
    if not url:
        return ""
    m = _PLAIN_URL_RE.match(url)
    if m:  # no query, fragment, port, escapes or upper case: nothing for w3lib to do but split
        return "//" + m.group(1).removeprefix("www.") + ((m.group(2) or "").rstrip("/") or "/")
    try:
        u = url_query_cleaner(canonicalize_url(url), TRACKING_PARAMS, remove=True)
        parts = urlsplit(u)
        host = (parts.hostname or "").lower().removeprefix("www.")
        port = f":{parts.port}" if parts.port and parts.port not in (80, 443) else ""
        path = parts.path.rstrip("/") or "/"
        return urlunsplit(("", host + port, path, parts.query, ""))
    except ValueError:
        return url.lower()


def content_hash(hit: Hit) -> str:
    """The sha256 of the hit's normalised title and text (dedup itself compares the normalised strings, cached
    once in ``_content_key``)."""
    return hashlib.sha256(_content_key(f"{hit.title} {hit.text}").encode("utf-8")).hexdigest()


@lru_cache(maxsize=16384)
def _content_key(text: str) -> str:
    """The normalised, lower-cased text the content hash is taken of: dedup compares these strings themselves
    (equal exactly when their sha256 is), without hashing them."""
    # ASCII: NFKC changes nothing and lower() keeps the spacing, so normalize(text).lower() is the folded text
    # the SimHash pass reads next (computed once for both)
    if text.isascii():
        return _folded(text)
    # Most Chinese text: NFKC only writes the full-width marks in ASCII (the check _nfkc makes). lower() maps
    # character by character but for Σ (its final form depends on its neighbours), keeps every space a space and
    # makes none; the marks have no case and are no space. So collapsing, lowering and the swap commute, and the
    # key is the folded text (already needed for the SimHash) with the marks swapped: one pass, not three.
    if "\u03a3" not in text and "\u3000" not in text:
        if unicodedata.is_normalized("NFKC", text):
            return _folded(text)
        if unicodedata.is_normalized("NFKC", ascii_marks(text)):
            return ascii_marks(_folded(text))
    return normalize(text).lower()


@lru_cache(maxsize=1024)  # dedup's content hash and SimHash read each head text within one call
def _folded(text: str) -> str:
    return collapse_spaces(text.lower())


_SHINGLE = 8  # bytes: ~3 CJK characters or a short English word with its neighbours
_M1, _M2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)
_TAIL = np.arange(1, _SHINGLE)


def _bytes(text: str) -> bytes:
    raw = _folded(text).encode("utf-8")
    return raw if len(raw) >= _SHINGLE else raw.ljust(_SHINGLE, b"\0")


_SIMHASH_CACHE: dict[str, int] = {}
# a text's sampled shingle hashes: rows a..b of one batch's array (sliced only when the Jaccard check reads them)
_SAMPLED: dict[str, tuple[np.ndarray, int, int]] = {}
_MIN_SAMPLED = 16


def simhashes(texts: Sequence[str]) -> list[int]:
    """64-bit SimHash (Charikar 2002) of each text over its byte shingles, computed for all the new texts
    in one numpy pass (per-call overhead, not arithmetic, dominates at snippet size)."""
    if len(_SIMHASH_CACHE) > 16384:  # before the look-up: every text asked for is then in the cache below
        _SIMHASH_CACHE.clear()
        _SAMPLED.clear()
    todo = [t for t in dict.fromkeys(texts) if t not in _SIMHASH_CACHE]
    if todo:
        raws = [_bytes(t) for t in todo]
        lens = np.array([len(r) for r in raws])
        ends = np.cumsum(lens)
        starts = ends - lens
        # the 8-byte windows at every offset of the joined texts (padded so the last text's windows all exist),
        # as little-endian values: a uint64 view with a stride of one byte; the arithmetic copies them out
        # (and wraps modulo 2**64 without a warning; only numpy scalars warn on overflow)
        buf = b"".join(raws) + bytes(_SHINGLE - 1)
        h = np.ndarray((len(buf) - _SHINGLE + 1,), dtype="<u8", buffer=buf, strides=(1,)) * _M1
        h ^= h >> np.uint64(31)
        h *= _M2
        # Broder's mod-p sampling: keep the shingles whose hash is 0 mod 4 (the same shingles in every
        # text, so fingerprints stay comparable); a short text keeps all of its shingles. A text's last 7
        # offsets start windows that run into the next text: never kept
        tails = ends[:, None] - _TAIL
        keep = (h & np.uint64(3)) == 0
        keep[tails] = False
        counts = np.add.reduceat(keep, starts)
        short = counts < _MIN_SAMPLED
        if short.any():
            keep |= np.repeat(short, lens)
            keep[tails] = False
            counts = np.where(short, lens - (_SHINGLE - 1), counts)
        h = h.compress(keep)  # (a boolean index, at half the cost)
        seg_end = np.cumsum(counts)
        seg = seg_end - counts
        # one row of 64 bits per shingle (unpacked flat: twice as fast as along an axis, the same bytes)
        bits = np.unpackbits(h.view(np.uint8), bitorder="little").reshape(-1, 64)
        most = counts.max()
        if most < 1 << 8:
            # per-text column sums as eight 8-bit lanes per uint64 (no lane can reach 256, so none carries into
            # the next): one reduceat over 8 columns; a bit is set when more than half the shingles have it
            sums = np.add.reduceat(bits.view(np.uint64), seg, axis=0).view(np.uint8)
            major = sums > (counts >> 1)[:, None]
        elif most < 1 << 15:  # four 16-bit lanes (neither a lane nor 2·sum below can overflow)
            sums = np.add.reduceat(bits.astype(np.uint16).view(np.uint64), seg, axis=0).view(np.uint16)
            major = sums * 2 > counts[:, None]
        else:
            sums = np.stack([bits[a:a + n].sum(axis=0, dtype=np.int32) for a, n in zip(seg, counts)])
            major = sums * 2 > counts[:, None]
        # each row's 8 bytes, little-endian, are its fingerprint: one view for all rows
        _SIMHASH_CACHE.update(zip(todo, np.packbits(major, axis=1, bitorder="little").view("<u8").ravel().tolist()))
        _SAMPLED.update(zip(todo, zip(repeat(h), seg.tolist(), seg_end.tolist())))
    return [_SIMHASH_CACHE[t] for t in texts]


def simhash(text: str) -> int:
    """64-bit SimHash of one text (see ``simhashes``)."""
    return simhashes([text])[0]


def _sampled_set(text: str) -> set[int]:
    if text not in _SAMPLED:
        simhashes([text])
    h, a, b = _SAMPLED[text]
    return set(h[a:b].tolist())  # a few hundred ints: a Python set beats np.unique + intersect1d (~5x)


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' sampled shingle sets (mod-4 sampling estimates the full
    Jaccard without bias: Broder 1997)."""
    sa, sb = _sampled_set(a), _sampled_set(b)
    inter = len(sa & sb)
    union = len(sa) + len(sb) - inter
    return inter / union if union else 1.0


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


@dataclass(frozen=True, slots=True)
class DedupStats:
    before: int
    after: int
    by_url: int
    by_hash: int
    by_near: int


def dedup(hits: Sequence[Hit], *, max_bits: int = 12, min_jaccard: float = 0.8, near: bool = True,
          keep: str = "best", renumber: bool = True) -> tuple[list[Hit], DedupStats]:
    """Remove duplicates from ranked ``hits``; returns the survivors (re-ranked 1..n) and counts.
    ``renumber=False`` leaves each survivor's old rank (for a caller that reranks them anyway)."""
    seen_id: dict[str, int] = {}
    seen_url: dict[str, int] = {}
    seen_hash: dict[str, int] = {}
    groups: list[list[Hit]] = []
    texts: list[str] = []  # each group's first hit's "title text" (its content hash and SimHash read it)
    by_url = by_hash = by_near = 0
    for h in hits:
        # the id, then the canonical URL: the first one seen before names the group
        cu = canonical_url(h.url) if h.url else ""
        g = seen_id.get(h.id)
        if g is None and cu:
            g = seen_url.get(cu)
        if g is not None:
            groups[g].append(h)
            by_url += 1
            continue
        text = f"{h.title} {h.text}"
        ch = _content_key(text)  # what content_hash(h) hashes
        if ch in seen_hash:
            groups[seen_hash[ch]].append(h)
            by_hash += 1
            continue
        idx = len(groups)
        groups.append([h])
        texts.append(text)
        seen_id[h.id] = idx
        if cu:
            seen_url[cu] = idx
        seen_hash[ch] = idx
    if near and len(groups) > 1:
        fps = simhashes(texts)
        merged: list[list[Hit]] = []
        kept_fps: list[int] = []
        kept_texts: list[str] = []
        for g, fp, text in zip(groups, fps, texts):
            j = None
            for i, k in enumerate(kept_fps):
                if (fp ^ k).bit_count() <= max_bits and jaccard(text, kept_texts[i]) >= min_jaccard:
                    j = i
                    break
            if j is None:
                merged.append(list(g))
                kept_fps.append(fp)
                kept_texts.append(text)
            else:
                merged[j].extend(g)
                by_near += 1  # its url/hash duplicates were counted when they joined it
        groups = merged
    out = [_pick(g, keep) for g in groups]
    if renumber:
        out = [h if h.rank == r else Hit(h.id, h.title, h.text, h.score, h.url, h.date, h.source, r, h.metadata)
               for r, h in enumerate(out, start=1)]  # (a hit already at its rank is kept: hits are immutable)
    return out, DedupStats(len(hits), len(out), by_url, by_hash, by_near)


def _pick(group: list[Hit], keep: str) -> Hit:
    best = group[0]
    if keep == "best" or len(group) == 1:
        return best
    dated = [h for h in group if h.date]
    if not dated:
        return best
    chosen = max(dated, key=lambda h: h.date or "") if keep == "latest" else min(dated, key=lambda h: h.date or "")
    # metadata of the best-ranked copy, content and date of the chosen one
    return replace(best, text=chosen.text, date=chosen.date, url=chosen.url or best.url)
