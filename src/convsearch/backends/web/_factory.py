"""Settings → the pieces every web adapter takes (call options, the shared window store)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ._http import CallOptions

if TYPE_CHECKING:
    from ...config import Settings
    from ...infra.ratelimit import WindowStore

_STORES: dict[str, WindowStore] = {}
_LOCK = threading.Lock()


def call_options(settings: Settings) -> CallOptions:
    return CallOptions(timeout_s=settings.web_timeout_s, max_retries=settings.web_max_retries,
                       max_wait_s=settings.web_max_wait_s, breaker_failures=settings.web_breaker_failures,
                       breaker_cooldown_s=settings.web_breaker_cooldown_s, snippet_tokens=settings.snippet_tokens)


def window_store(settings: Settings) -> WindowStore | None:
    """None (each limiter keeps its log in memory) unless CONVSEARCH_CACHE_URL names a Redis: then one
    RedisWindowStore per URL, shared by every backend of the process (and, through Redis, by every worker)."""
    url = settings.cache_url.reveal().strip() if settings.cache_url else ""
    if not url:
        return None
    with _LOCK:
        if url not in _STORES:
            from ...infra.redis_store import RedisWindowStore

            _STORES[url] = RedisWindowStore.from_url(url)
        return _STORES[url]


__all__ = ["call_options", "window_store"]
