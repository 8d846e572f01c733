"""OpenAI-compatible LLM client: one time budget per step (retries included), bounded retries, a cap on
requests in flight, structured output validated with pydantic, and an API key that never reaches a log.

Works with anything that speaks the chat-completions API (OpenAI, DeepSeek, Qwen/DashScope, Ollama, vLLM,
llama.cpp server) through the official ``openai`` SDK, installed with ``pip install 'convsearch[llm]'``.

The contract is small (``LLM.complete(messages, *, schema=None, budget_s=None) -> str | model`` and its async
twin); ``ScriptedLLM`` is the in-process test double, ``convsearch.testing.openai_server`` a real loopback
server for integration tests.

Errors: every failure of a call is one of ours, with a short ``reason`` for traces, and callers on the
turn's hot path catch ``LLMError`` and fall back (they never let an LLM break a turn)::

    BackendError (errors.py; 502, exit 5)
    └── LLMError                 the LLM step failed; ``reason``; ``retryable``
        ├── LLMTimeout           the step's budget ran out, waiting for a slot or for the reply (504)
        ├── LLMRateLimited       HTTP 429 after the allowed retries; ``retry_after`` when the server said (429)
        ├── LLMUnavailable       HTTP 5xx / 408 / 409 or a connection error after the allowed retries
        ├── LLMRequestRejected   another 4xx: bad key, unknown model, bad request; never retried
        └── LLMBadOutput         malformed JSON, empty content, a tool call where text was asked, output that
                                 fails the schema; never retried (a deterministic model says it again)

Example::

    llm = OpenAILLM(LLMConfig(base_url="http://localhost:11434/v1", model="qwen2.5:7b"))
    llm.complete([{"role": "user", "content": "ping"}], budget_s=2.0)    # 'pong'
    llm.complete(msgs, schema=Variants)                                  # Variants(variants=[...])
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from .errors import BackendError, ConfigError
from .infra.deadline import MIN_ATTEMPT_S as _MIN_ATTEMPT_S
from .infra.deadline import Deadline

if TYPE_CHECKING:  # pydantic is part of the [llm] extra; imported lazily at run time
    from pydantic import BaseModel

log = logging.getLogger("convsearch.llm")

ModelT = TypeVar("ModelT", bound="BaseModel")
STRUCTURED_MODES = ("json_schema", "json_object", "tools", "prompt")

# Below this much budget a request cannot finish on any network; give up instead of starting one.


# --- secrets --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Secret:
    """A credential that remembers where it came from and never prints its value.

    ``repr``/``str`` show only the variable's name; ``reveal()`` is the one way to the value, used at the
    moment a request is built. ``scrub(text)`` masks the value in text from elsewhere (error bodies).

    >>> Secret.from_token("sk-123")
    Secret(<token>)
    """

    env_var: str | None
    _value: str = field(repr=False, compare=True)

    @classmethod
    def from_env_var(cls, *names: str, env: Mapping[str, str] | None = None) -> "Secret | None":
        """The first of ``names`` that is set (and not blank), or None."""
        src = os.environ if env is None else env
        for name in names:
            value = src.get(name)
            if value and value.strip():
                return cls(name, value.strip())
        return None

    @classmethod
    def from_token(cls, value: str) -> "Secret":
        return cls(None, value)

    def reveal(self) -> str:
        return self._value

    def scrub(self, text: str) -> str:
        return text.replace(self._value, "***") if self._value else text

    def __repr__(self) -> str:
        return f"Secret(env={self.env_var!r})" if self.env_var else "Secret(<token>)"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # pickling (multiprocessing) is fine; it is printing that is not
        return (Secret, (self.env_var, self._value))


# --- errors ---------------------------------------------------------------------------------------
class LLMError(BackendError):
    """The LLM step failed; ``reason`` is a short phrase for the trace (no secrets, no bodies)."""

    retryable = False

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class LLMTimeout(LLMError):
    http_status = 504
    retryable = False  # the budget is spent: nothing left to retry with


class LLMRateLimited(LLMError):
    http_status = 429
    retryable = True


class LLMUnavailable(LLMError):
    retryable = True


class LLMRequestRejected(LLMError):
    http_status = 502


class LLMBadOutput(LLMError):
    pass


# --- configuration --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Everything a client needs; built from ``Settings`` by ``llm_config``."""

    model: str
    base_url: str = ""  # empty: the SDK's default (api.openai.com)
    api_key: Secret | None = None
    timeout_s: float = 3.0  # the whole budget of one step, retries included
    max_retries: int = 1
    max_concurrency: int = 8
    temperature: float = 0.0
    structured: str = "json_schema"  # json_schema | json_object | tools | prompt
    backoff_s: float = 0.1  # first retry waits this long (doubling, with jitter), unless Retry-After says

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError("LLMConfig needs a model name")
        if self.timeout_s <= 0:
            raise ConfigError("the LLM timeout must be positive")
        if self.max_retries < 0 or self.max_concurrency < 1:
            raise ConfigError("max_retries must be ≥ 0 and max_concurrency ≥ 1")
        if self.structured not in STRUCTURED_MODES:
            raise ConfigError(f"structured output mode must be one of {', '.join(STRUCTURED_MODES)}, "
                              f"not {self.structured!r}")


