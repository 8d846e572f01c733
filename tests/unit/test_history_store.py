"""The history contract on the in-memory test double (the same suite runs on SQLite and PostgreSQL in
tests/integration/test_history_sql.py)."""

from __future__ import annotations

import pytest

from convsearch.errors import HistoryUnavailable
from convsearch.history import InMemoryStore, Scope
from convsearch.history.testing import HistoryStoreContract


class TestInMemoryStore(HistoryStoreContract):
    @pytest.fixture
    def store(self):
        return InMemoryStore()


def test_a_store_marked_down_raises_history_unavailable():
    store = InMemoryStore()
    store.down = True
    with pytest.raises(HistoryUnavailable) as e:
        store.window(Scope("t", "a", "s"), 8)
    assert e.value.http_status == 503 and e.value.exit_code == 7
