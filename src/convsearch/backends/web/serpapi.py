"""SerpApi (``GET /search``, ``api_key`` parameter), ``engine=google`` (q, num, tbs=qdr:d/w/m/y) or
``engine=bing`` (q, count; no recency parameter: applied after the search by date); ``organic_results[]``:
position, title, link, snippet, date ("3 days ago", "3 天前", "Nov 5, 2026").

Errors come as ``{"error": …}``, with status 401/400/429, or with status 200: "… hasn't returned any results
for this query." is an empty result list, any other 200 error is a failed call. Bing's own Web Search API was
retired on 2025-08-11 (it answers 410 Gone); Bing results come through SerpApi's ``engine=bing``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ...types import Hit
from ..base import Capabilities, Recency
from ._factory import ProviderSettings
from ._http import Request, UpstreamRateLimited, UpstreamRejected, WebBackend
from .clean import web_hit

if TYPE_CHECKING:
    from ...config import Settings

class Engine(StrEnum):
    """SerpApi's engine: Google, or Bing (Bing's own Web Search API was retired on 2025-08-11)."""

    GOOGLE = "google"
    BING = "bing"


@dataclass(frozen=True, slots=True)
class SerpApiSettings(ProviderSettings):
    """serpapi's section: CONVSEARCH_SERPAPI_API_KEYS, _BASE_URL, _RATE, _ENGINE."""

    name = "serpapi"
    prefix = "CONVSEARCH_SERPAPI_"
    base_url: str = "https://serpapi.com"
    rate: str = "100/min"
    engine: Engine = Engine.GOOGLE


SECTION = SerpApiSettings
_TBS = {Recency.DAY: "qdr:d", Recency.WEEK: "qdr:w", Recency.MONTH: "qdr:m", Recency.YEAR: "qdr:y"}
ENGINES = tuple(e.value for e in Engine)


class SerpApiBackend(WebBackend):
    provider = "serpapi"
    max_count = 100

    def __init__(self, *, engine: str = "google", **kw: Any) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}")
        self.engine = engine
        self.name = "serpapi" if engine == "google" else engine  # the registry's names: serpapi, bing
        self.capabilities = Capabilities(remote=True, web=True, paid=True,
                                         recency=frozenset(_TBS) if engine == "google" else frozenset())
        super().__init__(**kw)

    def build(self, query: str, n: int, recency: Recency | None, key: str | None) -> Request:
        params: dict[str, Any] = {"engine": self.engine, "q": query, "api_key": key or "", "output": "json"}
        params["num" if self.engine == "google" else "count"] = n
        if recency is not None and self.engine == "google":
            params["tbs"] = _TBS[recency]
        return Request("GET", "/search", params=params)

    def parse(self, payload: Any, now: datetime, n: int) -> list[Hit]:
        err = payload.get("error")
        if isinstance(err, str) and err:
            if "hasn't returned any results" in err or "returned no results" in err:
                return []
            if "run out of searches" in err or "throughput" in err:
                raise UpstreamRateLimited(self.name, err, status=200)
            raise UpstreamRejected(self.name, err, status=200)
        out: list[Hit] = []
        for r in (payload.get("organic_results") or [])[:n]:
            h = web_hit(self.name, len(out) + 1, title=r.get("title"), url=r.get("link"), snippet=r.get("snippet"),
                        published=r.get("date"), now=now, snippet_tokens=self.options.snippet_tokens,
                        extra={"position": r.get("position")})
            if h is not None:
                out.append(h)
        return out


def from_settings(settings: Settings, *, engine: str | None = None) -> SerpApiBackend:
    from ._factory import call_options, window_store

    conf = SerpApiSettings.of(settings)
    return SerpApiBackend(engine=engine or conf.engine,
                          base_url=conf.endpoint(), keys=conf.secrets(),
                          rate=conf.call_rate(), options=call_options(settings),
                          store=window_store(settings))


def bing_from_settings(settings: Settings) -> SerpApiBackend:
    """SerpApi with ``engine=bing`` (the registry's ``bing``)."""
    return from_settings(settings, engine="bing")


__all__ = ["ENGINES", "SerpApiBackend", "bing_from_settings", "from_settings"]