NOT_CONFIGURED = ("no LLM is configured: set CONVSEARCH_LLM_BASE_URL (or OPENAI_BASE_URL) and "
                  "CONVSEARCH_LLM_MODEL, plus CONVSEARCH_LLM_API_KEY (or OPENAI_API_KEY) if the endpoint needs a key")


def llm_configured(settings: Any) -> bool:
    """True when ``settings`` name a model and an endpoint (a base URL, or a key for the default one)."""
    return bool(settings.llm_model and (settings.llm_base_url or settings.llm_api_key))


def llm_config(settings: Any) -> LLMConfig:
    """The client configuration from ``Settings``, or a ConfigError saying which variables to set."""
    if not llm_configured(settings):
        raise ConfigError(NOT_CONFIGURED)
    return LLMConfig(model=settings.llm_model, base_url=settings.llm_base_url, api_key=settings.llm_api_key,
                     timeout_s=settings.llm_timeout_s, max_retries=settings.llm_max_retries,
                     max_concurrency=settings.llm_max_concurrency, temperature=settings.llm_temperature,
                     structured=settings.llm_structured)


# --- the contract ---------------------------------------------------------------------------------
ChatMessage = Mapping[str, Any]  # {"role": ..., "content": ...}, the OpenAI shape


@runtime_checkable
class LLM(Protocol):
    """Chat completion with a time budget. ``schema`` (a pydantic model class) asks for structured output
    and returns a validated instance; without it the reply's text is returned. Raises ``LLMError``."""

    model: str

    def complete(self, messages: Sequence[ChatMessage], *, schema: type[ModelT] | None = None,
                 budget_s: float | None = None, max_tokens: int | None = None) -> Any: ...

    async def acomplete(self, messages: Sequence[ChatMessage], *, schema: type[ModelT] | None = None,
                        budget_s: float | None = None, max_tokens: int | None = None) -> Any: ...


@dataclass
class LLMStats:
    """Counters of one client (thread-safe): requests sent, completions, failed steps by kind, and the most
    requests this client had open at once (``max_in_flight`` ≤ ``max_concurrency``)."""

    requests: int = 0
    completions: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def opened(self) -> None:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def closed(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def count(self, name: str, kind: str | None = None) -> None:
        with self._lock:
            if kind is None:
                setattr(self, name, getattr(self, name) + 1)
            else:
                self.failures[kind] = self.failures.get(kind, 0) + 1


# --- output parsing (pure) ------------------------------------------------------------------------
_FENCE_RE = re.compile(r"^\s*```[\w-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def strip_fences(text: str) -> str:
    """``` ```json {...} ``` ``` → ``{...}``: models wrap JSON in Markdown fences even when told not to."""
    m = _FENCE_RE.match(text)
    return m.group(1) if m else text


def parse_structured(raw: str, schema: type[ModelT]) -> ModelT:
    """Validate ``raw`` (JSON, maybe fenced, maybe with prose around one object) against ``schema``."""
    from pydantic import ValidationError

    text = strip_fences(raw).strip()
    if not text:
        raise LLMBadOutput("empty structured output")
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        # prose around the object ("Sure! {...}"): try the outermost braces once
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end and (start > 0 or end < len(text) - 1):
            try:
                return schema.model_validate_json(text[start:end + 1])
            except ValidationError:
                pass
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc)}
        where = ".".join(str(x) for x in first.get("loc", ())) or "output"
        raise LLMBadOutput(f"output does not match {schema.__name__} ({where}: {first.get('msg', '')})") from None


