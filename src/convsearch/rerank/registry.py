"""Rerankers by name: ``open_reranker(settings)`` builds what ``CONVSEARCH_RERANKER`` names.

- ``heuristic``: the fused score and the share of the query's words a hit holds (``heuristic.py``); no I/O; the
  default.
- ``cohere``: ``POST {BASE_URL}/rerank`` ``{model, query, documents, top_n}`` → ``results[{index,
  relevance_score}]``: vLLM, Infinity, Xinference, Jina, Cohere (``remote.py``; httpx, the ``web`` extra).
- ``tei``: ``POST {BASE_URL}/rerank`` ``{query, texts}`` → ``[{index, score}]``: Text Embeddings Inference.

The rows are registered by this module's ``register(r)``, a plugin like any other (``convsearch.plugins``); a
package adds a reranker the same way (``r.reranker("acme", "acme.rerank:from_settings", remote=True)``). A row's
factory (``"module:function"``) is imported only when that reranker is opened. Each returns a
``Reranker`` (``base.py``); a remote one shares its HTTP client with every other reranker of the same endpoint in
the process, and its ``close()`` gives its handle back.

>>> from convsearch.config import Settings
>>> open_reranker(Settings()).name
'heuristic'
>>> list(BUILTINS)
['heuristic', 'cohere', 'tei']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import plugins

if TYPE_CHECKING:
    from ..config import Settings
    from ..plugins import Registrar
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


def register(r: Registrar) -> None:
    """The built-in rerankers and their settings section (the ``convsearch.plugins`` hook)."""
    for name, row in BUILTINS.items():
        r.reranker(name, row.target, remote=row.remote, example_url=row.example_url)
    r.settings("convsearch.rerank.settings:RerankSettings")


def row(name: str) -> Row | None:
    """The registered reranker ``name`` (a built-in or a plugin's), as a Row; None when nobody registers it."""
    entry = plugins.find("reranker", name)
    if entry is None:
        return None
    return Row(entry.where, bool(entry.option("remote")), str(entry.option("example_url") or ""))


def known() -> list[str]:
    """Every registered reranker's name (built-ins first)."""
    return list(plugins.rerankers())


def open_reranker(settings: Settings) -> Reranker:
    """The reranker ``CONVSEARCH_RERANKER`` names, configured by ``settings``; the caller closes it. The settings
    section has already refused an unknown name or a remote row without a base URL (one ConfigError line); a
    missing extra is one too."""
    name: str = settings.section("rerank").reranker  # by name: settings.py imports this module
    entry = plugins.find("reranker", name)
    if entry is None:
        from ..errors import ConfigError

        raise ConfigError(f"CONVSEARCH_RERANKER must be one of {', '.join(known())}, not {name!r}")
    factory: Any = entry.load()
    reranker: Reranker = factory(settings)
    return reranker


__all__ = ["BUILTINS", "Row", "known", "open_reranker", "register", "row"]
