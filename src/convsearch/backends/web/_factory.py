"""Settings → the pieces every web adapter takes: its own section (keys, endpoint, rate), call options, the shared
window store.

A provider declares its section in its module: ``SECTION = ProviderSection("brave", base_url=…, rate=…)``. The
variables are named as every provider's are, ``CONVSEARCH_<NAME>_API_KEYS`` (a comma list, rotated; Secrets),
``CONVSEARCH_<NAME>_BASE_URL`` and ``CONVSEARCH_<NAME>_RATE`` (``100/min``, ``1/s``, ``off``), plus whatever the
module reads itself through ``SECTION.value(settings, "SUMMARY")``. They come from ``Settings.sections``; the
providers that predate sections (tavily, brave, serpapi, searxng) keep their ``Settings`` fields, which the
section reads first.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import ConfigError
from ._http import CallOptions, parse_rate, secrets_from

if TYPE_CHECKING:
    from ...config import Settings
    from ...infra.ratelimit import WindowStore
    from ...secret import Secret


@dataclass(frozen=True, slots=True)
class ProviderSection:
    """A web provider's settings: ``name`` (the variables' infix), the default ``base_url`` and ``rate``, whether
    it needs API ``keys``, and (for a keyless one) that its base URL must be set."""

    name: str
    base_url: str = ""
    rate: str = "100/min"
    keys: bool = True

    def variable(self, what: str) -> str:
        """``CONVSEARCH_BOCHA_API_KEYS`` for ``"API_KEYS"``."""
        return f"CONVSEARCH_{self.name.upper()}_{what}"

    def value(self, settings: Settings, what: str, default: str = "") -> str:
        """The setting ``what`` (``"BASE_URL"``, ``"RATE"``, a provider's own): a Settings field of the same name
        when there is one, else the section variable, else ``default``."""
        field = f"{self.name}_{what.lower()}"
        if hasattr(settings, field):
            got = getattr(settings, field)
            return str(got.reveal() if hasattr(got, "reveal") else got or "")
        raw = settings.section(self.variable(what))
        return default if raw is None else raw

    def api_keys(self, settings: Settings) -> tuple[Secret, ...]:
        """The keys (Secrets that remember the variable); ConfigError naming it when none is set."""
        var = self.variable("API_KEYS")
        field = f"{self.name}_api_keys"
        raw = getattr(settings, field) if hasattr(settings, field) else settings.section_secret(var)
        keys = secrets_from(raw, var)
        if not keys:
            raise ConfigError(f"{var} is not set: the {self.name} backend needs at least one API key "
                              "(a comma list rotates)")
        return keys

    def endpoint(self, settings: Settings) -> str:
        url = self.value(settings, "BASE_URL", self.base_url).strip()
        if not url:
            raise ConfigError(f"{self.variable('BASE_URL')} is not set: the {self.name} backend needs its URL")
        return url

    def call_rate(self, settings: Settings) -> tuple[int, float] | None:
        return parse_rate(self.value(settings, "RATE", self.rate), variable=self.variable("RATE"))

    def configured(self, settings: Settings) -> bool:
        """Whether the provider can be opened: its keys set (or, for a keyless one, its URL)."""
        if self.keys:
            field = f"{self.name}_api_keys"
            raw = getattr(settings, field) if hasattr(settings, field) else settings.section_secret(
                self.variable("API_KEYS"))
            return bool(secrets_from(raw, self.variable("API_KEYS")))
        return bool(self.value(settings, "BASE_URL", self.base_url).strip())

    @property
    def needs(self) -> str:
        """The variable that makes it configured (for messages)."""
        return self.variable("API_KEYS" if self.keys else "BASE_URL")

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


__all__ = ["ProviderSection", "call_options", "window_store"]