def response_content(resp: Any, schema: type[ModelT] | None) -> Any:
    """The text (or validated model) of an SDK chat completion, or LLMBadOutput saying what was wrong."""
    choices = getattr(resp, "choices", None) or []
    if not choices:
        raise LLMBadOutput("reply has no choices")
    msg = choices[0].message
    content = getattr(msg, "content", None)
    tool_calls = getattr(msg, "tool_calls", None) or []
    if schema is not None:
        if tool_calls:
            fn = getattr(tool_calls[0], "function", None)
            return parse_structured(getattr(fn, "arguments", "") or "", schema)
        return parse_structured(content or "", schema)
    if content is None or not str(content).strip():
        raise LLMBadOutput("tool call instead of text" if tool_calls else "empty content")
    return str(content)


def _schema_name(schema: type[Any]) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64]


def request_payload(config: LLMConfig, messages: Sequence[ChatMessage], schema: type[Any] | None,
                    max_tokens: int | None) -> dict[str, Any]:
    """The chat-completions request body (without the key, which the SDK adds as a header)."""
    msgs = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
    payload: dict[str, Any] = {"model": config.model, "messages": msgs, "temperature": config.temperature}
    if max_tokens:
        payload["max_tokens"] = max_tokens
    if schema is None:
        return payload
    json_schema = schema.model_json_schema()
    if config.structured == "json_schema":
        payload["response_format"] = {"type": "json_schema", "json_schema": {
            "name": _schema_name(schema), "schema": json_schema, "strict": True}}
    elif config.structured == "tools":
        payload["tools"] = [{"type": "function", "function": {
            "name": _schema_name(schema), "description": (schema.__doc__ or "").strip()[:200],
            "parameters": json_schema}}]
        payload["tool_choice"] = {"type": "function", "function": {"name": _schema_name(schema)}}
    else:
        if config.structured == "json_object":
            payload["response_format"] = {"type": "json_object"}
        # json_object and prompt modes carry the schema in the prompt
        hint = ("Reply with one JSON object only, matching this JSON Schema: "
                + json.dumps(json_schema, ensure_ascii=False, separators=(",", ":")))
        if msgs and msgs[0]["role"] == "system":
            msgs[0] = {"role": "system", "content": f"{msgs[0]['content']}\n\n{hint}"}
        else:
            msgs.insert(0, {"role": "system", "content": hint})
    return payload


