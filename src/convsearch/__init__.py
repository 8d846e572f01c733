"""convsearch: search that works inside multi-turn conversations.

history window → follow-up gate → rewrite → variants → backends → fuse → dedup → rerank (original query)
→ cited context, with a trace of every step.
"""

from .backends.base import Capabilities, Filters, InMemoryBackend, Recency, SearchBackend
from .config import Settings
from .errors import (BackendError, ConfigError, ConvsearchError, DataFileError, DeadlineExceeded, IndexMissingError,
                     InputError)
from .gate import needs_rewrite
from .pipeline import compare_queries, search_with_context
from .rewrite import Passthrough, Rewriter, get_rewriter
from .rewrite.rules import RuleRewriter
from .types import Citation, Completion, Decision, DecisionKind, Document, Hit, Message, QueryComparison, RewriteResult, SearchResponse, ToolCall, Trace, Usage
from .window import history_window

__version__ = "0.1.0"

__all__ = [
    "BackendError", "Capabilities", "Citation", "Completion", "ConfigError", "ConvsearchError", "DataFileError",
    "DeadlineExceeded", "Decision", "DecisionKind", "Document", "Filters", "Hit", "InMemoryBackend",
    "IndexMissingError", "InputError", "Message", "Passthrough", "QueryComparison", "Recency", "RewriteResult",
    "Rewriter", "RuleRewriter", "SearchBackend", "SearchResponse", "Settings", "ToolCall", "Trace", "Usage",
    "compare_queries", "get_rewriter", "history_window", "needs_rewrite", "search_with_context",
]
