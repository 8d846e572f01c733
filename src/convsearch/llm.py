"""OpenAI-compatible LLM client: one time budget per step (retries included), bounded retries, a cap on
requests in flight, structured output validated with pydantic, and an API key that never reaches a log.

Works with anything that speaks the chat-completions API (OpenAI, DeepSeek, Qwen/DashScope, Ollama, vLLM,
llama.cpp server) through the official ``openai`` SDK, installed with ``pip install 'convsearch[llm]'``.

The contract is small and speaks our own types (``convsearch.types``): ``LLM.complete(messages, *, tools=None,
schema=None, budget_s=None, max_tokens=None) -> Completion`` (text, tool calls as ``ToolCall``, tokens as
``Usage``, the model, the finish reason, and with ``schema`` the validated pydantic value in ``parsed``) and its
async twin ``acomplete``; ``astream`` (same arguments but ``schema``) yields ``StreamEvent``s: text deltas as the
server sends them, then one event carrying the assembled ``Completion`` (tool calls put together from their
deltas, usage from the final chunk). Nothing of the SDK's response objects leaves this module. ``ScriptedLLM`` is the
in-process test double, ``convsearch.testing.openai_server`` a real loopback server for integration tests.

Errors: every failure of a call is an ``LLMError`` (``LLMTimeout``, ``LLMRateLimited``, ``LLMUnavailable``,
``LLMRequestRejected``, ``LLMBadOutput``), the LLM branch of the one ``UpstreamError`` family drawn in
``convsearch.errors`` beside the web providers' (re-exported here), with a short ``reason`` for traces; callers on
the turn's hot path catch ``LLMError`` and fall back (they never let an LLM break a turn). A failure after the
server answered keeps the tokens it cost in ``LLMError.usage`` (the trace counts them).

Example::

    llm = OpenAILLM(LLMConfig(base_url="http://localhost:11434/v1", model="qwen2.5:7b"))
    llm.complete([{"role": "user", "content": "ping"}], budget_s=2.0).text      # 'pong'
    llm.complete(msgs, schema=Variants).parsed                                 # Variants(variants=[...])
    c = llm.complete(msgs, tools=[WEB_SEARCH_TOOL])                            # c.tool_calls[0].arguments
    c.usage.prompt_tokens, c.usage.completion_tokens
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, cast, runtime_checkable

from .config import Section, Switch
from .errors import (
    ConfigError,
    LLMBadOutput,
    LLMError,
    LLMRateLimited,
    LLMRequestRejected,
    LLMTimeout,
    LLMUnavailable,
)
from .infra.deadline import MIN_ATTEMPT_S as _MIN_ATTEMPT_S
from .infra.deadline import Deadline
from .secret import Secret
from .types import Completion, Message, ToolCall, Usage

if TYPE_CHECKING:  # pydantic is part of the [llm] extra; imported lazily at run time
    from pydantic import BaseModel

    from .config import Settings

log = logging.getLogger("convsearch.llm")

ModelT = TypeVar("ModelT", bound="BaseModel")


class Structured(StrEnum):
    """How structured output is asked for: a JSON schema, a JSON object, a tool (function) call, or the prompt."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    TOOLS = "tools"
    PROMPT = "prompt"


STRUCTURED_MODES = tuple(m.value for m in Structured)


@dataclass(frozen=True, slots=True)
class LLMSettings(Section):
    """The LLM path's settings (``CONVSEARCH_LLM_*``, and ``CONVSEARCH_HYDE``; the table in convsearch.config)."""

    name = "llm"
    prefix = "CONVSEARCH_LLM_"
    base_url: str = field(default="", metadata={"fallback": "OPENAI_BASE_URL"})
    api_key: Secret | None = field(default=None, metadata={"fallback": "OPENAI_API_KEY"})
    model: str = ""
    timeout_s: float = 3.0
    max_retries: int = 1
    max_concurrency: int = 8
    window: int = 6
    temperature: float = 0.0
    structured: Structured = Structured.JSON_SCHEMA
    max_zh_chars: int = 30
    max_en_words: int = 20
    blocked_words: str = ""
    cache_size: int = 1024
    uncertain_below: float = 0.0
    unsure_below: float = 0.51  # learned.auto.UNSURE_BELOW, chosen on folds (a test holds them equal); < 0: rules' auto
    variants: Switch = Switch.OFF
    hyde: Switch = field(default=Switch.OFF, metadata={"env": "CONVSEARCH_HYDE"})

    def check(self) -> None:
        self._require("timeout_s", "max_concurrency", "max_zh_chars", "max_en_words")
        self._require("max_retries", "window", "cache_size", positive=False)

    @property
    def blocked(self) -> tuple[str, ...]:
        """CONVSEARCH_LLM_BLOCKED_WORDS as a tuple (comma-separated, blanks dropped)."""
        return tuple(w.strip() for w in self.blocked_words.split(",") if w.strip())

    @property
    def configured(self) -> bool:
        """A model and an endpoint are named (a base URL, or a key for the default one)."""
        return bool(self.model and (self.base_url or self.api_key))


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


