"""Brave Search (``GET /res/v1/web/search``, header ``X-Subscription-Token``): q, count ≤ 20, freshness
pd / pw / pm / py; ``web.results[]``: title, url, description (query words in ``<strong>``), age ("3 days ago",
"November 5, 2026"), page_age (ISO), extra_snippets (more passages of the page: appended to the snippet before
it is cut to length).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...types import Hit
from ..base import Capabilities, Recency
from ._factory import ProviderSettings
from ._http import Request, WebBackend
from .clean import web_hit

if TYPE_CHECKING:
    from ...config import Settings

@dataclass(frozen=True, slots=True)
class BraveSettings(ProviderSettings):
    """brave's section: CONVSEARCH_BRAVE_API_KEYS, _BASE_URL, _RATE."""

    name = "brave"
    prefix = "CONVSEARCH_BRAVE_"
    base_url: str = "https://api.search.brave.com"
    rate: str = "1/s"


SECTION = BraveSettings
_FRESHNESS = {Recency.DAY: "pd", Recency.WEEK: "pw", Recency.MONTH: "pm", Recency.YEAR: "py"}


class BraveBackend(WebBackend):
    provider = name = "brave"
    capabilities = Capabilities(remote=True, web=True, paid=True, recency=frozenset(_FRESHNESS))
    max_count = 20

    def build(self, query: str, n: int, recency: Recency | None, key: str | None) -> Request:
        params: dict[str, Any] = {"q": query, "count": n}
        if recency is not None:
            params["freshness"] = _FRESHNESS[recency]
        return Request("GET", "/res/v1/web/search", params=params,
                       headers={"X-Subscription-Token": key or "", "Accept": "application/json"})

    def parse(self, payload: Any, now: datetime, n: int) -> list[Hit]:
        web = payload.get("web") or {}
        out: list[Hit] = []
        for r in (web.get("results") or [])[:n]:
            extra = [x for x in (r.get("extra_snippets") or []) if isinstance(x, str)]
            snippet = " ".join([r.get("description") or "", *extra])
            h = web_hit(self.name, len(out) + 1, title=r.get("title"), url=r.get("url"), snippet=snippet,
                        published=r.get("page_age") or r.get("age"), now=now,
                        snippet_tokens=self.options.snippet_tokens)
            if h is not None:
                out.append(h)
        return out


def from_settings(settings: Settings) -> BraveBackend:
    from ._factory import call_options, window_store

    conf = BraveSettings.of(settings)
    return BraveBackend(base_url=conf.endpoint(), keys=conf.secrets(),
                        rate=conf.call_rate(), options=call_options(settings), store=window_store(settings))


__all__ = ["BraveBackend", "from_settings"]
