"""Search backends: the embedded hybrid index (default) and the in-memory test double."""

from .base import Capabilities, Filters, InMemoryBackend, Recency, SearchBackend, WritableBackend

__all__ = ["Capabilities", "Filters", "InMemoryBackend", "Recency", "SearchBackend", "WritableBackend"]
