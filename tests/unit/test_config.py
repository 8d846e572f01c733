"""config.py: every Settings field has its row in the documented env table; secrets stay secrets."""

from __future__ import annotations

import logging
import re
from dataclasses import fields

import pytest

import convsearch.config as config_mod
from convsearch.config import SECRET_FIELDS, Settings
from convsearch.secret import Secret


def _documented() -> set[str]:
    return set(re.findall(r"^\|\s*(CONVSEARCH_[A-Z0-9_]+)\s*\|", config_mod.__doc__ or "", re.MULTILINE))


def test_every_settings_field_is_in_the_env_table():
    names = {f"CONVSEARCH_{f.name.upper()}" for f in fields(Settings) if f.metadata.get("env", True)}
    documented = _documented()
    assert names - documented == set(), "add a row to config.py's docstring table for each of these"
    assert documented - names == set(), "these rows document no Settings field"


def test_every_documented_variable_is_read():
    s = Settings.from_env({"CONVSEARCH_TOP_K": "7", "CONVSEARCH_MODE": "dual"})
    assert (s.top_k, s.mode) == (7, "dual")


@pytest.mark.parametrize("name, var", [("db_url", "CONVSEARCH_DB_URL"), ("api_keys", "CONVSEARCH_API_KEYS"),
                                       ("llm_api_key", "CONVSEARCH_LLM_API_KEY"),
                                       ("tavily_api_keys", "CONVSEARCH_TAVILY_API_KEYS"),
                                       ("cache_url", "CONVSEARCH_CACHE_URL")])
def test_secret_settings_never_print_their_value(name, var, caplog):
    value = {"db_url": "postgresql://app:hunter2-Zx9@db/app",
             "cache_url": "redis://:hunter2-Zx9@127.0.0.1:6379/0"}.get(name, "acme:sk-live-Zx9hunter2")
    from_env = Settings.from_env({var: value})
    in_code = Settings(**{name: value})
    overridden = Settings.from_env({}, **{name: value})
    for s in (from_env, in_code, overridden):
        secret = getattr(s, name)
        assert isinstance(secret, Secret) and secret.reveal() == value
        with caplog.at_level(logging.DEBUG):
            logging.getLogger("convsearch.test").info("settings: %s %r", s, s)
        for text in (repr(s), str(s), repr(secret), f"{secret}", caplog.text):
            assert "hunter2" not in text
    assert getattr(from_env, name).env_var == var
    assert name in SECRET_FIELDS and getattr(Settings(), name) is None and getattr(Settings(**{name: " "}), name) is None


def test_the_db_url_secret_reaches_the_store(tmp_path):
    from convsearch.history.sql import SqlStore

    url = f"sqlite:///{tmp_path / 'h.db'}"
    store = SqlStore.from_settings(Settings(db_url=url, data_dir=tmp_path / "unused"))
    try:
        assert str(store.url) == url
    finally:
        store.close()
