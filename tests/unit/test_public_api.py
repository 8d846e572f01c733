"""Locks: the public API (``__all__``), the exception tree and its exit/HTTP codes, settings from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

import convsearch
from convsearch import errors
from convsearch.config import Settings

PUBLIC = [
    "BackendError",
    "BackendRun",
    "Capabilities",
    "Citation",
    "Completion",
    "ConfigError",
    "ConvsearchError",
    "DataFileError",
    "DeadlineExceeded",
    "Decision",
    "DecisionKind",
    "Document",
    "Filters",
    "Hit",
    "InMemoryBackend",
    "IndexMissingError",
    "InputError",
    "Message",
    "Passthrough",
    "Pipeline",
    "QueryComparison",
    "Recency",
    "RewriteResult",
    "Rewriter",
    "RuleRewriter",
    "SearchBackend",
    "SearchResponse",
    "Settings",
    "ToolCall",
    "Trace",
    "TurnPlan",
    "TurnRequest",
    "Usage",
    "compare_queries",
    "get_rewriter",
    "history_window",
    "needs_rewrite",
    "open_backend",
    "search_with_context",
]


def test_public_api_is_locked():
    assert PUBLIC == sorted(PUBLIC)
    assert sorted(convsearch.__all__) == PUBLIC
    assert convsearch.__all__ == PUBLIC, "keep __all__ sorted"


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name):
    assert getattr(convsearch, name) is not None


def test_version():
    assert convsearch.__version__.count(".") == 2


@pytest.mark.parametrize("exc,base,exit_code,status", [
    (errors.InputError, errors.ConvsearchError, 2, 400),
    (errors.ConfigError, errors.ConvsearchError, 3, 500),
    (errors.IndexMissingError, errors.ConvsearchError, 4, 404),
    (errors.BackendError, errors.ConvsearchError, 5, 502),
    (errors.DeadlineExceeded, errors.ConvsearchError, 6, 504),
])
def test_exception_tree_and_codes(exc, base, exit_code, status):
    assert issubclass(exc, base)
    assert exc.exit_code == exit_code and exc.http_status == status


def test_data_file_error_is_an_input_error_with_location():
    e = errors.DataFileError("docs/kb.jsonl", "malformed JSON", 7)
    assert isinstance(e, errors.InputError) and isinstance(e, ValueError)
    assert str(e) == "docs/kb.jsonl:7: malformed JSON"
    assert e.exit_code == 2 and (e.path, e.line, e.problem) == ("docs/kb.jsonl", 7, "malformed JSON")
    assert str(errors.DataFileError("x.md", "the file is empty")) == "x.md: the file is empty"


def test_settings_defaults_with_a_clean_environment(monkeypatch, tmp_path):
    # the autouse fixture removed every CONVSEARCH_* variable but the data dir, which it points at tmp_path
    assert Settings.from_env().data_dir == tmp_path / "convsearch-data"
    monkeypatch.delenv("CONVSEARCH_DATA_DIR")
    assert Settings.from_env() == Settings()
    s = Settings()
    assert (s.window, s.max_variants, s.fusion, s.stale_days, s.snippet_tokens, s.top_k, s.mode) == (
        8, 3, "rrf", 365, 120, 5, "rewrite")


def test_settings_read_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CONVSEARCH_WINDOW", "4")
    monkeypatch.setenv("CONVSEARCH_FUSION", "max")
    monkeypatch.setenv("CONVSEARCH_DATA_DIR", str(tmp_path))
    s = Settings.from_env()
    assert (s.window, s.fusion, s.data_dir) == (4, "max", Path(tmp_path))
    assert Settings.from_env(window=2).window == 2  # explicit overrides win
    assert Settings.from_env(window=None).window == 4  # None means "not given"


def test_settings_bad_env_value_names_the_variable():
    with pytest.raises(errors.ConfigError, match="CONVSEARCH_WINDOW"):
        Settings.from_env({"CONVSEARCH_WINDOW": "eight"})
