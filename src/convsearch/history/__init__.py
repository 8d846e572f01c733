"""Conversations that persist: a history store scoped tenant → agent → session, rolling summaries and
memory layers (window, task stack of cited results, opt-in profile).

>>> from convsearch import search_with_context
>>> from convsearch.backends.base import InMemoryBackend
>>> from convsearch.history import Conversation, InMemoryStore, Scope
>>> from convsearch.types import Document
>>> index = InMemoryBackend([Document("price", "AnySearch 专业版每月 99 元", title="AnySearch 价格")])
>>> store = InMemoryStore()           # open_store(Settings.from_env()): SQLite under the data dir, or CONVSEARCH_DB_URL
>>> conv = Conversation(store, Scope("acme", "support-bot", "s-42"))
>>> _ = search_with_context("AnySearch 支持哪些检索方式？", backend=index, session=conv)
>>> search_with_context("价格呢？", backend=index, session=conv).standalone_query   # the stored turn is the context
'AnySearch 的价格'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..infra.lazy import lazy_exports
from .base import CitedResult, Fact, HistorySettings, HistoryStore, MemoryStore, Scope, StoredMessage, Summary

if TYPE_CHECKING:
    from ..config import Settings
    from .memory import Memory, cited_refs, extract_facts, fit_tokens
    from .memory_store import InMemoryStore
    from .session import Conversation
    from .sql import SqlStore
    from .summary import BackgroundRefresher, ExtractiveSummarizer, Summarizer, default_refresher, refresh_summary

# Loaded on first use: ``import convsearch`` registers HistorySettings (``base``) without the rest of the package.
_HOME = {"Memory": "memory", "cited_refs": "memory", "extract_facts": "memory", "fit_tokens": "memory",
         "InMemoryStore": "memory_store", "Conversation": "session", "BackgroundRefresher": "summary",
         "ExtractiveSummarizer": "summary", "Summarizer": "summary", "default_refresher": "summary",
         "refresh_summary": "summary"}


__getattr__ = lazy_exports(__name__, _HOME)


def open_store(settings: "Settings") -> "SqlStore":
    """The store the settings name: ``CONVSEARCH_DB_URL``, else SQLite at ``DATA_DIR/history.sqlite3``;
    migrated to the current schema on open."""
    from .sql import SqlStore

    return SqlStore.from_settings(settings)


def flush_refreshes(timeout: float | None = 30.0) -> bool:
    """Wait for the background summary refreshes queued so far (tests, shutdown)."""
    from .summary import default_refresher

    return default_refresher().flush(timeout)


__all__ = ["BackgroundRefresher", "CitedResult", "Conversation", "ExtractiveSummarizer", "Fact", "HistorySettings",
           "HistoryStore", "InMemoryStore", "Memory", "MemoryStore", "Scope", "StoredMessage", "Summarizer", "Summary",
           "cited_refs", "default_refresher", "extract_facts", "fit_tokens", "flush_refreshes", "open_store",
           "refresh_summary"]
