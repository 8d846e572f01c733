"""Tavily (``POST /search``, key as ``Authorization: Bearer``): query, max_results ≤ 20, time_range day / week /
month / year, topic, search_depth; ``results[]``: title, url, content, score, published_date (news topic).

A recency window asks the ``news`` topic (unless ``finance`` was configured): only its results carry
``published_date``, and a result inside a window must show its date (an undated one cannot prove it is fresh).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ...types import Hit
from ..base import Capabilities, Recency
from ._factory import ProviderSettings
from ._http import Request, WebBackend
from .clean import web_hit

if TYPE_CHECKING:
    from ...config import Settings


class Topic(StrEnum):
    """Tavily's topic (a recency window asks ``news``: only its results are dated)."""

    GENERAL = "general"
    NEWS = "news"
    FINANCE = "finance"


@dataclass(frozen=True, slots=True)
class TavilySettings(ProviderSettings):
    """tavily's section: CONVSEARCH_TAVILY_API_KEYS, _BASE_URL, _RATE, _TOPIC."""

    name = "tavily"
    prefix = "CONVSEARCH_TAVILY_"
    base_url: str = "https://api.tavily.com"
    rate: str = "100/min"
    topic: Topic = Topic.GENERAL


SECTION = TavilySettings


class TavilyBackend(WebBackend):
    provider = name = "tavily"
    capabilities = Capabilities(remote=True, web=True, paid=True, recency=frozenset(
        {Recency.DAY, Recency.WEEK, Recency.MONTH, Recency.YEAR}))
    max_count = 20

    def __init__(self, *, topic: str = "general", search_depth: str = "basic", **kw: Any) -> None:
        super().__init__(**kw)
        self.topic = topic
        self.search_depth = search_depth

    def build(self, query: str, n: int, recency: Recency | None, key: str | None) -> Request:
        body: dict[str, Any] = {"query": query, "max_results": n, "search_depth": self.search_depth,
                                "topic": self.topic}
        if recency is not None:
            body["time_range"] = recency.value
            if self.topic == "general":
                body["topic"] = "news"
        return Request("POST", "/search", json=body, headers={"Authorization": f"Bearer {key}"})

    def parse(self, payload: Any, now: datetime, n: int) -> list[Hit]:
        out: list[Hit] = []
        for r in payload["results"][:n]:
            h = web_hit(self.name, len(out) + 1, title=r.get("title"), url=r.get("url"), snippet=r.get("content"),
                        published=r.get("published_date"), score=r.get("score"), now=now,
                        snippet_tokens=self.options.snippet_tokens)
            if h is not None:
                out.append(h)
        return out


def from_settings(settings: Settings) -> TavilyBackend:
    from ._factory import call_options, window_store

    conf = TavilySettings.of(settings)
    return TavilyBackend(base_url=conf.endpoint(), keys=conf.secrets(),
                         rate=conf.call_rate(), options=call_options(settings),
                         store=window_store(settings), topic=conf.topic)


__all__ = ["TavilyBackend", "from_settings"]