def _retry_after(exc: Any) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    raw = headers.get("retry-after-ms")
    try:
        if raw is not None:
            return float(raw) / 1000.0
        raw = headers.get("retry-after")
        return float(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None  # an HTTP date: not worth parsing within a budget of seconds


# --- the client -----------------------------------------------------------------------------------
def _import_openai() -> Any:
    try:
        import openai
        import pydantic  # noqa: F401
    except ImportError as exc:
        raise ConfigError("the LLM path needs the openai SDK and pydantic: pip install 'convsearch[llm]'") from exc
    return openai


class OpenAILLM:
    """``LLM`` over the official ``openai`` SDK (sync and async clients, created once and reused).

    The SDK's own retries are off (``max_retries=0``): ours share one deadline, so a step with retries never
    runs past ``budget_s``. Every attempt's timeout is what is left of that deadline. A bounded semaphore
    caps requests in flight (``max_concurrency``); waiting for a slot counts against the budget too.
    """

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.model = config.model
        self.stats = LLMStats()
        self._openai = _import_openai()
        self._sem = threading.BoundedSemaphore(config.max_concurrency)
        self._client = self._openai.OpenAI(**self._client_kwargs())
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, asyncio.Semaphore]] = \
            weakref.WeakKeyDictionary()

    def _client_kwargs(self) -> dict[str, Any]:
        key = self.config.api_key.reveal() if self.config.api_key else "no-key"  # local servers need none
        kw: dict[str, Any] = {"api_key": key, "max_retries": 0, "timeout": self.config.timeout_s}
        if self.config.base_url:
            kw["base_url"] = self.config.base_url
        return kw

    def __repr__(self) -> str:
        return (f"OpenAILLM(model={self.model!r}, base_url={self.config.base_url!r}, "
                f"api_key={self.config.api_key!r})")

    # --- error mapping ---
    def _scrub(self, text: str) -> str:
        text = self.config.api_key.scrub(text) if self.config.api_key else text
        text = re.sub(r"(?i)(bearer\s+)[^\s'\"]+", r"\1***", text)
        return text[:200]

    def _map(self, exc: BaseException, budget_s: float) -> LLMError:
        o = self._openai
        if isinstance(exc, LLMError):
            return exc
        if isinstance(exc, (o.APITimeoutError, TimeoutError, asyncio.TimeoutError)):
            return LLMTimeout(f"timed out (budget {budget_s:.2f} s)")
        if isinstance(exc, o.RateLimitError):
            return LLMRateLimited("rate limited (HTTP 429)", retry_after=_retry_after(exc))
        if isinstance(exc, o.APIStatusError):
            code = int(getattr(exc, "status_code", 0) or 0)
            if code >= 500 or code in (408, 409):
                return LLMUnavailable(f"server error (HTTP {code})", retry_after=_retry_after(exc))
            body = getattr(exc, "message", "") or ""
            return LLMRequestRejected(f"request rejected (HTTP {code}): {self._scrub(str(body))}")
        if isinstance(exc, o.APIConnectionError):
            return LLMUnavailable("connection failed")
        if isinstance(exc, (ValueError, o.APIResponseValidationError)):
            return LLMBadOutput(f"malformed reply ({type(exc).__name__})")
        return LLMError(f"client error ({type(exc).__name__}: {self._scrub(str(exc))})")

    def _backoff(self, attempt: int, err: LLMError) -> float:
        if err.retry_after is not None:
            return max(err.retry_after, 0.0)
        base = self.config.backoff_s * (2 ** (attempt - 1))
        return base * (0.5 + random.random() / 2)

    def _give_up(self, err: LLMError, attempt: int, deadline: Deadline) -> float | None:
        """None to give up; otherwise how long to wait before the next attempt."""
        if not err.retryable or attempt > self.config.max_retries:
            return None
        wait = self._backoff(attempt, err)
        if wait + _MIN_ATTEMPT_S >= deadline.remaining():
            err.reason += f"; a retry after {wait:.2f} s would not fit the budget"
            return None
        return wait

    def _fail(self, err: LLMError, t0: float, attempt: int) -> LLMError:
        self.stats.count("failures", type(err).__name__)
        log.debug("llm call failed: model=%s attempts=%d ms=%.1f reason=%s", self.model, attempt,
                  (time.perf_counter() - t0) * 1000, err.reason)
        return err

    # --- sync ---
    def complete(self, messages: Sequence[ChatMessage], *, schema: type[ModelT] | None = None,
                 budget_s: float | None = None, max_tokens: int | None = None) -> Any:
        budget = self.config.timeout_s if budget_s is None else budget_s
        deadline = Deadline(budget)
        payload = request_payload(self.config, messages, schema, max_tokens)
        t0 = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            remaining = deadline.remaining()
            if remaining <= _MIN_ATTEMPT_S:
                raise self._fail(LLMTimeout(f"timed out (budget {budget:.2f} s)"), t0, attempt)
            if not self._sem.acquire(timeout=remaining):
                raise self._fail(LLMTimeout(f"no free LLM slot within the budget ({budget:.2f} s; "
                                            f"{self.config.max_concurrency} in flight)"), t0, attempt)
            self.stats.opened()
            try:
                resp = self._client.chat.completions.create(**payload, timeout=max(deadline.remaining(), 0.001))
                out = response_content(resp, schema)
                self.stats.count("completions")
                log.debug("llm call: model=%s attempts=%d ms=%.1f", self.model, attempt,
                          (time.perf_counter() - t0) * 1000)
                return out
            except Exception as exc:  # noqa: BLE001 - every client failure becomes one of ours
                err = self._map(exc, budget)
            finally:
                self.stats.closed()
                self._sem.release()
            wait = self._give_up(err, attempt, deadline)
            if wait is None:
                raise self._fail(err, t0, attempt)
            time.sleep(wait)

    # --- async ---
    def _aclient(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        pair = self._async.get(loop)
        if pair is None:
            pair = (self._openai.AsyncOpenAI(**self._client_kwargs()), asyncio.Semaphore(self.config.max_concurrency))
            self._async[loop] = pair
        return pair

    async def acomplete(self, messages: Sequence[ChatMessage], *, schema: type[ModelT] | None = None,
                        budget_s: float | None = None, max_tokens: int | None = None) -> Any:
        budget = self.config.timeout_s if budget_s is None else budget_s
        deadline = Deadline(budget)
        payload = request_payload(self.config, messages, schema, max_tokens)
        client, sem = self._aclient()
        t0 = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            if deadline.remaining() <= _MIN_ATTEMPT_S:
                raise self._fail(LLMTimeout(f"timed out (budget {budget:.2f} s)"), t0, attempt)
            try:
                # wait_for is the hard deadline: slot wait + request, whatever the transport does
                out = await asyncio.wait_for(self._acall(client, sem, payload, schema, deadline),
                                             timeout=deadline.remaining())
                self.stats.count("completions")
                return out
            except Exception as exc:  # noqa: BLE001 - every client failure becomes one of ours
                err = self._map(exc, budget)
            wait = self._give_up(err, attempt, deadline)
            if wait is None:
                raise self._fail(err, t0, attempt)
            await asyncio.sleep(wait)

    async def _acall(self, client: Any, sem: asyncio.Semaphore, payload: dict[str, Any],
                     schema: type[Any] | None, deadline: Deadline) -> Any:
        async with sem:
            self.stats.opened()
            try:
                resp = await client.chat.completions.create(**payload, timeout=max(deadline.remaining(), 0.001))
            finally:
                self.stats.closed()
        return response_content(resp, schema)

    # --- lifecycle ---
    def close(self) -> None:
        self._client.close()

    async def aclose(self) -> None:
        """Close the async client of the running loop (each loop gets its own)."""
        pair = self._async.pop(asyncio.get_running_loop(), None)
        if pair is not None:
            await pair[0].close()

    def __enter__(self) -> "OpenAILLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the test double ------------------------------------------------------------------------------
Script = Any  # str | BaseModel | LLMError | Callable[[list[dict]], str | BaseModel]


class ScriptedLLM:
    """In-process test double: answers from a list (first in, first out), then ``default``.

    An item may be a string, a pydantic model (returned as is), an ``LLMError`` (raised), or a callable
    taking the messages. A string for a ``schema`` call is validated like a real reply. ``calls`` records
    ``(messages, schema, budget_s)``.
    """

    def __init__(self, replies: Sequence[Script] = (), *, default: Script | None = None, model: str = "scripted") -> None:
        self.replies = list(replies)
        self.default = default
        self.model = model
        self.calls: list[tuple[list[dict[str, Any]], type[Any] | None, float | None]] = []
        self.stats = LLMStats()
        self._lock = threading.Lock()

    def _next(self) -> Script:
        with self._lock:
            if self.replies:
                return self.replies.pop(0)
        if self.default is None:
            raise LLMBadOutput("no scripted reply left")
        return self.default

    def complete(self, messages: Sequence[ChatMessage], *, schema: type[ModelT] | None = None,
                 budget_s: float | None = None, max_tokens: int | None = None) -> Any:
        msgs = [dict(m) for m in messages]
        with self._lock:
            self.calls.append((msgs, schema, budget_s))
        self.stats.count("requests")
        item = self._next()
        if isinstance(item, LLMError):
            raise item
        if callable(item) and not isinstance(item, str) and not hasattr(item, "model_dump"):
            item = item(msgs)
        if schema is not None and isinstance(item, str):
            return parse_structured(item, schema)
        if isinstance(item, str) and not item.strip():
            raise LLMBadOutput("empty content")
        return item

    async def acomplete(self, messages: Sequence[ChatMessage], *, schema: type[ModelT] | None = None,
                        budget_s: float | None = None, max_tokens: int | None = None) -> Any:
        return self.complete(messages, schema=schema, budget_s=budget_s, max_tokens=max_tokens)

    def close(self) -> None:
        pass


def open_llm(settings: Any) -> OpenAILLM:
    """An ``OpenAILLM`` for ``Settings`` (ConfigError naming the variables when none is configured)."""
    return OpenAILLM(llm_config(settings))



__all__ = [
    "LLM", "LLMBadOutput", "LLMConfig", "LLMError", "LLMRateLimited", "LLMRequestRejected", "LLMStats",
    "LLMTimeout", "LLMUnavailable", "NOT_CONFIGURED", "OpenAILLM", "STRUCTURED_MODES", "ScriptedLLM", "Secret",
    "llm_config", "llm_configured", "open_llm", "parse_structured", "request_payload", "response_content",
    "strip_fences",
]
