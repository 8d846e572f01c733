"""Citations and the context string handed to an LLM."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit

from .text import truncate_tokens
from .types import Citation, Hit

_PLAIN_HOST_RE = re.compile(r"https?://([A-Za-z0-9.-]*)(?=[/?#]|\Z)")


def domain(url: str) -> str:
    m = _PLAIN_HOST_RE.match(url)
    if m:  # no userinfo, port, brackets, escapes or stray whitespace: urlsplit's hostname is the lower-cased host
        return m.group(1).lower().removeprefix("www.")
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.")


def _parse_date(s: str | None) -> date | None:
    if not s:
        return None
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).date()
    except ValueError:
        try:
            return date.fromisoformat(s[:10])
        except ValueError:
            return None


def is_stale(d: str | None, *, stale_days: int, today: date | None = None) -> bool:
    parsed = _parse_date(d)
    if parsed is None:
        return False
    return (today or date.today()) - parsed > timedelta(days=stale_days)


def citations(hits: Sequence[Hit], *, snippet_tokens: int = 120, stale_days: int = 365,
              today: date | None = None, time_sensitive: bool | None = None) -> list[Citation]:
    """Number hits [1..n]; snippet cut to ``snippet_tokens`` tokens (jieba words + Latin words).

    Stale: dated more than ``stale_days`` ago; with ``time_sensitive`` given, only when it is True (an old page
    is no news for "SpaceX founder", it is for "今天金价"). Undated: a web result without a date."""
    out = []
    for n, h in enumerate(hits, start=1):
        md = h.metadata
        web = md.get("source_type") == "web"
        stale = time_sensitive is not False and is_stale(h.date, stale_days=stale_days, today=today)
        out.append(Citation(
            n=n, id=h.id, title=h.title or h.id, domain=domain(h.url), date=h.date,
            snippet=truncate_tokens(" ".join(h.text.split()), snippet_tokens), url=h.url,
            stale=stale, score=h.score, undated=web and not h.date,
            provider=str(md.get("provider", "")) if web else "", tier=str(md.get("tier", "")),
        ))
    return out


def context(cites: Sequence[Citation]) -> str:
    """A context block for an LLM prompt: one numbered entry per source, ready to cite as [n]."""
    blocks = []
    for c in cites:
        meta = ", ".join(x for x in (c.domain, c.date, "undated" if c.undated else "", "stale" if c.stale else "",
                                     f"tier {c.tier}" if c.tier else "") if x)
        head = f"[{c.n}] {c.title}" + (f" ({meta})" if meta else "")
        blocks.append(f"{head}\n{c.snippet}")
    return "\n\n".join(blocks)