class NoLLM:
    """Stands in when no LLM is configured (``configured`` is False): the agent makes no call and answers with
    the most relevant sources, saying so; a call made anyway raises LLMUnavailable(NOT_CONFIGURED)."""

    model = "none"
    configured = False

    def complete(self, *a: Any, **kw: Any) -> Completion:
        raise LLMUnavailable(NOT_CONFIGURED)

    async def acomplete(self, *a: Any, **kw: Any) -> Completion:
        raise LLMUnavailable(NOT_CONFIGURED)

    def close(self) -> None:
        pass


def llm_configured(settings: Settings | LLMSettings) -> bool:
    """True when ``settings`` name a model and an endpoint (a base URL, or a key for the default one)."""
    return _section(settings).configured


def _section(settings: Settings | LLMSettings) -> LLMSettings:
    return settings if isinstance(settings, LLMSettings) else LLMSettings.of(settings)


def llm_config(settings: Settings | LLMSettings) -> LLMConfig:
    """The client configuration from ``Settings``, or a ConfigError saying which variables to set."""
    s = _section(settings)
    if not s.configured:
        raise ConfigError(NOT_CONFIGURED)
    return LLMConfig(model=s.model, base_url=s.base_url, api_key=s.api_key, timeout_s=s.timeout_s,
                     max_retries=s.max_retries, max_concurrency=s.max_concurrency, temperature=s.temperature,
                     structured=s.structured)


# --- the contract ---------------------------------------------------------------------------------
ChatMessage = Mapping[str, Any]  # {"role": ..., "content": ...}, the OpenAI shape
MessageLike = Message | Mapping[str, Any]


@runtime_checkable
class LLM(Protocol):
    """Chat completion with a time budget, in our own types. Raises ``LLMError``.

    ``tools`` (OpenAI function-calling schemas) lets the model answer with ``Completion.tool_calls``;
    ``schema`` (a pydantic model class) asks for structured output, validated into ``Completion.parsed``.
    Without either, a reply without text is ``LLMBadOutput``.
    """

    model: str

    def complete(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                 schema: type[BaseModel] | None = None, budget_s: float | None = None,
                 max_tokens: int | None = None) -> Completion: ...

    async def acomplete(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                        schema: type[BaseModel] | None = None, budget_s: float | None = None,
                        max_tokens: int | None = None) -> Completion: ...

    def astream(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                budget_s: float | None = None, max_tokens: int | None = None) -> AsyncIterator[StreamEvent]:
        """``acomplete`` as it is generated: text deltas, a ``tool_call`` mark when a tool call begins, then the
        whole ``Completion``. A client of the older contract (``complete`` / ``acomplete`` only) still works
        where streaming is asked for: ``stream_reply`` falls back to one ``acomplete``."""
        ...

    def close(self) -> None:
        """Give the client back (a shared one closes with its last user). Idempotent."""
        ...


async def stream_reply(llm: Any, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                       budget_s: float | None = None, max_tokens: int | None = None) -> AsyncIterator[StreamEvent]:
    """``llm.astream`` when the client has it; otherwise one ``acomplete`` (or ``complete`` in a thread) and a
    single event with its Completion: no deltas, so the caller sends the finished text in pieces itself."""
    if hasattr(llm, "astream"):
        stream = llm.astream(messages, tools=tools, budget_s=budget_s, max_tokens=max_tokens)
        try:
            async for ev in stream:
                yield ev
        finally:
            if hasattr(stream, "aclose"):
                await stream.aclose()  # also when the caller stops early: the connection and the slot go back
        return
    if hasattr(llm, "acomplete"):
        out = await llm.acomplete(messages, tools=tools, budget_s=budget_s, max_tokens=max_tokens)
    else:
        out = await asyncio.to_thread(llm.complete, messages, tools=tools, budget_s=budget_s, max_tokens=max_tokens)
    yield StreamEvent(completion=out)


