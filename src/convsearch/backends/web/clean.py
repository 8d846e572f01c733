"""Turning a provider's raw result into a clean ``Hit`` (pure functions, shared by every web adapter).

- ``clean_text``: HTML tags dropped, entities decoded, whitespace collapsed;
- ``cut_snippet``: at most ``max_tokens`` tokens (jieba words + Latin words, the index's tokenizer), cut at the
  last sentence end that fits; a first sentence longer than that is cut at a word boundary, never mid-word;
- ``published_date``: a provider's date field as ISO ``YYYY-MM-DD``: ISO and RFC 2822 timestamps, "Mar 5, 2026",
  "2026年3月5日", and relative forms ("3 days ago", "2 小时前", "昨天") counted back from the request time;
- ``web_hit``: all of it, plus the canonical URL (dedup's), the domain, and provider + rank in ``metadata``.

>>> from datetime import datetime, timezone
>>> now = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
>>> published_date("2 小时前", now), published_date("3 days ago", now), published_date("Mar 5, 2026", now)
('2026-12-01', '2026-11-28', '2026-03-05')
>>> clean_text("<b>AnySearch</b> &amp; BM25")
'AnySearch & BM25'
"""

from __future__ import annotations

import html
import re
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from w3lib.url import url_query_cleaner

from ...dedup import canonical_url
from ...format import domain
from ...text import count_tokens, detect_lang, truncate_tokens
from ...types import Hit

_TAG_RE = re.compile(r"<[^>]{0,400}>")
_WS_RE = re.compile(r"\s+")
# A sentence ends at 。！？；… (CJK, no space needed) or at . ! ? ; followed by white space or the end.
_SENT_END_RE = re.compile(r"[。！？；…]+[”’」』）)]*|[.!?;]+[\"'”’)]*(?=\s|$)")

_MONTHS = {m: i for i, ms in enumerate(
    (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")), start=1) for m in ms}
_UNIT_S = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400, "month": 30 * 86400,
           "year": 365 * 86400,
           "秒": 1, "分钟": 60, "分": 60, "小时": 3600, "个小时": 3600, "天": 86400, "日": 86400, "周": 7 * 86400,
           "星期": 7 * 86400, "个星期": 7 * 86400, "个月": 30 * 86400, "月": 30 * 86400, "年": 365 * 86400}
_EN_AGO_RE = re.compile(r"^(\d+|an?|one)\s+(second|minute|hour|day|week|month|year)s?\s+ago$")
_ZH_AGO_RE = re.compile(r"^(\d+)\s*(秒|分钟|分|个小时|小时|天|日|个星期|星期|周|个月|月|年)\s*前$")
_ZH_DAYS = {"刚刚": 0, "今天": 0, "昨天": 1, "前天": 2}
_EN_DAYS = {"just now": 0, "today": 0, "yesterday": 1}
_EN_MDY_RE = re.compile(r"^([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?$")
_EN_DMY_RE = re.compile(r"^(\d{1,2})\s+([a-z]{3,9})\.?,?\s+(\d{4})$")
_ZH_YMD_RE = re.compile(r"^(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*日$")
_ISO_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


def clean_text(text: Any) -> str:
    """Tags removed, entities decoded (``&amp;`` → ``&``, ``&nbsp;`` → space), white space collapsed."""
    if not text:
        return ""
    s = html.unescape(_TAG_RE.sub("", str(text)))
    return _WS_RE.sub(" ", s.replace("\u00a0", " ")).strip()


def cut_snippet(text: str, max_tokens: int = 120) -> str:
    """``text`` if it has at most ``max_tokens`` tokens, else its longest run of whole sentences that fits, else
    its first ``max_tokens`` tokens at a word boundary followed by "…"."""
    if len(text) <= max_tokens or count_tokens(text) <= max_tokens:  # a token is at least one character
        return text
    best = ""
    for m in _SENT_END_RE.finditer(text):
        head = text[: m.end()].rstrip()
        if count_tokens(head) > max_tokens:
            break
        best = head
    return best or truncate_tokens(text, max_tokens)


def published_date(value: Any, now: datetime) -> str | None:
    """A provider's date (ISO, RFC 2822, "Mar 5, 2026", "2026年3月5日", "3 days ago", "2 小时前", "昨天" …) as
    ``YYYY-MM-DD``, relative forms counted back from ``now`` (the request time, UTC); None when unreadable."""
    d = _parse_date(value, now)
    return None if d is None else d.isoformat()


def _parse_date(value: Any, now: datetime) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):  # epoch seconds
        try:
            return datetime.fromtimestamp(float(value), UTC).date()
        except (OverflowError, OSError, ValueError):
            return None
    s = _WS_RE.sub(" ", str(value)).strip()
    low = s.lower().rstrip(".")
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if low in _EN_DAYS:
        return (now - timedelta(days=_EN_DAYS[low])).date()
    if s in _ZH_DAYS:
        return (now - timedelta(days=_ZH_DAYS[s])).date()
    m = _EN_AGO_RE.match(low)
    if m:
        n = 1 if m.group(1) in ("a", "an", "one") else int(m.group(1))
        return (now - timedelta(seconds=n * _UNIT_S[m.group(2)])).date()
    m = _ZH_AGO_RE.match(s)
    if m:
        return (now - timedelta(seconds=int(m.group(1)) * _UNIT_S[m.group(2)])).date()
    m = _ISO_RE.match(s)
    if m:
        try:
            dt = datetime.fromisoformat(s.replace("Z", "+00:00").replace(" ", "T", 1))
            if dt.tzinfo is not None:
                dt = dt.astimezone(UTC)
            return dt.date()
        except ValueError:
            try:
                return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                return None
    if "," in s and re.search(r"\d{1,2}:\d{2}", s):  # RFC 2822: "Mon, 30 Nov 2026 08:00:00 GMT"
        try:
            dt = parsedate_to_datetime(s)
            return (dt.astimezone(UTC) if dt.tzinfo else dt).date()
        except (TypeError, ValueError, IndexError):
            pass
    m = _EN_MDY_RE.match(low)
    if m and m.group(1) in _MONTHS:
        return _ymd(m.group(3), _MONTHS[m.group(1)], int(m.group(2)), now)
    m = _EN_DMY_RE.match(low)
    if m and m.group(2) in _MONTHS:
        return _ymd(m.group(3), _MONTHS[m.group(2)], int(m.group(1)), now)
    m = _ZH_YMD_RE.match(s)
    if m:
        return _ymd(m.group(1), int(m.group(2)), int(m.group(3)), now)
    return None


def _ymd(year: str | None, month: int, day: int, now: datetime) -> date | None:
    """A date; without a year, this year's, or last year's when this year's would be in the future."""
    try:
        if year:
            return date(int(year), month, day)
        d = date(now.year, month, day)
        return d if d <= now.date() else date(now.year - 1, month, day)
    except ValueError:
        return None


# Query parameters that only track the click (never select content): dropped from the URL a citation shows.
# Dedup's canonical form drops more (ref, from …), but those can select content, so a shown link keeps them.
_TRACKING = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "utm_id", "gclid", "fbclid",
             "msclkid", "mc_cid", "mc_eid", "spm")


