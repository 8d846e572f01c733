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
from .gate import needs_rewrite
from .pipeline import Pipeline, TurnPlan, compare_queries, search_with_context
from .rewrite import Passthrough, Rewriter, get_rewriter
from .rewrite.rules import RuleRewriter
from .types import BackendRun, Citation, Completion, Decision, DecisionKind, Document, Hit, Message, QueryComparison, RewriteResult, SearchResponse, ToolCall, Trace, Usage
from .window import history_window

# The built-in settings sections register themselves where they are declared; importing those modules here makes
# Settings.from_env read them all, whatever else the caller imported (convsearch.config imports no area).
from .agent import settings as _agent_settings  # noqa: F401, E402
from .backends import milvus as _milvus  # noqa: F401, E402
from .backends.web import bocha as _bocha, brave as _brave, searxng as _searxng, serpapi as _serpapi  # noqa: F401, E402
from .backends.web import tavily as _tavily  # noqa: F401, E402
from .history import base as _history  # noqa: F401, E402
from .infra import cache as _cache  # noqa: F401, E402
from .llm import LLMSettings as _LLMSettings  # noqa: F401, E402
from .server import settings as _server_settings  # noqa: F401, E402

__version__ = "0.1.0"

__all__ = [
    "BackendError", "BackendRun", "Capabilities", "Citation", "Completion", "ConfigError", "ConvsearchError", "DataFileError",
    "DeadlineExceeded", "Decision", "DecisionKind", "Document", "Filters", "Hit", "InMemoryBackend",
    "IndexMissingError", "InputError", "Message", "Passthrough", "Pipeline", "QueryComparison", "Recency", "RewriteResult",
    "Rewriter", "RuleRewriter", "SearchBackend", "SearchResponse", "Settings", "ToolCall", "Trace", "TurnPlan", "Usage",
    "compare_queries", "get_rewriter", "history_window", "needs_rewrite", "open_backend", "search_with_context",
]
