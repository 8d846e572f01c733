"""Web search backends: Tavily, Brave, SerpApi (Google, Bing), SearXNG — one module each, all behind the
SearchBackend contract, sharing ``_http`` (client, errors, the call loop with limiter / retries / breaker) and
``clean`` (snippets, dates, canonical URLs). ``pip install 'convsearch[web]'`` brings httpx.

The registry's names (``CONVSEARCH_BACKENDS``): ``tavily``, ``brave``, ``serpapi``, ``bing`` (SerpApi's Bing
engine), ``searxng`` — each behind the policy (``policy.Policed``: sensitive queries, result count, site tiers)
and the tiered cache (``cached.CachedWeb``, unless ``CONVSEARCH_WEB_CACHE=off``) — and ``web``: the configured
providers as one failover chain (``CONVSEARCH_WEB_PROVIDERS``, default every provider that has its key / URL set,
in the order tavily, brave, serpapi, searxng), behind the same two.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError

if TYPE_CHECKING:
    from types import ModuleType

    from ...config import Settings
    from ..base import SearchBackend

PROVIDERS = ("tavily", "brave", "serpapi", "bing", "searxng")
_CACHES: dict[str, Any] = {}
_LOCK = threading.Lock()


def _raw(settings: Settings, name: str) -> SearchBackend:
    m: ModuleType
    if name == "tavily":
        from . import tavily as m
    elif name == "brave":
        from . import brave as m
    elif name == "serpapi":
        from . import serpapi as m
    elif name == "bing":
        from . import serpapi

        return serpapi.bing_from_settings(settings)
    elif name == "searxng":
        from . import searxng as m
    else:
        raise ConfigError(f"unknown web provider {name!r}; known: {', '.join(PROVIDERS)}")
    backend: SearchBackend = m.from_settings(settings)
    return backend


def shared_cache(settings: Settings) -> tuple[Any, Any]:
    """(TTLCache, SeenCounter) for the web results of this process: in memory, or Redis with
    CONVSEARCH_CACHE_URL (one cache and one set of look-up counts for every worker)."""
    url = settings.cache_url.reveal().strip() if settings.cache_url else ""
    with _LOCK:
        if url not in _CACHES:
            if url:
                from ...infra.redis_store import RedisCache, RedisSeenCounter

                _CACHES[url] = (RedisCache.from_url(url), RedisSeenCounter.from_url(url))
            else:
                from ...infra.cache import MemoryCache
                from .cached import MemorySeenCounter

                _CACHES[url] = (MemoryCache(maxsize=4096), MemorySeenCounter())
        caches: tuple[Any, Any] = _CACHES[url]
        return caches


def _cached(settings: Settings, backend: SearchBackend) -> SearchBackend:
    """The provider(s) behind the cache (unless off) and the policy (sensitive queries, result count, sites)."""
    from .policy import Policed, SitePolicy

    if settings.web_cache != "off":
        from .cached import CachedWeb

        cache, seen = shared_cache(settings)
        backend = CachedWeb(backend, cache, seen=seen)
    site = SitePolicy.load(settings.site_policy) if settings.site_policy.strip() else None
    return Policed(backend, site_policy=site, dynamic_count=settings.web_result_count == "dynamic",
                   sensitive_path=settings.sensitive_terms.strip() or None)


def configured(settings: Settings) -> list[str]:
    """The providers whose key (or SearXNG's URL) is set, in the default failover order."""
    out = [p for p in ("tavily", "brave", "serpapi") if getattr(settings, f"{p}_api_keys") is not None]
    if settings.searxng_base_url.strip():
        out.append("searxng")
    return out


def from_settings(settings: Settings) -> SearchBackend:
    """The ``web`` backend: the providers of CONVSEARCH_WEB_PROVIDERS (or every configured one) as a cached
    failover chain."""
    from .cached import Failover

    names = [n.strip().lower() for n in settings.web_providers.split(",") if n.strip()] or configured(settings)
    if not names:
        raise ConfigError("the web backend has no provider: set CONVSEARCH_TAVILY_API_KEYS, CONVSEARCH_BRAVE_API_KEYS, "
                          "CONVSEARCH_SERPAPI_API_KEYS or CONVSEARCH_SEARXNG_BASE_URL (or CONVSEARCH_WEB_PROVIDERS)")
    members = [_raw(settings, n) for n in dict.fromkeys(names)]
    return _cached(settings, Failover(members) if len(members) > 1 else members[0])


def open_tavily(settings: Settings) -> SearchBackend:
    return _cached(settings, _raw(settings, "tavily"))


def open_brave(settings: Settings) -> SearchBackend:
    return _cached(settings, _raw(settings, "brave"))


def open_serpapi(settings: Settings) -> SearchBackend:
    return _cached(settings, _raw(settings, "serpapi"))


def open_bing(settings: Settings) -> SearchBackend:
    return _cached(settings, _raw(settings, "bing"))


def open_searxng(settings: Settings) -> SearchBackend:
    return _cached(settings, _raw(settings, "searxng"))


__all__ = ["PROVIDERS", "configured", "from_settings", "open_bing", "open_brave", "open_searxng", "open_serpapi",
           "open_tavily", "shared_cache"]
