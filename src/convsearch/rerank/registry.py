"""Rerankers by name: ``open_reranker(settings)`` builds what ``CONVSEARCH_RERANKER`` names.

- ``heuristic``: the fused score and the share of the query's words a hit holds (``heuristic.py``); no I/O; the
  default.
- ``cohere``: ``POST {BASE_URL}/rerank`` ``{model, query, documents, top_n}`` → ``results[{index,
  relevance_score}]``: vLLM, Infinity, Xinference, Jina, Cohere (``remote.py``; httpx, the ``web`` extra).
- ``tei``: ``POST {BASE_URL}/rerank`` ``{query, texts}`` → ``[{index, score}]``: Text Embeddings Inference.

A row's factory (``"module:function"``) is imported only when that reranker is opened. Each returns a
``Reranker`` (``base.py``); a remote one shares its HTTP client with every other reranker of the same endpoint in
the process, and its ``close()`` gives its handle back.

>>> from convsearch.config import Settings
>>> open_reranker(Settings()).name
'heuristic'
>>> list(BUILTINS)
['heuristic', 'cohere', 'tei']
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Settings
    from .base import Reranker


@dataclass(frozen=True, slots=True)
class Row:
    """A registry row: ``target`` the factory; ``remote`` whether it calls a server (and needs a base URL)."""

    target: str
    remote: bool = False
    example_url: str = ""


BUILTINS: dict[str, Row] = {
    "heuristic": Row("convsearch.rerank.heuristic:from_settings"),
    "cohere": Row("convsearch.rerank.remote:cohere_from_settings", remote=True,
                  example_url="http://localhost:8000/v1 for vLLM"),
    "tei": Row("convsearch.rerank.remote:tei_from_settings", remote=True, example_url="http://localhost:8080"),
}


def open_reranker(settings: Settings) -> Reranker:
    """The reranker ``CONVSEARCH_RERANKER`` names, configured by ``settings``; the caller closes it. The settings
    section has already refused an unknown name or a remote row without a base URL (one ConfigError line); a
    missing extra is one too."""
    row = BUILTINS[settings.section("rerank").reranker]  # by name: settings.py imports this module
    mod_name, _, attr = row.target.partition(":")
    factory: Any = getattr(importlib.import_module(mod_name), attr)
    reranker: Reranker = factory(settings)
    return reranker


__all__ = ["BUILTINS", "Row", "open_reranker"]
