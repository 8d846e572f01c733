"""API keys → tenants. Keys come from ``CONVSEARCH_API_KEYS`` (``tenant:key,tenant:key``) and/or the file
``CONVSEARCH_API_KEYS_FILE`` (TOML or JSON), for example::

    [tenants.acme]
    keys = ["sk-acme-1", "sk-acme-2"]     # or key_sha256 = ["<hex digest>"] to keep no plain key on disk
    rate = 20                             # requests/s (optional; default CONVSEARCH_RATE_LIMIT)
    burst = 40                            # (optional; default CONVSEARCH_RATE_BURST)

A request names its key as ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``. Keys are held only as
SHA-256 digests and compared by digest, so neither a log line nor a repr can show one.

With no key configured and ``CONVSEARCH_SERVER_AUTH=auto`` (or ``off``) the server is open: every request
acts for the single tenant ``local`` (``convsearch serve`` then refuses a non-loopback host under ``auto``).
A request that carries a key anyway is served too (clients that always send one keep working), but the first
such request logs one warning on ``convsearch.server``: a client that believes it is authenticated is talking
to an open server, which is worth knowing. The key itself is never logged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import AutoSwitch, Settings
from ..errors import AuthError, ConfigError
from ..infra.ratelimit import Rate
from ..secret import reveal
from .settings import ServerSettings

OPEN_TENANT = "local"
log = logging.getLogger("convsearch.server")


@dataclass(frozen=True, slots=True)
class Tenant:
    """Who a request acts for; ``rate`` overrides the default request rate."""

    name: str
    rate: Rate | None = None


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_from_headers(headers: Mapping[str, str]) -> str | None:
    """The API key a request carries (``Authorization: Bearer`` first, then ``X-API-Key``), or None."""
    auth = headers.get("authorization")
    if auth:
        scheme, _, value = auth.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    key = headers.get("x-api-key")
    return key.strip() if key and key.strip() else None


class KeyRing:
    """Maps API keys (by digest) to tenants; ``open`` means no key is needed (single tenant ``local``)."""

    def __init__(self, tenants_by_digest: Mapping[str, Tenant] | None = None, *, open: bool = False) -> None:
        self._by_digest = dict(tenants_by_digest or {})
        self.open = open
        self._warned_open_key = False

    def __repr__(self) -> str:  # never the digests
        return f"KeyRing(tenants={sorted(self.tenants())!r}, open={self.open})"

    def tenants(self) -> set[str]:
        return {t.name for t in self._by_digest.values()} | ({OPEN_TENANT} if self.open else set())

    def rates(self) -> dict[str, Rate]:
        return {t.name: t.rate for t in self._by_digest.values() if t.rate is not None}

    def resolve(self, key: str | None) -> Tenant:
        """The tenant holding ``key``; AuthError when it is missing or unknown (unless the ring is open)."""
        if self.open:
            if key and not self._warned_open_key:
                self._warned_open_key = True  # once per process: a client sending keys sends them every time
                log.warning("a request carried an API key, but the server is open (no key is configured: "
                            "CONVSEARCH_API_KEYS / CONVSEARCH_API_KEYS_FILE); the key is ignored and every "
                            "request acts for tenant %r (logged once)", OPEN_TENANT)
            return Tenant(OPEN_TENANT)
        if not key:
            raise AuthError("missing API key: send 'Authorization: Bearer KEY' or 'X-API-Key: KEY'")
        tenant = self._by_digest.get(digest(key))
        if tenant is None:
            raise AuthError("unknown API key")
        return tenant

    def resolve_headers(self, headers: Mapping[str, str]) -> Tenant:
        return self.resolve(key_from_headers(headers))

    @classmethod
    def from_settings(cls, settings: Settings) -> "KeyRing":
        """Keys from CONVSEARCH_API_KEYS and CONVSEARCH_API_KEYS_FILE; open when none and auth is not ``on``."""
        conf = ServerSettings.of(settings)
        by_digest: dict[str, Tenant] = {}
        for item in (x.strip() for x in reveal(conf.api_keys).split(",")):
            if not item:
                continue
            name, sep, key = item.partition(":")
            if not sep or not name.strip() or not key.strip():
                raise ConfigError("CONVSEARCH_API_KEYS must be 'tenant:key' pairs separated by commas")
            _add(by_digest, Tenant(_tenant_name(name.strip(), "CONVSEARCH_API_KEYS")), digest(key.strip()),
                 "CONVSEARCH_API_KEYS")
        if conf.api_keys_file:
            for tenant, digests in _load_file(Path(conf.api_keys_file)):
                for d in digests:
                    _add(by_digest, tenant, d, conf.api_keys_file)
        if conf.auth is AutoSwitch.OFF:
            return cls({}, open=True)
        if not by_digest and conf.auth is AutoSwitch.ON:
            raise ConfigError("CONVSEARCH_SERVER_AUTH=on but no API key is configured "
                              "(set CONVSEARCH_API_KEYS or CONVSEARCH_API_KEYS_FILE)")
        return cls(by_digest, open=not by_digest)


def _tenant_name(name: str, where: str) -> str:
    if not name or len(name) > 128 or any(ord(c) < 32 for c in name):
        raise ConfigError(f"{where}: bad tenant name {name!r} (1-128 characters, no control characters)")
    return name


def _add(by_digest: dict[str, Tenant], tenant: Tenant, d: str, where: str) -> None:
    old = by_digest.get(d)
    if old is not None and old.name != tenant.name:
        raise ConfigError(f"{where}: one API key is given to two tenants ({old.name}, {tenant.name})")
    by_digest[d] = tenant


def _load_file(path: Path) -> list[tuple[Tenant, list[str]]]:
    try:
        raw = path.read_bytes()
        data: Any = json.loads(raw) if path.suffix.lower() == ".json" else tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"API keys file not found: {path}") from exc
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise ConfigError(f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'TOML'} ({exc})") from exc
    tenants = data.get("tenants") if isinstance(data, dict) else None
    if not isinstance(tenants, dict):
        raise ConfigError(f"{path}: expected a 'tenants' table mapping tenant names to {{keys = [...]}}")
    out = []
    for name, spec in tenants.items():
        if not isinstance(spec, dict):
            raise ConfigError(f"{path}: tenants.{name} must be a table")
        keys, hashed = spec.get("keys", []), spec.get("key_sha256", [])
        if not isinstance(keys, list) or not isinstance(hashed, list) or not all(
                isinstance(k, str) and k for k in [*keys, *hashed]):
            raise ConfigError(f"{path}: tenants.{name}.keys and .key_sha256 must be lists of non-empty strings")
        rate = None
        if "rate" in spec or "burst" in spec:
            try:
                r, b = float(spec.get("rate", 0)), float(spec.get("burst", max(1.0, 2 * float(spec.get("rate", 1)))))
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{path}: tenants.{name}.rate and .burst must be numbers") from exc
            if r < 0 or b <= 0:
                raise ConfigError(f"{path}: tenants.{name}: rate must be ≥ 0 and burst > 0")
            rate = Rate(r, b)
        out.append((Tenant(_tenant_name(str(name), str(path)), rate),
                    [digest(k) for k in keys] + [h.lower() for h in hashed]))
    return out


__all__ = ["OPEN_TENANT", "KeyRing", "Tenant", "digest", "key_from_headers"]
