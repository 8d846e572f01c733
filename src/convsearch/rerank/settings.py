"""The ``rerank`` settings section: which reranker orders a turn's results, and where its server is.

| variable                     | default              | meaning                                   |
|------------------------------|----------------------|-------------------------------------------|
| CONVSEARCH_RERANKER          | heuristic            | heuristic (fused score + word cover, no I/O); cohere: a server speaking Cohere's `POST {BASE_URL}/rerank` (vLLM, Infinity, Xinference, Jina, Cohere); tei: Hugging Face Text Embeddings Inference's `POST {BASE_URL}/rerank` |
| CONVSEARCH_RERANK_BASE_URL   | (none; required by cohere and tei) | the server's URL up to `/rerank`: `http://host:8000/v1` for vLLM, Xinference, `https://api.jina.ai/v1`, `https://api.cohere.com/v2`; `http://host:8080` for TEI (a URL ending in `/rerank` is used as it is) |
| CONVSEARCH_RERANK_MODEL      | (none)               | the `model` a cohere-shaped request names (Cohere, Jina and Xinference need it; a one-model vLLM or Infinity does not); TEI serves one model and is sent none |
| CONVSEARCH_RERANK_API_KEY    | (none)               | sent as `Authorization: Bearer …`; a Secret, never printed or logged |
| CONVSEARCH_RERANK_CANDIDATES | 30                   | the head of the heuristic order sent to the server (TEI's default `--max-client-batch-size` is 32) |
| CONVSEARCH_RERANK_TIMEOUT_S  | 2                    | one rerank call's timeout (cut to what is left of the turn's deadline); past it the heuristic order stands |

A remote reranker that fails (an HTTP error, a timeout, a malformed answer) leaves the heuristic order in place
and the turn says so in its ``errors``: ``rerank (cohere): HTTP 500; heuristic order used``.
"""
# ruff: noqa: E501 - the variable table's rows are one line each (tests/unit/test_config.py reads them)

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import Section, named
from ..errors import ConfigError
from ..secret import Secret
from .registry import known, row


@dataclass(frozen=True, slots=True)
class RerankSettings(Section):
    """``CONVSEARCH_RERANKER`` and ``CONVSEARCH_RERANK_*`` (the table above)."""

    name = "rerank"
    prefix = "CONVSEARCH_RERANK_"
    reranker: str = named("CONVSEARCH_RERANKER", "heuristic")
    base_url: str = ""
    model: str = ""
    api_key: Secret | None = field(default=None)
    candidates: int = 30
    timeout_s: float = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "reranker", self.reranker.strip().lower())
        object.__setattr__(self, "base_url", self.base_url.strip())
        Section.__post_init__(self)

    def check(self) -> None:
        got = row(self.reranker)  # a built-in or a plugin's (convsearch.plugins)
        if got is None:
            raise ConfigError(f"CONVSEARCH_RERANKER must be one of {', '.join(known())}, not {self.reranker!r}")
        if got.remote and not self.base_url:
            raise ConfigError(f"CONVSEARCH_RERANKER={self.reranker} needs CONVSEARCH_RERANK_BASE_URL, the server's URL "
                              f"up to /rerank (e.g. {got.example_url})")
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"CONVSEARCH_RERANK_BASE_URL must start with http:// or https://, not {self.base_url!r}")
        self._require("candidates", "timeout_s")


__all__ = ["RerankSettings"]
