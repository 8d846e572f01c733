"""What stands in front of every web provider: the tiered cache shared by the process (``shared_cache``) and the
policy (``guarded``). The registry opens a web row behind it; the ``web`` chain puts it in front of the chain."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ...config import Switch
from ...infra.cache import CacheSettings
from ...secret import reveal
from ._factory import ResultCount, WebSettings

if TYPE_CHECKING:
    from ...config import Settings
    from ..base import SearchBackend

_CACHES: dict[str, Any] = {}
_LOCK = threading.Lock()


def shared_cache(settings: Settings) -> tuple[Any, Any]:
    """(TTLCache, SeenCounter) for the web results of this process: in memory, or Redis with
    CONVSEARCH_CACHE_URL (one cache and one set of look-up counts for every worker)."""
    url = reveal(CacheSettings.of(settings).url).strip()
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


def reset_shared_caches() -> None:
    """Forget the process's web caches (tests that start from empty ones; the next turn makes them anew)."""
    with _LOCK:
        _CACHES.clear()


def guarded(settings: Settings, backend: SearchBackend) -> SearchBackend:
    """The provider(s) behind the cache (unless off) and the policy (sensitive queries, result count, sites)."""
    from .policy import Policed, SitePolicy

    web = WebSettings.of(settings)
    if web.cache is Switch.ON:
        from .cached import CachedWeb

        cache, seen = shared_cache(settings)
        backend = CachedWeb(backend, cache, seen=seen)
    site = SitePolicy.load(web.site_policy) if web.site_policy.strip() else None
    return Policed(backend, site_policy=site, dynamic_count=web.result_count is ResultCount.DYNAMIC,
                   sensitive_path=web.sensitive_terms.strip() or None)
