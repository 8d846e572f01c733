"""Reranking a turn's results: the heuristic (default, no I/O) and remote rerank servers, as registry rows.

- ``heuristic.py``: ``rerank(hits, original, rewritten, *, limit)``, the fused score and the share of the query's
  words each hit holds; the default, and the fallback order of a remote reranker.
- ``base.py``: the ``Reranker`` contract, ``apply_order`` (a server's answer applied to the hits) and
  ``ScriptedReranker`` (the test double).
- ``remote.py``: the ``cohere`` and ``tei`` wire shapes over httpx.
- ``registry.py``: ``open_reranker(settings)`` for ``CONVSEARCH_RERANKER``; ``settings.py`` its section.
"""

from . import settings as _settings  # noqa: F401 - registers the ``rerank`` settings section
from .base import Reranker, ScriptedReranker, apply_order
from .heuristic import HEURISTIC, W_FUSED, W_ORIGINAL, W_REWRITE, HeuristicReranker, rerank
from .registry import BUILTINS, open_reranker
from .settings import RerankSettings

__all__ = ["BUILTINS", "HEURISTIC", "HeuristicReranker", "RerankSettings", "Reranker", "ScriptedReranker",
           "W_FUSED", "W_ORIGINAL", "W_REWRITE", "apply_order", "open_reranker", "rerank"]
