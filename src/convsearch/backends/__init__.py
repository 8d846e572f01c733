"""Search backends: the embedded hybrid index (default) and the in-memory test double."""

from .base import InMemoryBackend, SearchBackend, search_many

__all__ = ["InMemoryBackend", "SearchBackend", "search_many"]
