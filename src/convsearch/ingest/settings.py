"""The ingest settings (``CONVSEARCH_INGEST_*``): how big a file may be, how big a passage is, how many passages a
commit holds. Read where a sync runs (``IngestSettings.of(settings)``), so nothing imports this module for its side
effect.

| variable                         | default | meaning |
|----------------------------------|---------|---------|
| CONVSEARCH_INGEST_MAX_MB         | 200     | a file bigger than this is not read: one failed line in the summary |
| CONVSEARCH_INGEST_PASSAGE_TOKENS | 400     | a passage's size, in estimated embedder tokens (see ingest/passages.py) |
| CONVSEARCH_INGEST_BATCH          | 256     | passages per commit: an interrupted run keeps every whole batch |
| CONVSEARCH_INGEST_PROGRESS_S     | 5       | when stderr is not a terminal, a progress line this often (seconds) |
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Section


@dataclass(frozen=True, slots=True)
class IngestSettings(Section):
    """How files become passages (``convsearch index FOLDER``)."""

    name = "ingest"
    prefix = "CONVSEARCH_INGEST_"
    max_mb: float = 200.0
    passage_tokens: int = 400
    batch: int = 256
    progress_s: float = 5.0

    def check(self) -> None:
        self._require("max_mb")
        self._require("passage_tokens")
        self._require("batch")
        self._require("progress_s")
        if self.passage_tokens < 32 or self.passage_tokens > 500:
            from ..errors import ConfigError

            raise ConfigError("CONVSEARCH_INGEST_PASSAGE_TOKENS must be between 32 and 500 (the embedder reads 512 "
                              f"tokens at most), not {self.passage_tokens}")
