"""Bocha web search (博查, ``POST /v1/web-search``, key as ``Authorization: Bearer``), a search API built for AI
applications that Chinese users reach for: query, count 1..50, freshness oneDay / oneWeek / oneMonth / oneYear
(or noLimit), summary (a longer text per page); ``data.webPages.value[]``: name, url, snippet, summary, siteName,
datePublished (ISO with a +08:00 offset, counted in UTC like every other date).

Its settings, declared here (``SECTION``) and read from the environment by ``Settings.from_env``:

| variable                     | default              | meaning                                   |
|------------------------------|----------------------|-------------------------------------------|
| CONVSEARCH_BOCHA_API_KEYS    | (none; required)     | Bocha keys, comma list (rotated); Secrets, never logged |
| CONVSEARCH_BOCHA_BASE_URL    | https://api.bochaai.com | the endpoint; ``/v1/web-search`` is added to it |
| CONVSEARCH_BOCHA_RATE        | 60/min               | requests per key (`N/s`, `N/min`, `off`); set your plan's |
| CONVSEARCH_BOCHA_SUMMARY     | on                   | on: ask for ``summary``, the hit's text; off: ``snippet`` |

An error comes as ``{"code": …, "message" (or "msg"): …}``, with its HTTP status (400 / 401 / 403 / 429) or inside a
200 answer whose ``code`` is not 200: a 429 code is a rate limit (the key cools), any other a rejected call.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...config import Switch
from ...types import Hit
from ..base import Capabilities, Recency
from ._factory import ProviderSettings
from ._http import Request, UpstreamRateLimited, UpstreamRejected, WebBackend
from .clean import web_hit

if TYPE_CHECKING:
    from ...config import Settings

@dataclass(frozen=True, slots=True)
class BochaSettings(ProviderSettings):
    """bocha's section: CONVSEARCH_BOCHA_API_KEYS, _BASE_URL, _RATE, _SUMMARY."""

    name = "bocha"
    prefix = "CONVSEARCH_BOCHA_"
    base_url: str = "https://api.bochaai.com"
    rate: str = "60/min"
    summary: Switch = Switch.ON


SECTION = BochaSettings
PATH = "/v1/web-search"
_FRESHNESS = {Recency.DAY: "oneDay", Recency.WEEK: "oneWeek", Recency.MONTH: "oneMonth", Recency.YEAR: "oneYear"}


class BochaBackend(WebBackend):
    provider = name = "bocha"
    capabilities = Capabilities(remote=True, web=True, paid=True, recency=frozenset(_FRESHNESS))
    max_count = 50

    def __init__(self, *, summary: bool = True, **kw: Any) -> None:
        super().__init__(**kw)
        self.summary = summary

    def build(self, query: str, n: int, recency: Recency | None, key: str | None) -> Request:
        body: dict[str, Any] = {"query": query, "count": n, "summary": self.summary,
                                "freshness": _FRESHNESS[recency] if recency is not None else "noLimit"}
        return Request("POST", PATH, json=body, headers={"Authorization": f"Bearer {key}"})

    def parse(self, payload: Any, now: datetime, n: int) -> list[Hit]:
        code = payload.get("code", 200)
        if str(code) != "200":
            why = str(payload.get("message") or payload.get("msg") or f"code {code}")
            if str(code) == "429":
                raise UpstreamRateLimited(self.name, why, status=200)
            raise UpstreamRejected(self.name, why, status=200)
        pages = ((payload.get("data") or {}).get("webPages") or {}).get("value") or []
        out: list[Hit] = []
        for r in pages[:n]:
            text = (r.get("summary") if self.summary else None) or r.get("snippet")
            h = web_hit(self.name, len(out) + 1, title=r.get("name"), url=r.get("url"), snippet=text,
                        published=r.get("datePublished"), now=now, snippet_tokens=self.options.snippet_tokens,
                        extra={"site_name": r.get("siteName")} if r.get("siteName") else None)
            if h is not None:
                out.append(h)
        return out


def from_settings(settings: Settings) -> BochaBackend:
    from ._factory import call_options, window_store

    conf = BochaSettings.of(settings)
    return BochaBackend(base_url=conf.endpoint(), keys=conf.secrets(),
                        rate=conf.call_rate(), options=call_options(settings),
                        store=window_store(settings), summary=conf.summary is Switch.ON)


__all__ = ["PATH", "SECTION", "BochaBackend", "from_settings"]
