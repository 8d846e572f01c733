"""The shipped backend contract suites (convsearch.backends.testing) on the in-memory double: once applying
every filter and recency window natively, once applying none (so ``search_applied`` does it after the search)."""

from __future__ import annotations

import pytest

from convsearch.backends.base import Capabilities, InMemoryBackend
from convsearch.backends.testing import CONTRACT_DOCS, CONTRACT_TODAY, SearchBackendContract, WritableBackendContract


class NothingNative(InMemoryBackend):
    """Declares no native filter or recency and ignores them, so every one must be applied after the search."""

    name = "memory-bare"
    capabilities = Capabilities(writable=True)

    def search(self, query, *, top_k=10, filters=None, recency=None, dense_query=None):
        from convsearch.backends.base import Filters

        Filters.of(filters)  # unknown fields are still an InputError
        return super().search(query, top_k=top_k)


class TestInMemoryContract(SearchBackendContract):
    @pytest.fixture
    def backend(self):
        return InMemoryBackend(CONTRACT_DOCS, today=CONTRACT_TODAY)


class TestNothingNativeContract(SearchBackendContract):
    @pytest.fixture
    def backend(self):
        return NothingNative(CONTRACT_DOCS, today=CONTRACT_TODAY)


class TestInMemoryWritable(WritableBackendContract):
    @pytest.fixture
    def backend(self):
        return InMemoryBackend(today=CONTRACT_TODAY)


def test_a_backend_claiming_a_filter_it_ignores_fails_the_suite():
    """The suite has teeth: a backend that says it filters natively but does not is caught."""
    liar = NothingNative(CONTRACT_DOCS, today=CONTRACT_TODAY)
    liar.capabilities = Capabilities(writable=True, filters=frozenset({"lang"}))
    with pytest.raises(AssertionError, match="let through"):
        TestNothingNativeContract().test_every_filter_field_is_honoured(liar, 0)
