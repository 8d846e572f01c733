"""Is a query about what is true *now*? ``time_sensitive`` answers with the recency window it deserves.

Time-sensitive queries (今天, 昨天, 最近, 最新, 本周, 这几天, 现在, 价格, 天气, 比分; today, latest, this week, current,
now, price, score, and an explicit recent date) get a default recency when the caller gave none, are never
answered from a cache, and mark old results stale. The words are data (``data/time_sensitive.txt``), each under
the window it asks for: day (weather, scores, now), week (yesterday, latest, news), month (prices, current).
When several match, the narrowest window wins. An explicit date within the last week asks for a week, within
the last month for a month; an older or future date asks for nothing.

>>> from datetime import date
>>> time_sensitive("深圳今天天气怎么样", today=date(2026, 12, 1))
<Recency.DAY: 'day'>
>>> time_sensitive("AnySearch price", today=date(2026, 12, 1))
<Recency.MONTH: 'month'>
>>> time_sensitive("Who founded SpaceX?") is None
True
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import lru_cache
from importlib import resources

from .backends.base import Recency

_ORDER = (Recency.DAY, Recency.WEEK, Recency.MONTH)
_EN_WORD_RE = re.compile(r"[a-z]+(?:_[a-z]+)*")
_ISO_DATE_RE = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_ZH_DATE_RE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_EN_DATE_RE = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+"
                         r"(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b", re.I)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), start=1)}


@lru_cache(maxsize=1)
def _lists() -> tuple[tuple[Recency, frozenset[str], frozenset[str]], ...]:
    text = resources.files("convsearch.data").joinpath("time_sensitive.txt").read_text(encoding="utf-8")
    zh: dict[Recency, set[str]] = {r: set() for r in _ORDER}
    en: dict[Recency, set[str]] = {r: set() for r in _ORDER}
    current: Recency | None = None
    for line in text.splitlines():
        if line.startswith("# ["):
            current = Recency(line[3:].split("]")[0])
            continue
        if line.startswith("#") or current is None:
            continue
        for w in line.split():
            (en if w.isascii() else zh)[current].add(w.lower())
    return tuple((r, frozenset(zh[r]), frozenset(en[r])) for r in _ORDER)


def _explicit_date(query: str, today: date) -> date | None:
    for m in _ISO_DATE_RE.finditer(query):
        d = _safe(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if d:
            return d
    m = _ZH_DATE_RE.search(query)
    if m:
        return _safe(int(m.group(1)) if m.group(1) else today.year, int(m.group(2)), int(m.group(3)))
    m = _EN_DATE_RE.search(query)
    if m:
        year = int(m.group(3)) if m.group(3) else today.year
        return _safe(year, _MONTHS[m.group(1).lower()[:3]], int(m.group(2)))
    return None


def _safe(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def time_sensitive(query: str, *, today: date | None = None) -> Recency | None:
    """The recency window a time-sensitive ``query`` deserves, or None when it is not time-sensitive."""
    today = today or date.today()
    low = query.lower()
    tokens = set(_EN_WORD_RE.findall(low))
    joined = "_".join(_EN_WORD_RE.findall(low))
    for rec, zh, en in _lists():
        if any(w in query for w in zh):
            return rec
        if tokens & en or any("_" in w and f"_{w}_" in f"_{joined}_" for w in en):
            return rec
    d = _explicit_date(query, today)
    if d is not None and d <= today:
        age = today - d
        if age <= timedelta(days=7):
            return Recency.WEEK
        if age <= timedelta(days=31):
            return Recency.MONTH
    return None


def default_recency(query: str, recency: Recency | str | None, *,
                    today: date | None = None) -> tuple[Recency | None, str | None]:
    """The recency to search with: the caller's when given, else the time-sensitive default; and a trace note
    when the default was applied."""
    given = Recency.parse(recency)
    if given is not None:
        return given, None
    rec = time_sensitive(query, today=today)
    if rec is None:
        return None, None
    return rec, f"recency {rec.value}: default for a time-sensitive query"


__all__ = ["default_recency", "time_sensitive"]
