"""SearXNG (``GET /search?format=json``, no key): q, time_range day / month / year, language, pageno;
``results[]``: title, url, content, engine, publishedDate (ISO, or null).

SearXNG has no week window: a week asks for ``month`` natively and keeps the hits dated within the week after
the search (the trace says so). An instance with the JSON format disabled answers 403: the error says how to
enable it. Free to call (not ``paid``), but an instance still deserves a rate limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from ...secret import Secret
from ...types import Hit
from ..base import Capabilities, Recency
from ._factory import ProviderSettings
from ._http import Request, WebBackend
from .clean import web_hit

if TYPE_CHECKING:
    from ...config import Settings


@dataclass(frozen=True, slots=True)
class SearxngSettings(ProviderSettings):
    """searxng's section: CONVSEARCH_SEARXNG_API_KEYS, _BASE_URL, _RATE."""

    name = "searxng"
    prefix = "CONVSEARCH_SEARXNG_"
    needs_keys = False  # a keyless instance of your own: its URL is what configures it
    api_keys: Secret | None = field(default=None, repr=False, metadata={"read": False})
    base_url: str = ""
    rate: str = "60/min"


SECTION = SearxngSettings


class SearxngBackend(WebBackend):
    provider = name = "searxng"
    capabilities = Capabilities(remote=True, web=True, paid=False,
                                recency=frozenset({Recency.DAY, Recency.MONTH, Recency.YEAR}))
    max_count = 20

    def __init__(self, *, language: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.language = language

    def reject_hint(self, status: int) -> str:
        if status == 403:
            return "the instance has the JSON format disabled: add json to search.formats in its settings.yml"
        return ""

    def build(self, query: str, n: int, recency: Recency | None, key: str | None) -> Request:
        params: dict[str, Any] = {"q": query, "format": "json", "pageno": 1}
        if recency is not None:
            params["time_range"] = recency.value
        if self.language:
            params["language"] = self.language
        return Request("GET", "/search", params=params)

    def parse(self, payload: Any, now: datetime, n: int) -> list[Hit]:
        out: list[Hit] = []
        for r in (payload.get("results") or [])[:n]:
            h = web_hit(self.name, len(out) + 1, title=r.get("title"), url=r.get("url"), snippet=r.get("content"),
                        published=r.get("publishedDate"), now=now, snippet_tokens=self.options.snippet_tokens,
                        extra={"engine": r.get("engine")})
            if h is not None:
                out.append(h)
        return out


def from_settings(settings: Settings) -> SearxngBackend:
    from ._factory import call_options, window_store

    conf = SearxngSettings.of(settings)
    if not conf.configured:
        raise ConfigError("CONVSEARCH_SEARXNG_BASE_URL is not set: the searxng backend needs an instance's URL "
                          "(one with the json format enabled)")
    return SearxngBackend(base_url=conf.endpoint(), rate=conf.call_rate(),
                          options=call_options(settings), store=window_store(settings))


__all__ = ["SearxngBackend", "from_settings"]
