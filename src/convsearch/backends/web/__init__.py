"""Web search backends, one module per provider (``tavily.py``, ``brave.py``, …; its settings declared there,
``SECTION``), all behind the SearchBackend contract, sharing ``_http`` (client, the call loop
with limiter / retries / breaker), ``_factory`` (settings) and ``clean`` (snippets, dates, canonical URLs).
``pip install 'convsearch[web]'`` brings httpx.

Each provider is a row of the backend registry (``backends/registry.py``: ``Row(…, web=True)``); the registry
opens it behind the policy (``policy.Policed``: sensitive queries, result count, site tiers) and the tiered cache
(``cached.CachedWeb``, unless ``CONVSEARCH_WEB_CACHE=off``): ``guarded``. ``web`` is the configured providers as
one failover chain (``CONVSEARCH_WEB_PROVIDERS``, default every chained row whose key / URL is set, in row
order), behind the same two. Adding a provider: its module and its row; nothing here changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import ConfigError
from ._factory import WebSettings
from .guard import guarded, reset_shared_caches, shared_cache

if TYPE_CHECKING:
    from ...config import Settings
    from ..base import SearchBackend

def configured(settings: Settings) -> list[str]:
    """The providers the ``web`` chain takes by default: the chained registry rows whose key (or URL) is set."""
    from ..registry import web_provider_module, web_providers

    return [n for n in web_providers(chain=True) if web_provider_module(n).SECTION.of(settings).configured]


def from_settings(settings: Settings) -> SearchBackend:
    """The ``web`` backend: the providers of CONVSEARCH_WEB_PROVIDERS (or every configured one) as a cached
    failover chain."""
    from ..registry import backend_factory, web_provider_module, web_providers
    from .cached import Failover

    order = WebSettings.of(settings).providers
    names = [n.strip().lower() for n in order.split(",") if n.strip()] or configured(settings)
    if not names:
        needs = [web_provider_module(n).SECTION.needs() for n in web_providers(chain=True)]
        raise ConfigError(f"the web backend has no provider: set {', '.join(needs[:-1])} or {needs[-1]} "
                          "(or CONVSEARCH_WEB_PROVIDERS)")
    members = []
    for n in dict.fromkeys(names):
        web_provider_module(n)  # ConfigError for a name that is no web provider
        members.append(backend_factory(n)(settings))
    return guarded(settings, Failover(members) if len(members) > 1 else members[0])


__all__ = ["configured", "from_settings", "guarded", "reset_shared_caches", "shared_cache"]
