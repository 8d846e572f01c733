"""Citations and the context string handed to an LLM."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from .text import collapse_spaces, truncate_tokens
from .types import Citation, Hit

_PLAIN_HOST_RE = re.compile(r"https?://([A-Za-z0-9.-]*)(?=[/?#]|\Z)")
SECTION_SEP = " › "
# a passage of an indexed file: it names its file and one of where in it (records with a bare ``source`` tag,
# e.g. "blog", are not passages and print as before)
_WHERE_KEYS = ("doc_id", "chunk", "section", "page")


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


def scalar_metadata(md: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON scalars of a hit's metadata (str, int, float, bool, None; a float only when finite)."""
    return {str(k): v for k, v in md.items()
            if v is None or isinstance(v, (str, int, bool)) or (isinstance(v, float) and math.isfinite(v))}


def is_passage(md: Mapping[str, Any]) -> bool:
    """A passage of an indexed file: a ``source`` (its path) and where in it (doc_id, chunk, section or page);
    web results (whose ``source`` is their domain) never are."""
    return (bool(md.get("source")) and md.get("source_type") != "web"
            and any(md.get(k) not in (None, "") for k in _WHERE_KEYS))


def file_name(path: str) -> str:
    """The base name of a path, / or \\ separated: ``file_name("docs/admin/nfs.pdf")`` → ``'nfs.pdf'``."""
    return re.split(r"[\\/]", path.rstrip("/\\"))[-1] or path


def pages(md: Mapping[str, Any]) -> str:
    """``p. 12`` or ``p. 12–13`` from ``page`` / ``page_end``; "" without a page."""
    first, last = md.get("page"), md.get("page_end")
    if first in (None, ""):
        return ""
    return f"p. {first}–{last}" if last not in (None, "", first) else f"p. {first}"


_SITE_SEPS = (" — ", " – ", " - ", " | ", " · ", ": ")


def heading(c: Citation) -> str:
    """What a [n] line names: ``Title › Section`` for a passage with a section (the section's leading title
    not repeated), else the title. A page title that is the page's first heading with the site's name before or
    after it ("venv — Python 3.11 documentation") gives way to that heading.

    >>> md = {"source": "csv.html", "section": "csv — CSV File Reading › Examples"}
    >>> heading(Citation(1, "csv#3", "csv — CSV File Reading — Python 3.11 documentation", "", None, "", "", False,
    ...                  0.0, metadata=md))
    'csv — CSV File Reading › Examples'
    """
    section = str(c.metadata.get("section") or "") if is_passage(c.metadata) else ""
    if not section:
        return c.title
    parts = [p for p in section.split(SECTION_SEP) if p.strip()]
    title, first = c.title.strip(), parts[0].strip() if parts else ""
    if first == title:
        parts = parts[1:]
    elif first and any(title.startswith(first + sep) or title.endswith(sep + first) for sep in _SITE_SEPS):
        return SECTION_SEP.join(parts)
    return SECTION_SEP.join([c.title, *parts])


def origin(c: Citation) -> tuple[str, ...]:
    """Where a result comes from, as the (parenthesised) items of its [n] line: the domain; for a passage the
    domain or, without a url, the file's base name, then its pages."""
    if not is_passage(c.metadata):
        return (c.domain,)
    return (c.domain or file_name(str(c.metadata["source"])), pages(c.metadata))


def citations(hits: Sequence[Hit], *, snippet_tokens: int = 120, stale_days: int = 365,
              today: date | None = None, time_sensitive: bool | None = None,
              passage_tokens: int = 400) -> list[Citation]:
    """Number hits [1..n]; snippet cut to ``snippet_tokens`` tokens (jieba words + Latin words); a passage the
    splitter bounded (its metadata has ``chunk``) is cited whole, up to ``passage_tokens``.

    Stale: dated more than ``stale_days`` ago; with ``time_sensitive`` given, only when it is True (an old page
    is no news for "SpaceX founder", it is for "今天金价"). Undated: a web result without a date."""
    out = []
    for n, h in enumerate(hits, start=1):
        md = h.metadata
        web = md.get("source_type") == "web"
        stale = time_sensitive is not False and is_stale(h.date, stale_days=stale_days, today=today)
        cap = snippet_tokens
        if md.get("chunk") is not None and not web:  # a merged run of passages: each member's share, whole
            first, last = md.get("chunk"), md.get("chunk_end", md.get("chunk"))
            cap = passage_tokens * (last - first + 1 if isinstance(first, int) and isinstance(last, int) and
                                    last >= first else 1)
        out.append(Citation(
            n=n, id=h.id, title=h.title or h.id, domain=domain(h.url), date=h.date,
            snippet=truncate_tokens(collapse_spaces(h.text), cap), url=h.url,
            stale=stale, score=h.score, undated=web and not h.date,
            provider=str(md.get("provider", "")) if web else "", tier=str(md.get("tier", "")),
            metadata=scalar_metadata(md) if md else {},
        ))
    return out


def context(cites: Sequence[Citation]) -> str:
    """A context block for an LLM prompt: one numbered entry per source, ready to cite as [n]; a passage of an
    indexed file names its section, file and pages: ``[2] Admin Guide › NFS (admin.pdf, p. 12–13)``."""
    blocks = []
    for c in cites:
        meta = ", ".join(x for x in (*origin(c), c.date, "undated" if c.undated else "", "stale" if c.stale else "",
                                     f"tier {c.tier}" if c.tier else "") if x)
        head = f"[{c.n}] {heading(c)}" + (f" ({meta})" if meta else "")
        blocks.append(f"{head}\n{c.snippet}")
    return "\n\n".join(blocks)
