"""``recency``: only results dated within the last day/week/month/year, as a wrapper around any backend.

Undated hits are dropped when a window is asked for (their freshness cannot be shown). The wrapper asks the
backend for more hits than it returns, so filtering rarely leaves a list short.
"""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from typing import Any

from ..types import Hit
from .base import SearchBackend

RECENCY_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}
RECENCIES = (*RECENCY_DAYS, "no_limit")


def since(recency: str, today: date) -> date | None:
    """The oldest date a result may have for ``recency`` (None for ``no_limit``)."""
    if recency == "no_limit":
        return None
    return today - timedelta(days=RECENCY_DAYS[recency])


def within(hit: Hit, oldest: date) -> bool:
    """Whether ``hit`` is dated on or after ``oldest`` (ISO dates; a bare year or year-month counts as its start)."""
    if not hit.date:
        return False
    try:
        parts = [int(p) for p in hit.date[:10].split("-")]
        d = date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except (ValueError, IndexError):
        return False
    return d >= oldest


class RecencyFilter:
    """A SearchBackend that keeps only the hits of ``backend`` dated on or after ``oldest``."""

    def __init__(self, backend: SearchBackend, oldest: date) -> None:
        self.backend = backend
        self.oldest = oldest
        self.name = getattr(backend, "name", "backend")
        self.capabilities = backend.capabilities

    def close(self) -> None:
        self.backend.close()

    def search(self, query: str, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Hit]:
        hits = self.backend.search(query, top_k=top_k * 4, filters=filters)
        return [h for h in hits if within(h, self.oldest)][:top_k]

    async def asearch(self, query: str, *, top_k: int = 10, filters: dict[str, Any] | None = None) -> list[Hit]:
        return await asyncio.to_thread(self.search, query, top_k=top_k, filters=filters)


__all__ = ["RECENCIES", "RECENCY_DAYS", "RecencyFilter", "since", "within"]