@dataclass
class LLMStats:
    """Counters of one client (thread-safe): requests sent, completions, failed steps by kind, and the most
    requests this client had open at once (``max_in_flight`` ≤ ``max_concurrency``)."""

    requests: int = 0
    completions: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def used(self, usage: Usage) -> None:
        with self._lock:
            self.prompt_tokens += usage.prompt_tokens
            self.completion_tokens += usage.completion_tokens

    def opened(self) -> None:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def closed(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def count(self, name: str, kind: str | None = None) -> None:
        """``count("requests")`` adds one to a counter; ``count("failures", "LLMTimeout")`` to a failure kind."""
        with self._lock:
            if kind is None:
                setattr(self, name, getattr(self, name) + 1)
            else:
                self.failures[kind] = self.failures.get(kind, 0) + 1


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One item of ``astream``: a text delta (``text``); ``tool_call`` when a tool call's first delta arrived
    (the text before it was a preamble, not the answer); last, the whole reply (``completion``)."""

    text: str = ""
    completion: Completion | None = None
    tool_call: bool = False


def _check_reply(text: str, calls: Sequence[ToolCall], usage: Usage, *, tools: bool) -> None:
    """LLMBadOutput (with the reply's tokens) for a streamed reply that is no answer."""
    if not text.strip() and not (tools and calls):
        raise LLMBadOutput("tool call instead of text" if calls else "empty content", usage=usage)


class _Assembler:
    """Puts streamed chat.completion.chunk objects together: text, tool calls by index, usage, finish reason."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, list[str]] = {}  # index -> [id, name, arguments]
        self.usage = Usage()
        self.model = ""
        self.finish = ""

    def feed(self, chunk: Any) -> str:
        """Take one chunk; returns its text delta (maybe empty)."""
        self.model = str(getattr(chunk, "model", "") or self.model)
        if getattr(chunk, "usage", None) is not None:
            self.usage = _usage(chunk)
        delta_text = ""
        for choice in getattr(chunk, "choices", None) or ():
            if int(getattr(choice, "index", 0) or 0) != 0:
                continue
            self.finish = str(getattr(choice, "finish_reason", "") or self.finish)
            delta = getattr(choice, "delta", None)
            if delta is None:
                continue
            content = getattr(delta, "content", None)
            if content:
                delta_text += str(content)
            for tc in getattr(delta, "tool_calls", None) or ():
                i = int(getattr(tc, "index", 0) or 0)
                slot = self.calls.setdefault(i, ["", "", ""])
                slot[0] = slot[0] or str(getattr(tc, "id", "") or "")
                fn = getattr(tc, "function", None)
                if fn is not None:
                    slot[1] += str(getattr(fn, "name", "") or "")
                    slot[2] += str(getattr(fn, "arguments", "") or "")
        self.text.append(delta_text)
        return delta_text

    def completion(self) -> Completion:
        calls = tuple(ToolCall(id=v[0] or f"call_{i}", name=v[1], arguments=v[2])
                      for i, v in sorted(self.calls.items()))
        return Completion(text="".join(self.text), tool_calls=calls, usage=self.usage, model=self.model,
                          finish_reason=self.finish)


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


def _usage(resp: Any) -> Usage:
    u = getattr(resp, "usage", None)
    if u is None:
        return Usage()
    return Usage(int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0))


def _tool_calls(msg: Any) -> tuple[ToolCall, ...]:
    out = []
    for i, tc in enumerate(getattr(msg, "tool_calls", None) or ()):
        fn = getattr(tc, "function", None)
        # arguments stay the raw text the model wrote: parsing (and refusing junk) is the caller's business
        out.append(ToolCall(id=str(getattr(tc, "id", "") or f"call_{i}"), name=str(getattr(fn, "name", "") or ""),
                            arguments=str(getattr(fn, "arguments", "") or "")))
    return tuple(out)


def to_completion(resp: Any, *, schema: type[BaseModel] | None = None, tools: bool = False) -> Completion:
    """An SDK chat completion as our ``Completion``, or LLMBadOutput saying what was wrong (with the tokens the
    reply cost in ``usage``). ``tools``: tool calls are a valid answer; without tools or a schema, text is
    required. With ``schema``, the first tool call's arguments (the ``tools`` structured mode) or the text are
    validated into ``parsed``."""
    usage = _usage(resp)
    choices = getattr(resp, "choices", None) or []
    if not choices:
        raise LLMBadOutput("reply has no choices", usage=usage)
    choice = choices[0]
    msg = choice.message
    content = getattr(msg, "content", None)
    text = str(content) if content is not None else ""
    calls = _tool_calls(msg)
    parsed: Any = None
    try:
        if schema is not None and not (tools and calls):  # with tools, a tool call is an answer too
            parsed = parse_structured(calls[0].arguments if calls else text, schema)
        elif not tools and not text.strip():
            raise LLMBadOutput("tool call instead of text" if calls else "empty content")
        elif tools and not calls and not text.strip():
            raise LLMBadOutput("empty content")
    except LLMBadOutput as exc:
        exc.usage = usage
        raise
    return Completion(text=text, tool_calls=calls, usage=usage, model=str(getattr(resp, "model", "") or ""),
                      finish_reason=str(getattr(choice, "finish_reason", "") or ""), parsed=parsed)


def _schema_name(schema: type[Any]) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64]


def _wire_tool_call(tc: ToolCall | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(tc, ToolCall):
        return {"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}
    return dict(tc)


def wire_message(m: MessageLike) -> dict[str, Any]:
    """One message in the chat-completions shape. A ``Message`` gives role, content (and name); a dict keeps
    its tool fields (``tool_calls``, with ``ToolCall``s converted; ``tool_call_id``; ``name``)."""
    if isinstance(m, Message):
        out: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.name:
            out["name"] = m.name
        return out
    out = {"role": str(m["role"])}
    content = m.get("content")
    out["content"] = content if content is None or isinstance(content, list) else str(content)
    for k in ("name", "tool_call_id"):
        if m.get(k):
            out[k] = str(m[k])
    if m.get("tool_calls"):
        out["tool_calls"] = [_wire_tool_call(tc) for tc in m["tool_calls"]]
    return out


def assistant_message(completion: Completion) -> dict[str, Any]:
    """The reply as the next request's assistant message (its tool calls included), for tool loops."""
    msg: dict[str, Any] = {"role": "assistant", "content": completion.text or None}
    if completion.tool_calls:
        msg["tool_calls"] = [_wire_tool_call(tc) for tc in completion.tool_calls]
    return msg


def tool_message(call: ToolCall, content: str) -> dict[str, Any]:
    """A tool's result, answering ``call``, as the next request's tool message."""
    return {"role": "tool", "tool_call_id": call.id, "content": content}


def request_payload(config: LLMConfig, messages: Sequence[MessageLike], schema: type[BaseModel] | None = None,
                    max_tokens: int | None = None, *,
                    tools: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The chat-completions request body (without the key, which the SDK adds as a header)."""
    msgs = [wire_message(m) for m in messages]
    payload: dict[str, Any] = {"model": config.model, "messages": msgs, "temperature": config.temperature}
    if tools:
        if schema is not None and config.structured == "tools":
            raise ValueError("a schema in the 'tools' structured mode cannot be combined with tools")
        payload["tools"] = [dict(t) for t in tools]
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


# --- requests in flight: one count per endpoint and process ----------------------------------------
@dataclass(eq=False)
class _Waiter:
    event: threading.Event | None = None  # a thread waits on this
    loop: asyncio.AbstractEventLoop | None = None  # or a coroutine of this loop on ``future``
    future: asyncio.Future[bool] | None = None
    granted: bool = False
    abandoned: bool = False


def _wake(fut: asyncio.Future[bool]) -> None:
    if not fut.done():
        fut.set_result(True)


class Slots:
    """At most ``n`` requests in flight, for threads and the coroutines of any event loop alike: a release hands
    the slot to the longest waiter. ``endpoint_slots`` gives every client of one endpoint the same one, so
    CONVSEARCH_LLM_MAX_CONCURRENCY is the process's limit, however many clients, tenants or loops there are."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.in_flight = 0
        self._lock = threading.Lock()
        self._waiters: deque[_Waiter] = deque()

    def _take(self) -> bool:  # with the lock held
        if self.in_flight < self.n and not self._waiters:
            self.in_flight += 1
            return True
        return False

    def acquire(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a slot (threads); False when none came."""
        with self._lock:
            if self._take():
                return True
            w = _Waiter(event=threading.Event())
            self._waiters.append(w)
        assert w.event is not None
        w.event.wait(max(timeout, 0.0))
        with self._lock:
            w.abandoned = not w.granted
            return w.granted

    async def aacquire(self, timeout: float) -> bool:
        """The same for a coroutine; a cancelled waiter takes no slot (or gives back the one it was handed)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._take():
                return True
            w = _Waiter(loop=loop, future=loop.create_future())
            self._waiters.append(w)
        assert w.future is not None
        try:
            await asyncio.wait_for(w.future, timeout=max(timeout, 0.0))
            return True
        except TimeoutError:
            with self._lock:  # a slot handed over just as the wait ended is kept
                w.abandoned = not w.granted
                return w.granted
        except asyncio.CancelledError:
            with self._lock:
                w.abandoned = not w.granted
                granted = w.granted
            if granted:
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            while self._waiters:
                w = self._waiters.popleft()
                if w.abandoned:
                    continue
                w.granted = True
                if w.event is not None:
                    w.event.set()
                    return
                try:
                    assert w.loop is not None and w.future is not None
                    w.loop.call_soon_threadsafe(_wake, w.future)
                    return
                except RuntimeError:  # its loop is closed: nobody will take the slot there
                    w.granted, w.abandoned = False, True
            self.in_flight -= 1


_SLOTS: dict[tuple[str, str, int], Slots] = {}
_SLOTS_LOCK = threading.Lock()


def endpoint_slots(config: LLMConfig) -> Slots:
    """The one ``Slots`` of the process for ``config``'s endpoint (base URL and key) and concurrency."""
    import hashlib

    key = config.api_key.reveal() if config.api_key else ""
    ident = (config.base_url.rstrip("/"), hashlib.sha256(key.encode()).hexdigest(), config.max_concurrency)
    with _SLOTS_LOCK:
        slots = _SLOTS.get(ident)
        if slots is None:
            slots = _SLOTS[ident] = Slots(config.max_concurrency)
        return slots


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
    runs past ``budget_s``. Every attempt's timeout is what is left of that deadline. Requests in flight are
    capped (``max_concurrency``) by the endpoint's ``Slots``, one per process for sync and async calls and
    every client of that endpoint; waiting for a slot counts against the budget too. ``shared_llm`` gives
    the process's one client per endpoint.
    """

    def __init__(self, config: LLMConfig, *, slots: Slots | None = None) -> None:
        self.config = config
        self.model = config.model
        self.stats = LLMStats()
        self._openai = _import_openai()
        self.slots = slots if slots is not None else endpoint_slots(config)
        self._client = self._openai.OpenAI(**self._client_kwargs())
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

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
        import httpx  # the SDK's transport; a stream cut mid-way raises its errors unwrapped

        if isinstance(exc, httpx.TimeoutException):
            return LLMTimeout(f"timed out (budget {budget_s:.2f} s)")
        if isinstance(exc, httpx.TransportError):
            return LLMUnavailable(f"connection lost ({type(exc).__name__})")
        if isinstance(exc, (ValueError, o.APIResponseValidationError)):
            return LLMBadOutput(f"malformed reply ({type(exc).__name__})")
        return LLMError(f"client error ({type(exc).__name__}: {self._scrub(str(exc))})")

    def _backoff(self, attempt: int, err: LLMError) -> float:
        if err.retry_after is not None:
            return max(err.retry_after, 0.0)
        base: float = self.config.backoff_s * 2.0 ** (attempt - 1)
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

    def _attempts(self, budget: float, deadline: Deadline, t0: float) -> Iterator[int]:
        """Attempt numbers 1, 2, … of one call (sync, async and streamed alike) while its budget lasts; past it,
        the LLMTimeout (counted as a failure)."""
        attempt = 0
        while True:
            attempt += 1
            if deadline.expired():
                raise self._fail(LLMTimeout(f"timed out (budget {budget:.2f} s)"), t0, attempt)
            yield attempt

    def _no_slot(self, budget: float, t0: float, attempt: int) -> LLMError:
        return self._fail(LLMTimeout(f"no free LLM slot within the budget ({budget:.2f} s; "
                                     f"{self.config.max_concurrency} in flight)"), t0, attempt)

    def _fail(self, err: LLMError, t0: float, attempt: int) -> LLMError:
        self.stats.count("failures", type(err).__name__)
        self.stats.used(err.usage)
        log.debug("llm call failed: model=%s attempts=%d ms=%.1f reason=%s", self.model, attempt,
                  (time.perf_counter() - t0) * 1000, err.reason)
        return err

    # --- sync ---
    def complete(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                 schema: type[BaseModel] | None = None, budget_s: float | None = None,
                 max_tokens: int | None = None) -> Completion:
        budget = self.config.timeout_s if budget_s is None else budget_s
        deadline = Deadline(budget)
        payload = request_payload(self.config, messages, schema, max_tokens, tools=tools)
        t0 = time.perf_counter()
        attempts = self._attempts(budget, deadline, t0)
        while True:
            attempt = next(attempts)
            if not self.slots.acquire(timeout=deadline.remaining()):
                raise self._no_slot(budget, t0, attempt)
            self.stats.opened()
            try:
                resp = self._client.chat.completions.create(**payload, timeout=max(deadline.remaining(), 0.001))
                return self._done(to_completion(resp, schema=schema, tools=bool(tools)), t0, attempt)
            except Exception as exc:  # noqa: BLE001 - every client failure becomes one of ours
                err = self._map(exc, budget)
            finally:
                self.stats.closed()
                self.slots.release()
            wait = self._give_up(err, attempt, deadline)
            if wait is None:
                raise self._fail(err, t0, attempt)
            time.sleep(wait)

    def _done(self, out: Completion, t0: float, attempt: int) -> Completion:
        self.stats.count("completions")
        self.stats.used(out.usage)
        log.debug("llm call: model=%s attempts=%d ms=%.1f tokens=%d+%d", self.model, attempt,
                  (time.perf_counter() - t0) * 1000, out.usage.prompt_tokens, out.usage.completion_tokens)
        return out

    # --- async ---
    def _aclient(self) -> Any:
        """The async client of the running loop (an httpx async client belongs to one loop)."""
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            client = self._async[loop] = self._openai.AsyncOpenAI(**self._client_kwargs())
        return client

    async def acomplete(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                        schema: type[BaseModel] | None = None, budget_s: float | None = None,
                        max_tokens: int | None = None) -> Completion:
        budget = self.config.timeout_s if budget_s is None else budget_s
        deadline = Deadline(budget)
        payload = request_payload(self.config, messages, schema, max_tokens, tools=tools)
        client = self._aclient()
        t0 = time.perf_counter()
        attempts = self._attempts(budget, deadline, t0)
        while True:
            attempt = next(attempts)
            try:
                # wait_for is the hard deadline: slot wait + request, whatever the transport does
                resp = await asyncio.wait_for(self._acall(client, payload, deadline), timeout=deadline.remaining())
                return self._done(to_completion(resp, schema=schema, tools=bool(tools)), t0, attempt)
            except Exception as exc:  # noqa: BLE001 - every client failure becomes one of ours
                err = self._map(exc, budget)
            wait = self._give_up(err, attempt, deadline)
            if wait is None:
                raise self._fail(err, t0, attempt)
            await asyncio.sleep(wait)

    async def _acall(self, client: Any, payload: dict[str, Any], deadline: Deadline) -> Any:
        if not await self.slots.aacquire(deadline.remaining()):
            raise TimeoutError("no free LLM slot")
        self.stats.opened()
        try:
            return await client.chat.completions.create(**payload, timeout=max(deadline.remaining(), 0.001))
        finally:
            self.stats.closed()
            self.slots.release()

    async def astream(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                      budget_s: float | None = None, max_tokens: int | None = None) -> AsyncIterator[StreamEvent]:
        """``acomplete`` streamed (``stream=True``): a ``StreamEvent(text=...)`` per text delta as it arrives,
        then ``StreamEvent(completion=...)`` with the whole reply. The same budget (every wait for a chunk gets
        what is left of it), slot cap and error mapping as ``acomplete``; a failure before the first delta is
        retried within the budget like there, one after deltas were yielded ends the stream with the LLMError."""
        budget = self.config.timeout_s if budget_s is None else budget_s
        deadline = Deadline(budget)
        payload = request_payload(self.config, messages, None, max_tokens, tools=tools)
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
        client = self._aclient()
        t0 = time.perf_counter()
        attempts = self._attempts(budget, deadline, t0)
        while True:
            attempt = next(attempts)
            started = False
            asm = _Assembler()
            if not await self.slots.aacquire(deadline.remaining()):
                raise self._no_slot(budget, t0, attempt)
            self.stats.opened()
            stream: Any = None
            try:
                stream = await asyncio.wait_for(
                    client.chat.completions.create(**payload, timeout=max(deadline.remaining(), 0.001)),
                    timeout=deadline.remaining())
                it = stream.__aiter__()
                while True:
                    try:
                        chunk = await asyncio.wait_for(it.__anext__(), timeout=max(deadline.remaining(), 0.001))
                    except StopAsyncIteration:
                        break
                    calls = len(asm.calls)
                    delta = asm.feed(chunk)
                    if delta:
                        started = True
                        yield StreamEvent(text=delta)
                    for _ in range(len(asm.calls) - calls):
                        started = True
                        yield StreamEvent(tool_call=True)
                if not asm.finish:  # the connection closed before a finish reason: the reply was cut off
                    raise LLMUnavailable("stream ended before the reply finished", usage=asm.usage)
                out = asm.completion()
                _check_reply(out.text, out.tool_calls, out.usage, tools=bool(tools))
                self._done(out, t0, attempt)
                yield StreamEvent(completion=out)
                return
            except Exception as exc:  # noqa: BLE001 - every client failure becomes one of ours
                err = self._map(exc, budget)
                if not err.usage.total_tokens and asm.usage.total_tokens:
                    err.usage = asm.usage
            finally:
                self.stats.closed()
                self.slots.release()
                if stream is not None and hasattr(stream, "close"):
                    try:
                        await stream.close()
                    except Exception:  # noqa: BLE001 - closing a broken stream may fail too
                        pass
            wait = None if started else self._give_up(err, attempt, deadline)
            if wait is None:
                raise self._fail(err, t0, attempt)
            await asyncio.sleep(wait)

    # --- lifecycle ---
    def close(self) -> None:
        self._client.close()

    async def aclose(self) -> None:
        """Close the async client of the running loop (each loop gets its own)."""
        client = self._async.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def __enter__(self) -> OpenAILLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the test double ------------------------------------------------------------------------------
Script = Any  # str | BaseModel | Completion | ToolCall | tuple[ToolCall, ...] | LLMError | Callable[..., Script]

_CJK_RE = re.compile(r"[\u3400-\u9fff]")
_LATIN_RE = re.compile(r"[A-Za-z0-9_]+")
_PUNCT_RE = re.compile(r"[^\sA-Za-z0-9_\u3400-\u9fff]")


def estimate_tokens(text: str) -> int:
    """BPE-like token count (what an OpenAI-style tokenizer gives, roughly): a Chinese character ≈ 0.7 token,
    a Latin word ≈ 1.3, punctuation 1 per 2."""
    return int(round(0.7 * len(_CJK_RE.findall(text)) + 1.3 * len(_LATIN_RE.findall(text))
                     + 0.5 * len(_PUNCT_RE.findall(text))))


def estimate_prompt_tokens(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None) -> int:
    """``estimate_tokens`` over a request: 4 per message for the chat framing, tool calls and tool schemas."""
    n = 3
    for m in messages:
        n += 4 + estimate_tokens(str(m.get("content") or ""))
        for c in m.get("tool_calls") or ():
            n += 10 + estimate_tokens(c["function"]["arguments"])
    if tools:
        n += estimate_tokens(json.dumps(list(tools), ensure_ascii=False))
    return n


class ScriptedCall(NamedTuple):
    """One call the double received (``messages`` in the wire shape)."""

    messages: list[dict[str, Any]]
    schema: type[Any] | None
    budget_s: float | None
    tools: tuple[dict[str, Any], ...] = ()
    max_tokens: int | None = None


def _takes_tools(fn: Any) -> bool:
    """A scripted callable of two positional parameters is called with ``(messages, tools)``."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) >= 2 \
        or any(p.kind is p.VAR_POSITIONAL for p in params)


class ScriptedLLM:
    """In-process test double: answers from a list (first in, first out), then ``default``; returns
    ``Completion``s like a real client.

    An item may be a string (the text), a ``Completion`` (text, tool calls and usage scripted), a ``ToolCall``
    or a tuple of them (one reply calling those tools), a pydantic model (``parsed``), an ``LLMError`` (raised),
    or a callable taking the messages (or the messages and the ``tools`` offered, ``None`` when none) and
    returning one of these; anything else is returned as it is (a broken client: the caller must cope). A
    string (or a Completion without ``parsed``) for a ``schema`` call is validated like a real reply. ``usage``
    is what every reply without its own reports; ``usage=None`` estimates it like a BPE tokenizer
    (``estimate_prompt_tokens``). ``delay_s`` is waited per call (asynchronously in ``acomplete`` / ``astream``:
    concurrent tasks overlap as they would against a server). ``calls`` records a ``ScriptedCall`` per call.

    >>> llm = ScriptedLLM([(ToolCall("c1", "web_search", '{"query": "深圳 天气"}'),), "多云 [1]。"], usage=None)
    """

    def __init__(self, replies: Sequence[Script] = (), *, default: Script | None = None, model: str = "scripted",
                 usage: Usage | None = Usage(), delay_s: float = 0.0) -> None:
        self.replies = list(replies)
        self.default = default
        self.model = model
        self.usage = usage
        self.delay_s = delay_s
        self.calls: list[ScriptedCall] = []
        self.stats = LLMStats()
        self.chunk_chars = 4  # astream's piece size
        self._lock = threading.Lock()

    def _next(self) -> Script:
        with self._lock:
            if self.replies:
                return self.replies.pop(0)
        if self.default is None:
            raise LLMBadOutput("no scripted reply left")
        return self.default

    def _completion(self, item: Script) -> Any:
        if isinstance(item, Completion):
            return item if item.model else replace(item, model=self.model)
        if isinstance(item, ToolCall):
            item = (item,)
        if isinstance(item, (tuple, list)) and item and all(isinstance(x, ToolCall) for x in item):
            return Completion(tool_calls=tuple(item), usage=self.usage or Usage(), model=self.model,
                              finish_reason="tool_calls")
        if hasattr(item, "model_dump_json"):
            return Completion(text=item.model_dump_json(), usage=self.usage or Usage(), model=self.model,
                              finish_reason="stop", parsed=item)
        if isinstance(item, str):
            return Completion(text=item, usage=self.usage or Usage(), model=self.model, finish_reason="stop")
        return item  # garbage stays garbage

    def _respond(self, messages: Sequence[MessageLike], tools: Sequence[Mapping[str, Any]] | None,
                 schema: type[BaseModel] | None, budget_s: float | None, max_tokens: int | None) -> Completion:
        msgs = [wire_message(m) for m in messages]
        with self._lock:
            self.calls.append(ScriptedCall(msgs, schema, budget_s, tuple(dict(t) for t in tools or ()), max_tokens))
        self.stats.count("requests")
        item = self._next()
        if callable(item) and not isinstance(item, (str, ToolCall, Completion)) and not hasattr(item, "model_dump"):
            item = item(msgs, tools) if _takes_tools(item) else item(msgs)
        if isinstance(item, LLMError):
            self.stats.count("failures", type(item).__name__)
            raise item
        out = self._completion(item)
        if not isinstance(out, Completion):
            self.stats.count("completions")
            return cast(Completion, out)  # garbage: what a broken client hands back
        if self.usage is None and not out.usage.total_tokens:
            done = out.text + "".join(c.arguments for c in out.tool_calls)
            out = replace(out, usage=Usage(estimate_prompt_tokens(msgs, tools), max(1, estimate_tokens(done))))
        try:
            if schema is not None and out.parsed is None and not (tools and out.tool_calls):
                raw = out.tool_calls[0].arguments if out.tool_calls else out.text
                out = replace(out, parsed=parse_structured(raw, schema))
            elif schema is None and not out.text.strip() and not (tools and out.tool_calls):
                raise LLMBadOutput("tool call instead of text" if out.tool_calls else "empty content")
        except LLMBadOutput as exc:
            exc.usage = out.usage
            self.stats.count("failures", "LLMBadOutput")
            self.stats.used(out.usage)
            raise
        self.stats.count("completions")
        self.stats.used(out.usage)
        return out

    def complete(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                 schema: type[BaseModel] | None = None, budget_s: float | None = None,
                 max_tokens: int | None = None) -> Completion:
        if self.delay_s:
            time.sleep(self.delay_s)
        return self._respond(messages, tools, schema, budget_s, max_tokens)

    async def acomplete(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                        schema: type[BaseModel] | None = None, budget_s: float | None = None,
                        max_tokens: int | None = None) -> Completion:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return self._respond(messages, tools, schema, budget_s, max_tokens)

    async def astream(self, messages: Sequence[MessageLike], *, tools: Sequence[Mapping[str, Any]] | None = None,
                      budget_s: float | None = None, max_tokens: int | None = None) -> AsyncIterator[StreamEvent]:
        """The scripted reply streamed as a server sends it: its text in pieces of ``chunk_chars`` characters,
        a ``tool_call`` mark per tool call, then the Completion. A scripted error is raised before any piece."""
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        out = self._respond(messages, tools, None, budget_s, max_tokens)
        if isinstance(out, Completion):
            for i in range(0, len(out.text), self.chunk_chars):
                yield StreamEvent(text=out.text[i:i + self.chunk_chars])
                await asyncio.sleep(0)
            for _ in out.tool_calls:
                yield StreamEvent(tool_call=True)
        yield StreamEvent(completion=out)

    def close(self) -> None:
        pass


def open_llm(settings: Any) -> OpenAILLM:
    """A new ``OpenAILLM`` for ``Settings`` (ConfigError naming the variables when none is configured); it still
    counts its requests in flight with every other client of its endpoint. ``shared_llm`` is the one to use
    inside a process that builds several Pipelines (the server)."""
    return OpenAILLM(llm_config(settings))


_SHARED: dict[LLMConfig, list[Any]] = {}  # config → [client, handles open]
_SHARED_LOCK = threading.Lock()


class SharedLLM:
    """A handle on the process's one client for an endpoint (``shared_llm``): calls go to that client;
    ``close()`` gives the handle back, and the client closes with its last handle."""

    def __init__(self, config: LLMConfig, client: OpenAILLM) -> None:
        self.config = config
        self.client = client
        self.model = client.model
        self.closed = False

    @property
    def stats(self) -> LLMStats:
        return self.client.stats

    def complete(self, messages: Sequence[MessageLike], **kw: Any) -> Completion:
        return self.client.complete(messages, **kw)

    async def acomplete(self, messages: Sequence[MessageLike], **kw: Any) -> Completion:
        return await self.client.acomplete(messages, **kw)

    def astream(self, messages: Sequence[MessageLike], **kw: Any) -> AsyncIterator[StreamEvent]:
        return self.client.astream(messages, **kw)

    async def aclose(self) -> None:
        """Close the shared client's async client of the running loop (a loop that ends, e.g. ``Agent.stream``)."""
        await self.client.aclose()

    def close(self) -> None:
        with _SHARED_LOCK:
            if self.closed:
                return
            self.closed = True
            entry = _SHARED.get(self.config)
            last = entry is not None and entry[0] is self.client and entry[1] == 1
            if entry is not None and entry[0] is self.client:
                entry[1] -= 1
                if last:
                    del _SHARED[self.config]
        if last:
            self.client.close()

    def __repr__(self) -> str:
        return f"SharedLLM({self.client!r})"


def shared_llm(settings: Any) -> SharedLLM:
    """A handle on the process's one ``OpenAILLM`` for the endpoint ``settings`` configure (created with the
    first handle, closed with the last): the rewriter, variants, HyDE, summaries and the agent of every
    Pipeline and tenant share it, and its ``Slots``. ConfigError naming the variables when none is configured."""
    config = llm_config(settings)
    with _SHARED_LOCK:
        entry = _SHARED.get(config)
        if entry is None:
            entry = _SHARED[config] = [OpenAILLM(config), 0]
        entry[1] += 1
        return SharedLLM(config, entry[0])



__all__ = [
    "LLM", "LLMBadOutput", "LLMConfig", "LLMError", "LLMRateLimited", "LLMRequestRejected", "LLMSettings", "LLMStats",
    "LLMTimeout", "LLMUnavailable", "MessageLike", "NOT_CONFIGURED", "NoLLM", "OpenAILLM", "STRUCTURED_MODES",
    "ScriptedCall", "ScriptedLLM", "Secret", "SharedLLM", "Slots", "StreamEvent", "Structured", "assistant_message",
    "endpoint_slots", "estimate_prompt_tokens", "estimate_tokens", "llm_config", "llm_configured", "open_llm",
    "shared_llm",
    "parse_structured",
    "request_payload", "stream_reply", "strip_fences", "to_completion", "tool_message", "wire_message",
]
