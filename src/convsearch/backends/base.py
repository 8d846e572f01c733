"""The SearchBackend contract (sync + async twins), its typed options, and an in-memory test double.

A backend answers ``search(query, *, top_k, filters, recency, dense_query) -> list[Hit]`` and declares what it
can do natively in ``capabilities``. What it cannot apply natively (a filter field, a recency window) is applied
after the search by one shared wrapper (``backends.compose.Applied``), and the trace says which: natively,
after the search, or not applicable. Nothing a caller asks for is silently ignored.

>>> b = InMemoryBackend([Document("1", "AnySearch 支持混合检索", date="2026-11-30")])
>>> [h.id for h in b.search("混合检索", top_k=3)]
['1']
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Protocol, TypeGuard, runtime_checkable

from ..errors import InputError
from ..text import words
from ..types import Document, Hit


class Recency(str, enum.Enum):
    """The ``recency`` values of the ``web_search`` tool schema: results dated within the last day, week …"""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"
    NO_LIMIT = "no_limit"

    @property
    def days(self) -> int | None:
        """The window in days (None for ``no_limit``); a month is 31 days and a year 366, so the edge is kept."""
        return _RECENCY_DAYS.get(self)

    def since(self, today: date) -> date | None:
        """The oldest date a result may carry for this window, counted back from ``today``."""
        d = self.days
        return None if d is None else today - timedelta(days=d)

    @classmethod
    def parse(cls, value: "Recency | str | None") -> "Recency | None":
        """``None``, a Recency or its value; anything else is an InputError naming the allowed values."""
        if value is None or isinstance(value, Recency):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise InputError(f"unknown recency {value!r}; choose one of: {', '.join(r.value for r in cls)}") from None


_RECENCY_DAYS = {Recency.DAY: 1, Recency.WEEK: 7, Recency.MONTH: 31, Recency.YEAR: 366}

FILTER_FIELDS = ("lang", "source", "source_type", "kb_version", "date_from", "date_to")


@dataclass(frozen=True, slots=True)
class Filters:
    """Typed search filters; a field left None does not filter.

    ``source`` is the document's source (a site or a knowledge base name, ``metadata["source"]``),
    ``source_type`` e.g. ``faq`` / ``doc`` / ``web``, ``kb_version`` the knowledge-base release, and the date
    range is inclusive on ISO dates (``YYYY``, ``YYYY-MM`` and ``YYYY-MM-DD`` count as their first day).
    """

    lang: str | None = None
    source: str | None = None
    source_type: str | None = None
    kb_version: str | None = None
    date_from: str | None = None
    date_to: str | None = None

    def __post_init__(self) -> None:
        for k in ("date_from", "date_to"):
            v = getattr(self, k)
            if v is not None and parse_date(v) is None:
                raise InputError(f"filter {k} {v!r} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)")

    @classmethod
    def of(cls, value: "Filters | Mapping[str, Any] | None") -> "Filters | None":
        """Accept a Filters, a plain dict of its fields (the old ``filters={"lang": "zh"}``) or None."""
        if value is None or isinstance(value, Filters):
            return value if value is None or not value.empty else None
        unknown = sorted(set(value) - set(FILTER_FIELDS))
        if unknown:
            raise InputError(f"unknown filter field(s) {', '.join(map(repr, unknown))}; "
                             f"filters are: {', '.join(FILTER_FIELDS)}")
        f = cls(**{k: (None if v is None else str(v)) for k, v in value.items()})
        return None if f.empty else f

    @property
    def empty(self) -> bool:
        return all(getattr(self, k) is None for k in FILTER_FIELDS)

    def fields(self) -> dict[str, str]:
        """The fields that filter, as a dict."""
        return {k: v for k in FILTER_FIELDS if (v := getattr(self, k)) is not None}

    def matches(self, hit: Hit) -> bool:
        """Whether ``hit`` passes every field (an undated hit fails a date range)."""
        md = hit.metadata
        for k in ("lang", "source", "source_type", "kb_version"):
            want = getattr(self, k)
            if want is not None and str(md.get(k, "")) != want:
                return False
        if self.date_from is not None or self.date_to is not None:
            d = hit_date(hit)
            if d is None:
                return False
            if self.date_from is not None and d < _iso_start(self.date_from):
                return False
            if self.date_to is not None and d > _iso_start(self.date_to):
                return False
        return True


def _iso_start(s: str) -> date:
    parts = [int(p) for p in s[:10].split("-")]
    return date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)


def parse_date(s: str | None) -> date | None:
    """An ISO ``YYYY[-MM[-DD]]`` prefix as a ``date`` (a bare year or year-month is its first day); None when
    empty or unreadable."""
    if not s:
        return None
    try:
        return _iso_start(str(s))
    except (ValueError, IndexError):
        return None


def hit_date(hit: Hit) -> date | None:
    """The hit's date as a ``date`` (ISO ``YYYY[-MM[-DD]]`` prefix), None when undated or unreadable."""
    return parse_date(hit.date)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend does natively. Whatever it lacks, the shared wrapper applies after the search.

    ``filters``: the Filters fields it applies itself; ``recency``: the windows it applies itself;
    ``dense``: it can search a separate ``dense_query`` (HyDE) on a dense side; ``writable``: add/delete;
    ``remote``: it calls a service over the network; ``web``: its results come from the open web (a
    time-sensitive question gets a default recency window, stale marks follow time sensitivity; a knowledge
    base on a Milvus server is remote but not web); ``paid``: each call costs money or quota (web APIs):
    query variants are not sent to it unless asked for.
    """

    writable: bool = False
    dense: bool = False
    remote: bool = False
    web: bool = False
    paid: bool = False
    filters: frozenset[str] = frozenset()
    recency: frozenset[Recency] = frozenset()


@runtime_checkable
class SearchBackend(Protocol):
    """One search engine behind our own types. ``filters`` / ``recency`` the backend lacks natively are applied
    by ``backends.compose.Applied``; ``dense_query`` (a hypothetical answer) is used only where
    ``capabilities.dense`` is true and ignored otherwise (the pipeline does not send it then)."""

    name: str
    capabilities: Capabilities

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]: ...

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]: ...

    def close(self) -> None: ...


@runtime_checkable
class ManyQueryBackend(SearchBackend, Protocol):
    """Optional: a backend that searches several query variants in one call and returns ONE list, each
    document once with its best score over the variants (``search_many`` semantics; Milvus runs them as one
    ``nq > 1`` request). ``dense_query`` replaces the first query on the dense side. The pipeline uses it when
    present; otherwise it calls ``search`` once per variant and fuses the lists by RRF."""

    def search_many(self, queries: Sequence[str], *, top_k: int = 10, filters: Filters | None = None,
                    recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]: ...

    async def asearch_many(self, queries: Sequence[str], *, top_k: int = 10, filters: Filters | None = None,
                           recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]: ...


def takes_many(backend: object) -> TypeGuard[ManyQueryBackend]:
    """Does ``backend`` search all of a turn's variants in one call? An attribute look-up: the protocol's
    runtime ``isinstance`` costs ~15 µs, paid per route on every turn (the local index answers no)."""
    return getattr(backend, "search_many", None) is not None


@runtime_checkable
class WritableBackend(SearchBackend, Protocol):
    """A backend that also stores documents (``capabilities.writable``): upsert by id and delete by id."""

    def add(self, docs: Iterable[Document]) -> int: ...

    def delete(self, ids: Iterable[str]) -> int: ...


class InMemoryBackend:
    """Test double: term-overlap ranking over a list of documents, same contract as the real index.

    It applies every filter field natively and recency natively (against ``today``, default the real date),
    so the contract suites can check the wrapper against a backend that needs none of it.
    """

    name = "memory"
    capabilities = Capabilities(writable=True, filters=frozenset(FILTER_FIELDS),
                                recency=frozenset(r for r in Recency if r is not Recency.NO_LIMIT))

    def __init__(self, docs: Iterable[Document] = (), *, today: date | None = None) -> None:
        self.docs: dict[str, Document] = {}
        self.queries: list[str] = []
        self.today = today
        self.add(docs)

    def add(self, docs: Iterable[Document]) -> int:
        n = 0
        for d in docs:
            self.docs[d.id] = d
            n += 1
        return n

    def delete(self, ids: Iterable[str]) -> int:
        return sum(1 for i in ids if self.docs.pop(i, None) is not None)

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        self.queries.append(query)
        f = Filters.of(filters)
        rec = Recency.parse(recency)
        oldest = rec.since(self.today or date.today()) if rec is not None else None
        q = set(words(query))
        scored = []
        for d in self.docs.values():
            s = len(q & set(words(f"{d.title} {d.text}")))
            if not s:
                continue
            h = _doc_hit(d, float(s), self.name)
            if f is not None and not f.matches(h):
                continue
            if oldest is not None and ((hd := hit_date(h)) is None or hd < oldest):
                continue
            scored.append((s, d.id, h))
        scored.sort(key=lambda p: (-p[0], p[1]))
        return [Hit(h.id, h.title, h.text, h.score, h.url, h.date, h.source, r, h.metadata)
                for r, (_, _, h) in enumerate(scored[:top_k], start=1)]

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        return self.search(query, top_k=top_k, filters=filters, recency=recency, dense_query=dense_query)

    def close(self) -> None:
        """Nothing to release."""


def from_settings(settings: Any) -> InMemoryBackend:
    """The registry's factory for ``memory``: an empty in-memory backend (tests, demos; nothing persists)."""
    return InMemoryBackend()


