"""API keys → tenants: from CONVSEARCH_API_KEYS and from a TOML/JSON file; open mode; bad configs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from convsearch.config import Settings
from convsearch.errors import AuthError, ConfigError
from convsearch.infra.ratelimit import Rate
from convsearch.server.auth import OPEN_TENANT, KeyRing, key_from_headers


def ring(**kw) -> KeyRing:
    return KeyRing.from_settings(Settings.from_env({}, **kw))


def test_keys_from_env_map_to_tenants() -> None:
    r = ring(api_keys="acme:sk-1, beta:sk-2,acme:sk-3")
    assert r.resolve("sk-1").name == "acme" and r.resolve("sk-3").name == "acme"
    assert r.resolve("sk-2").name == "beta"
    assert not r.open and r.tenants() == {"acme", "beta"}


@pytest.mark.parametrize("key", [None, "", "sk-unknown"])
def test_missing_or_unknown_key_is_an_auth_error(key) -> None:
    with pytest.raises(AuthError):
        ring(api_keys="acme:sk-1").resolve(key)


def test_keys_file_toml_with_rates_and_hashed_keys(tmp_path: Path) -> None:
    f = tmp_path / "keys.toml"
    digest = hashlib.sha256(b"sk-hashed").hexdigest()
    f.write_text(f'[tenants.acme]\nkeys = ["sk-a"]\nrate = 5\nburst = 10\n\n'
                 f'[tenants.beta]\nkey_sha256 = ["{digest}"]\n', encoding="utf-8")
    r = ring(api_keys_file=str(f))
    assert r.resolve("sk-a").name == "acme"
    assert r.resolve("sk-hashed").name == "beta"
    assert r.rates() == {"acme": Rate(5, 10)}


def test_keys_file_json(tmp_path: Path) -> None:
    f = tmp_path / "keys.json"
    f.write_text(json.dumps({"tenants": {"acme": {"keys": ["sk-j"]}}}), encoding="utf-8")
    assert ring(api_keys_file=str(f)).resolve("sk-j").name == "acme"


@pytest.mark.parametrize("content", ["not toml [", '[tenants]\nacme = 3\n', 'x = 1\n',
                                     '[tenants.acme]\nkeys = "sk"\n', '[tenants.acme]\nkeys = ["a"]\nrate = -1\n'])
def test_bad_keys_file_is_a_config_error(tmp_path: Path, content: str) -> None:
    f = tmp_path / "keys.toml"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError):
        ring(api_keys_file=str(f))


def test_missing_file_and_bad_env_and_shared_key() -> None:
    with pytest.raises(ConfigError, match="not found"):
        ring(api_keys_file="/nonexistent/keys.toml")
    with pytest.raises(ConfigError):
        ring(api_keys="no-colon-here")
    with pytest.raises(ConfigError, match="two tenants"):
        ring(api_keys="acme:same,beta:same")


def test_open_mode_when_no_keys_and_on_requires_keys() -> None:
    r = ring()
    assert r.open and r.resolve(None).name == OPEN_TENANT
    assert ring(api_keys="acme:k", server_auth="off").resolve(None).name == OPEN_TENANT
    with pytest.raises(ConfigError, match="no API key"):
        ring(server_auth="on")


def test_key_from_headers_and_no_secret_in_repr() -> None:
    assert key_from_headers({"authorization": "Bearer sk-1"}) == "sk-1"
    assert key_from_headers({"authorization": "Basic abc", "x-api-key": "sk-2"}) == "sk-2"
    assert key_from_headers({"authorization": "Bearer  "}) is None
    assert key_from_headers({}) is None
    r = ring(api_keys="acme:sk-secret-value")
    assert "sk-secret-value" not in repr(r)
    assert "sk-secret-value" not in repr(Settings.from_env({}, api_keys="acme:sk-secret-value"))


def test_open_mode_serves_a_presented_key_and_warns_once(caplog) -> None:
    """The choice documented in server/auth.py: a key sent to an open server is not refused (401 would break
    clients that always send one) but the first one is logged, once, without the key."""
    r = ring()
    with caplog.at_level("WARNING", logger="convsearch.server"):
        assert r.resolve(None).name == OPEN_TENANT
        assert not caplog.records  # no key, nothing to say
        assert r.resolve_headers({"authorization": "Bearer sk-wrong-密钥"}).name == OPEN_TENANT
        assert r.resolve_headers({"x-api-key": "sk-other"}).name == OPEN_TENANT
        assert r.resolve("sk-third").name == OPEN_TENANT
    warnings = [rec for rec in caplog.records if rec.levelname == "WARNING"]
    assert len(warnings) == 1, [w.getMessage() for w in warnings]
    msg = warnings[0].getMessage()
    assert "open" in msg and "CONVSEARCH_API_KEYS" in msg
    assert "sk-" not in msg and "密钥" not in msg
    with caplog.at_level("WARNING", logger="convsearch.server"):
        ring().resolve("sk-again")  # another ring (another server) warns for itself
    assert len([rec for rec in caplog.records if rec.levelname == "WARNING"]) == 2
