"""Settings → the pieces every web adapter takes: its own section (keys, endpoint, rate), call options, the shared
window store.

A provider declares its section in its module: a ``ProviderSettings`` subclass, with its name, prefix
and defaults (``SECTION = BraveSettings``). The variables are named as every provider's are,
``CONVSEARCH_<NAME>_API_KEYS`` (a comma list, rotated; Secrets), ``CONVSEARCH_<NAME>_BASE_URL`` and
``CONVSEARCH_<NAME>_RATE`` (``100/min``, ``1/s``, ``off``), plus the fields the provider adds (tavily's ``TOPIC``,
bocha's ``SUMMARY``). ``WebSettings`` holds what they share (``CONVSEARCH_WEB_*``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar

from ...config import Section, Switch, named
from ...errors import ConfigError
from ...infra.cache import CacheSettings
from ...secret import Secret, reveal
from ._http import CallOptions, parse_rate, secrets_from

if TYPE_CHECKING:
    from ...config import Settings
    from ...infra.ratelimit import WindowStore


class ResultCount(StrEnum):
    """dynamic: 5 results per web search, 8 for a comparison / two entities, 10 for three+; fixed: top_k."""

    DYNAMIC = "dynamic"
    FIXED = "fixed"


@dataclass(frozen=True, slots=True)
class WebSettings(Section):
    """What every web provider shares: the call loop's limits, the failover order, the cache and the policy."""

    name = "web"
    prefix = "CONVSEARCH_WEB_"
    timeout_s: float = 5.0
    max_retries: int = 2
    max_wait_s: float = 5.0
    breaker_failures: int = 5
    breaker_cooldown_s: float = 30.0
    providers: str = ""
    cache: Switch = Switch.ON
    result_count: ResultCount = ResultCount.DYNAMIC
    site_policy: str = named("CONVSEARCH_SITE_POLICY", "")
    sensitive_terms: str = named("CONVSEARCH_SENSITIVE_TERMS", "")

    def check(self) -> None:
        self._require("timeout_s", "breaker_failures", "breaker_cooldown_s")
        self._require("max_wait_s", "max_retries", positive=False)


@dataclass(frozen=True, slots=True)
class ProviderSettings(Section):
    """A web provider's section: its API keys (a comma list, rotated; Secrets), base URL and rate per key, plus
    what the provider adds. A provider module subclasses it with its ``name``, ``prefix`` and defaults (its
    ``SECTION``, which the backends' plugin declares); ``needs_keys = False`` for a keyless one (then its base URL
    must be set)."""

    needs_keys: ClassVar[bool] = True
    api_keys: Secret | None = field(default=None, repr=False)
    base_url: str = ""
    rate: str = "100/min"

    def check(self) -> None:
        parse_rate(self.rate, variable=self.variables()["rate"][0])

    def secrets(self) -> tuple[Secret, ...]:
        """The keys (Secrets that remember the variable); ConfigError naming it when none is set."""
        var = self.variables()["api_keys"][0]
        keys = secrets_from(self.api_keys, var)
        if not keys:
            raise ConfigError(f"{var} is not set: the {self.name} backend needs at least one API key "
                              "(a comma list rotates)")
        return keys

    def endpoint(self) -> str:
        url = self.base_url.strip()
        if not url:
            raise ConfigError(f"{self.variables()['base_url'][0]} is not set: the {self.name} backend needs its URL")
        return url

    def call_rate(self) -> tuple[int, float] | None:
        return parse_rate(self.rate, variable=self.variables()["rate"][0])

    @property
    def configured(self) -> bool:
        """Whether the provider can be opened: its keys set (or, for a keyless one, its URL)."""
        if self.needs_keys:
            return bool(secrets_from(self.api_keys, self.variables()["api_keys"][0]))
        return bool(self.base_url.strip())

    @classmethod
    def needs(cls) -> str:
        """The variable that makes it configured (for messages)."""
        return cls.variables()["api_keys" if cls.needs_keys else "base_url"][0]


_STORES: dict[str, WindowStore] = {}
_LOCK = threading.Lock()


def call_options(settings: Settings) -> CallOptions:
    w = WebSettings.of(settings)
    return CallOptions(timeout_s=w.timeout_s, max_retries=w.max_retries, max_wait_s=w.max_wait_s,
                       breaker_failures=w.breaker_failures, breaker_cooldown_s=w.breaker_cooldown_s,
                       snippet_tokens=settings.snippet_tokens)


def window_store(settings: Settings) -> WindowStore | None:
    """None (each limiter keeps its log in memory) unless CONVSEARCH_CACHE_URL names a Redis: then one
    RedisWindowStore per URL, shared by every backend of the process (and, through Redis, by every worker)."""
    url = reveal(CacheSettings.of(settings).url).strip()
    if not url:
        return None
    with _LOCK:
        if url not in _STORES:
            from ...infra.redis_store import RedisWindowStore

            _STORES[url] = RedisWindowStore.from_url(url)
        return _STORES[url]


__all__ = ["ProviderSettings", "ResultCount", "WebSettings", "call_options", "window_store"]