def batches(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    """``docs`` in lists of ``size`` (the last one shorter): writers commit one batch at a time."""
    batch: list[Document] = []
    for d in docs:
        batch.append(d)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def indexed_text(d: Document, sep: str = "\n") -> str:
    """What a writable backend indexes and embeds for ``d``: its title, the heading path of a passage
    (``metadata["section"]``, so a passage deep in a section still matches the section's words), then its text.

    >>> indexed_text(Document("a#1", "Run exportfs.", "Admin Guide", metadata={"section": "11. NFS"}))
    'Admin Guide › 11. NFS\\nRun exportfs.'
    """
    section = d.metadata.get("section") if d.metadata else None
    head = f"{d.title} › {section}" if section and d.title else str(section or d.title or "")
    return f"{head}{sep}{d.text}".strip()


def _doc_hit(d: Document, score: float, source: str) -> Hit:
    md: dict[str, Any] = {**d.metadata}
    if d.lang:
        md.setdefault("lang", d.lang)
    return Hit(d.id, d.title, d.text, score, d.url, d.date, source, 0, md)


__all__ = ["FILTER_FIELDS", "Capabilities", "Filters", "InMemoryBackend", "ManyQueryBackend", "Recency", "takes_many",
           "SearchBackend", "WritableBackend", "batches", "hit_date", "parse_date"]
