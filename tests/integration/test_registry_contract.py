"""Backends opened by name through the registry pass the shipped contract suites: what a new backend needs is
its module (with ``from_settings``), one registry entry, and a test like this one."""

from __future__ import annotations

import pytest

from convsearch import Settings, open_backend
from convsearch.backends.testing import CONTRACT_DOCS, WritableBackendContract

pytestmark = pytest.mark.integration


def _settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path, dense="off", backends="local")


class TestMemoryByNameWritable(WritableBackendContract):
    @pytest.fixture
    def backend(self):
        return open_backend(Settings(), "memory")


class TestLocalByNameWritable(WritableBackendContract):
    @pytest.fixture
    def backend(self, tmp_path):
        return open_backend(_settings(tmp_path), create=True)  # CONVSEARCH_BACKENDS=local

    def reopen(self, backend):
        return open_backend(_settings(backend.path.parent))  # the same data dir, opened again by name


def test_the_local_backend_by_name_finds_the_contract_corpus_in_both_languages(tmp_path):
    b = open_backend(_settings(tmp_path), create=True)
    b.add(CONTRACT_DOCS)
    again = open_backend(_settings(tmp_path))
    assert again.search("番禺 露营 天气", top_k=3)[0].id == "zh-camp"
    assert again.search("Falcon rocket launch", top_k=3)[0].id == "en-launch"