def shown_url(url: str) -> str:
    """``url`` without click-tracking parameters, everything else (order, repeats, fragment) as given.

    >>> shown_url("https://www.example.com/pricing?plan=pro&utm_source=newsletter#faq")
    'https://www.example.com/pricing?plan=pro#faq'
    """
    if "?" not in url:
        return url
    return url_query_cleaner(url, _TRACKING, remove=True, unique=False, keep_fragments=True)


def web_hit(provider: str, rank: int, *, title: Any, url: Any, snippet: Any, published: Any = None,
            score: float | None = None, now: datetime, snippet_tokens: int = 120,
            extra: dict[str, Any] | None = None) -> Hit | None:
    """One cleaned Hit from a provider's result; None for a result with no URL (nothing to cite).

    ``id`` is the canonical URL (so the same page from two providers is one result after dedup), ``source`` the
    provider, ``metadata``: provider, rank, domain, source (the domain, for ``Filters.source``), source_type
    ``web``, lang, and the raw date when one was given."""
    u = shown_url(str(url or "").strip())
    if not u:
        return None
    t = clean_text(title)
    text = cut_snippet(clean_text(snippet), snippet_tokens)
    dom = domain(u)
    md: dict[str, Any] = {"provider": provider, "rank": rank, "domain": dom, "source": dom, "source_type": "web",
                          "lang": detect_lang(f"{t} {text}")}
    if published not in (None, ""):
        md["published_raw"] = str(published)
    if extra:
        md.update(extra)
    return Hit(id=canonical_url(u) or u, title=t or dom, text=text,
               score=float(score) if score is not None else 1.0 / rank, url=u,
               date=published_date(published, now), source=provider, rank=rank, metadata=md)


__all__ = ["clean_text", "cut_snippet", "published_date", "shown_url", "web_hit"]
