"""convsearch: search that works inside multi-turn conversations.

history window → follow-up gate → rewrite → variants → backends → fuse → dedup → rerank (original query)
→ cited context, with a trace of every step. ``Pipeline`` owns the parts of a turn; ``search_with_context`` is
the one-call convenience over it; ``open_backend`` builds backends by name (``CONVSEARCH_BACKENDS``).
"""

from .backends.base import Capabilities, Filters, InMemoryBackend, Recency, SearchBackend
from .backends.registry import open_backend
from .config import Settings
from .errors import (BackendError, ConfigError, ConvsearchError, DataFileError, DeadlineExceeded, IndexMissingError,
                     InputError)
from .resolve.gate import needs_rewrite
from .pipeline import Pipeline, TurnPlan, TurnRequest, compare_queries, search_with_context
from .rewrite import Passthrough, Rewriter, get_rewriter
from .resolve.rules import RuleRewriter
from .types import BackendRun, Citation, Completion, Decision, DecisionKind, Document, Hit, Message, QueryComparison, RewriteResult, SearchResponse, ToolCall, Trace, Usage
from .window import history_window

__version__ = "0.1.0"

__all__ = [
    "BackendError", "BackendRun", "Capabilities", "Citation", "Completion", "ConfigError", "ConvsearchError", "DataFileError",
    "DeadlineExceeded", "Decision", "DecisionKind", "Document", "Filters", "Hit", "InMemoryBackend",
    "IndexMissingError", "InputError", "Message", "Passthrough", "Pipeline", "QueryComparison", "Recency", "RewriteResult",
    "Rewriter", "RuleRewriter", "SearchBackend", "SearchResponse", "Settings", "ToolCall", "Trace", "TurnPlan",
    "TurnRequest", "Usage",
    "compare_queries", "get_rewriter", "history_window", "needs_rewrite", "open_backend", "search_with_context",
]
