"""The search agent behind the OpenAI chat-completions protocol: any chat client (the ``openai`` SDK, the ``llm``
CLI, LangChain's ``ChatOpenAI``, chat web UIs) gets cited, search-grounded answers with a base URL and a key.

    POST /v1/chat/completions     the request's ``messages`` are the conversation, the last user message the
                                  question; ``stream: true`` gives ``chat.completion.chunk`` events, then [DONE]
    GET  /v1/models               the agent profiles: ``convsearch`` (agent ``default``) and ``convsearch/NAME``
    GET  /v1/models/{model}       one of them (CONVSEARCH_CHAT_PROFILES names the others: ``NAME`` or
                                  ``NAME=BACKEND+BACKEND``, a profile that searches only those backends)

A thin shell over ``Agent.aask`` / ``Agent.astream`` (the same agents as ``POST /v1/answer``, one per tenant and
profile): keys, tenants, rate limits and metrics are the rest of the API's; the task's time budget is
CONVSEARCH_AGENT_DEADLINE_S, near which the answer is partial and flagged. What the response adds to OpenAI's
shape, top level (the SDK keeps unknown fields: ``completion.citations``, ``chunk.model_extra``):

- ``citations``: URLs, ``citations[n - 1]`` the source the answer cites as ``[n]`` (every result the agent read,
  in number order; "" for a number no result holds);
- ``search_results``: the same sources with ``n``, title, url, date, domain, snippet and ``metadata`` (a passage of
  an indexed file: ``source``, its path, ``section`` and ``page``, as ``POST /v1/search`` gives them);
- ``searches``: the searches the agent made (the model's query, what was searched, the results' numbers);
- ``convsearch``: the numbers the answer cites (``cited``), its flags (partial, degraded, uncited sentences …),
  the session id, whether the streamed text was replaced.

When streaming these ride on the chunk that carries ``finish_reason``; ``usage`` (the upstream LLM's tokens for
the whole task) is on the response, and on a last chunk with no choices when ``stream_options.include_usage``
is set. The agent may take back text it streamed (a preamble before a search; an answer the citation repair or
a failure replaced): a stream cannot, so the new text follows after a blank line and
``convsearch.replaced`` is true; the JSON response always carries the answer alone.

Request fields: ``model`` (default ``convsearch``), ``messages`` (roles system / developer / tool / function are
accepted and left out of the conversation, as everywhere; text content or text parts), ``stream``,
``stream_options``, ``max_tokens`` / ``max_completion_tokens`` (honoured: the content is cut at that many tokens,
``finish_reason: "length"``), ``n`` (1 only). Ignored: ``temperature``, ``top_p`` and the other sampling
options (the agent's upstream runs at CONVSEARCH_LLM_TEMPERATURE: searching and citing are steadier at a fixed
one), ``user``, ``tools`` / ``tool_choice`` (the agent has its own search tool and answers in text), and any
field this server does not know. Header ``X-Session-Id``: the turn is read from and appended to that stored
session (tenant → profile → session), so a client that sends only its last message still has follow-ups
resolved (once the session holds turns, its window takes the place of the earlier messages a request carries).
No upstream LLM configured: 503 saying so.
"""

# No ``from __future__ import annotations``: FastAPI reads the route signatures (local dependencies) at run time.

import json
import logging
import re
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, Path, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ..agent import Agent, Answer
from ..errors import InputError, LLMNotConfigured
from ..format import scalar_metadata
from ..llm import NOT_CONFIGURED
from ..pipeline import validate_query
from ..text import count_tokens, truncate_tokens
from . import models as m
from .answer import Answers, SearchStepOut, UsageOut, answers_for
from .auth import Tenant
from .errors import InvalidField
from .service import Service
from .settings import ServerSettings

log = logging.getLogger("convsearch.server")
DEFAULT_MODEL = "convsearch"
DEFAULT_AGENT = "default"
_SESSION_RE = re.compile(r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$")
_DROPPED_ROLES = ("system", "developer", "tool", "function")


class ModelNotFound(InvalidField):
    """A ``model`` no profile of this server answers to (404, OpenAI's ``model_not_found``)."""

    http_status = 404
    error_code = "model_not_found"


# --- request ------------------------------------------------------------------------------------------------
class _Lenient(BaseModel):
    # unknown fields are ignored, as OpenAI-compatible servers do; known ones take their JSON type only (no
    # true for 1 or "1" for 1, but 1.0 is an integer as JSON Schema says: what the schema says is accepted)
    model_config = ConfigDict(extra="ignore", strict=True)


Text = Annotated[str, Field(max_length=65536, pattern=m._NO_NUL)]  # what every history database keeps as is


class ContentPart(_Lenient):
    type: str = Field(max_length=64)
    text: Text | None = None


class ChatMessage(_Lenient):
    """One message; only user and assistant text is conversation, the other roles are accepted and left out."""

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: Text | list[ContentPart] | None = Field(None, description="Text, or a list of text parts")
    name: str | None = Field(None, max_length=128)


class StreamOptions(_Lenient):
    include_usage: bool = False


class ChatRequest(_Lenient):
    """An OpenAI chat-completions request; the last user message is the question."""

    model: str = Field(DEFAULT_MODEL, min_length=1, max_length=128,
                       description="`convsearch`, or `convsearch/NAME` for a profile of CONVSEARCH_CHAT_PROFILES")
    messages: list[ChatMessage] = Field(min_length=1, max_length=200)
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: Annotated[int, Field(ge=1), m.INTEGRAL] | None = Field(
        None, description="The content is cut at this many tokens")
    max_completion_tokens: Annotated[int, Field(ge=1), m.INTEGRAL] | None = Field(
        None, description="The same as max_tokens (the newer name)")
    n: Annotated[int, Field(ge=1, le=1), m.INTEGRAL] | None = Field(None, description="One choice only")
    temperature: float | None = Field(None, ge=0, le=2, description="Ignored: the agent's own temperature is used")
    user: str | None = Field(None, max_length=256, description="Ignored (neither stored nor sent upstream)")


# --- response -----------------------------------------------------------------------------------------------
class SearchResultOut(BaseModel):
    n: int
    title: str
    url: str
    date: str | None = None
    domain: str
    snippet: str
    metadata: dict[str, m.MetaValue] = Field(default_factory=dict, description=(
        "The result's metadata: a passage of an indexed file names source (its path), section and page."))


class ChatFlagsOut(BaseModel):
    partial: bool = False
    degraded: bool = False
    budget_exhausted: bool = False
    cites_nothing: bool = False
    no_search_needed: bool = False
    repaired: bool = False
    uncited_sentences: list[str] = Field(default_factory=list)
    unknown_citations: list[int] = Field(default_factory=list)


class ConvsearchOut(BaseModel):
    cited: list[int] = Field(default_factory=list, description="The [n] the answer cites (checked against the "
                                                               "results it was shown)")
    flags: ChatFlagsOut
    session_id: str | None = None
    replaced: bool = Field(False, description="The stream sent text the agent later replaced (see the docs)")
    ms: float = 0.0


class ChatMessageOut(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str
    refusal: None = None


class ChoiceOut(BaseModel):
    index: int = 0
    message: ChatMessageOut
    finish_reason: Literal["stop", "length"]
    logprobs: None = None


class ChatCompletionOut(BaseModel):
    """An OpenAI chat completion plus the answer's sources (``citations``, ``search_results``), its searches and
    flags."""

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    system_fingerprint: None = None
    choices: list[ChoiceOut]
    usage: UsageOut
    citations: list[str] = Field(description="citations[n - 1] is the URL the answer cites as [n]")
    search_results: list[SearchResultOut]
    searches: list[SearchStepOut]
    convsearch: ConvsearchOut


class ModelOut(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "convsearch"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


# --- the conversion (pure) ----------------------------------------------------------------------------------
def profiles(specs: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Model id → (agent name, the backends it searches, () for all): ``convsearch`` is the agent ``default``,
    ``convsearch/NAME`` the agent ``NAME`` of CONVSEARCH_CHAT_PROFILES."""
    return {DEFAULT_MODEL: (DEFAULT_AGENT, ())} | {f"{DEFAULT_MODEL}/{n}": (n, b) for n, b in specs.items()}


def _text(msg: ChatMessage, i: int) -> str:
    if msg.content is None or isinstance(msg.content, str):
        return msg.content or ""
    parts = []
    for j, p in enumerate(msg.content):
        if p.type != "text":
            if msg.role in _DROPPED_ROLES:
                continue
            raise InvalidField(f"messages.{i}.content.{j}", f"messages.{i}.content.{j}: only text parts are "
                                                             f"supported, not {p.type!r}")
        parts.append(p.text or "")
    return "\n".join(parts)


def conversation(req: ChatRequest, max_chars: int) -> tuple[str, list[dict[str, str]]]:
    """(the question, the conversation before it): the last user message, and the user / assistant text that
    precedes it (the other roles are left out, as the history window does everywhere)."""
    texts = [_text(msg, i) for i, msg in enumerate(req.messages)]
    last = next((i for i in range(len(texts) - 1, -1, -1) if req.messages[i].role == "user"), None)
    if last is None:
        raise InvalidField("messages", "messages: no user message (the last user message is the question)")
    if any(msg.role == "assistant" for msg in req.messages[last + 1:]):
        raise InvalidField("messages", "messages: an assistant message follows the last user message; "
                                       "the last user message is the question to answer")
    try:
        question = validate_query(texts[last], max_chars=max_chars)
    except InputError as exc:
        raise InvalidField(f"messages.{last}.content", f"messages.{last}.content: {exc}") from exc
    history = [{"role": msg.role, "content": texts[i]} for i, msg in enumerate(req.messages[:last])
               if msg.role in ("user", "assistant") and texts[i].strip()]
    return question, history


def cap(req: ChatRequest) -> int | None:
    """The content's token cap (max_completion_tokens, else max_tokens), or None."""
    return req.max_completion_tokens or req.max_tokens


def cut(text: str, limit: int | None) -> tuple[str, bool]:
    """``text`` cut to ``limit`` tokens (our tokenizer), and whether it was cut."""
    if limit is None or count_tokens(text) <= limit:
        return text, False
    return truncate_tokens(text, limit, ellipsis=""), True


def sources(a: Answer) -> tuple[list[str], list[SearchResultOut]]:
    """``citations`` (URL per number, "" for a gap) and ``search_results`` of an answer, in [n] order."""
    by_n = {s.n: s for s in a.sources}
    urls = [by_n[n].url if n in by_n else "" for n in range(1, max(by_n, default=0) + 1)]
    results = [SearchResultOut(n=s.n, title=s.title, url=s.url, date=s.date, domain=s.domain, snippet=s.snippet,
                               metadata=scalar_metadata(s.metadata)) for s in sorted(a.sources, key=lambda s: s.n)]
    return urls, results


def extras(a: Answer, session_id: str | None, *, replaced: bool = False) -> dict[str, Any]:
    """The fields the response adds to OpenAI's shape (the final chunk's too)."""
    urls, results = sources(a)
    f = a.flags
    flags = ChatFlagsOut(partial=f.partial, degraded=f.degraded, budget_exhausted=f.budget_exhausted,
                         cites_nothing=f.cites_nothing, no_search_needed=f.no_search_needed, repaired=f.repaired,
                         uncited_sentences=list(f.uncited_sentences), unknown_citations=list(f.unknown_citations))
    return {"citations": urls, "search_results": results,
            "searches": [SearchStepOut.model_validate(_step(s)) for s in a.searches],
            "convsearch": ConvsearchOut(cited=[c.n for c in a.citations], flags=flags, session_id=session_id,
                                        replaced=replaced, ms=a.ms)}


def _step(s: Any) -> dict[str, Any]:
    return {"step": s.step, "query": s.query, "recency": s.recency, "searched": s.searched, "provider": s.provider,
            "results": list(s.results), "cached": s.cached, "queued_ms": s.queued_ms, "ms": s.ms, "error": s.error,
            "notes": list(s.notes)}


def usage(a: Answer) -> UsageOut:
    u = a.usage
    return UsageOut(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens, total_tokens=u.total_tokens)


def completion(a: Answer, *, id: str, model: str, created: int, limit: int | None,
               session_id: str | None) -> ChatCompletionOut:
    """The JSON response for an answer."""
    text, was_cut = cut(a.text, limit)
    return ChatCompletionOut(id=id, created=created, model=model, usage=usage(a),
                             choices=[ChoiceOut(message=ChatMessageOut(content=text),
                                                finish_reason="length" if was_cut else "stop")],
                             **extras(a, session_id))


def outcome(a: Answer) -> str:
    return "degraded" if a.flags.degraded else "partial" if a.flags.partial else "ok"


class ChunkWriter:
    """The ``chat.completion.chunk`` events of one streamed answer, from the agent's events (pure: bytes out).

    ``sent`` is the content streamed so far; a ``replace`` the stream cannot honour (text already sent) sends
    the new text after a blank line and marks the answer ``replaced``; ``limit`` cuts the content at that many
    tokens (then ``finish_reason`` is ``length``).
    """

    def __init__(self, *, id: str, model: str, created: int, limit: int | None, include_usage: bool,
                 session_id: str | None) -> None:
        head = {"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                "system_fingerprint": None}
        self._head = json.dumps(head, ensure_ascii=False)[:-1]  # '{"id": …' without its closing brace
        self.limit = limit
        self.include_usage = include_usage
        self.session_id = session_id
        self.sent = ""
        self.cut = False
        self.replaced = False
        self._sep = False  # the next text starts after a blank line (earlier text could not be taken back)

    def _chunk(self, delta: dict[str, Any], finish: str | None = None, **more: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = json.dumps({"choices": [choice], **more}, ensure_ascii=False, default=_plain)
        return b"data: " + (self._head + "," + body[1:]).encode() + b"\n\n"

    def start(self) -> bytes:
        return self._chunk({"role": "assistant", "content": ""})

    def token(self, text: str) -> bytes:
        """A piece of the answer (empty bytes when nothing is left to send under the cap)."""
        if self.cut or not text:
            return b""
        if self._sep:
            text, self._sep = ("\n\n" + text.lstrip()) if self.sent else text.lstrip(), False
        if self.limit is not None:
            # counted over the whole text: a piece may end inside a word the next one finishes
            whole, was_cut = cut(self.sent + text, self.limit)
            if was_cut:
                self.cut = True
                text = whole[len(self.sent):] if whole.startswith(self.sent) else ""
            if not text:
                return b""
        self.sent += text
        return self._chunk({"content": text})

    def replace(self, text: str) -> bytes:
        """The whole answer text so far, as the agent now has it."""
        if text.startswith(self.sent):
            return self.token(text[len(self.sent):])
        self.replaced = True
        self._sep = True
        return self.token(text)

    def finish(self, a: Answer) -> bytes:
        out = self._chunk({}, "length" if self.cut else "stop",
                          **extras(a, self.session_id, replaced=self.replaced))
        if self.include_usage:
            body = json.dumps({"choices": [], "usage": usage(a).model_dump()}, ensure_ascii=False)
            out += b"data: " + (self._head + "," + body[1:]).encode() + b"\n\n"
        return out + b"data: [DONE]\n\n"

    def error(self, message: str) -> bytes:
        """An OpenAI-shaped error event (the status line went out already), then [DONE]."""
        body = {"error": {"message": message, "type": "server_error", "param": None, "code": "internal"}}
        return b"data: " + json.dumps(body).encode() + b"\n\ndata: [DONE]\n\n"


def _plain(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


# --- the routes ---------------------------------------------------------------------------------------------
def _session_id(value: str | None) -> str | None:
    if value is None:
        return None
    if not 1 <= len(value) <= 256 or not _SESSION_RE.match(value):
        raise InvalidField("X-Session-Id", "X-Session-Id: 1-256 characters, not blank, no control characters")
    return value


def _profile(service: Service, model: str) -> tuple[str, tuple[str, ...]]:
    found = profiles(service.server.chat_profile_specs).get(model)
    if found is None:
        known = ", ".join(profiles(service.server.chat_profile_specs))
        raise ModelNotFound("model", f"model {model!r} does not exist here; GET /v1/models lists them ({known})")
    return found


async def _agent(service: Service, answers: Answers, t: Tenant, name: str, backends: tuple[str, ...]) -> Agent:
    if not answers.has_llm():
        raise LLMNotConfigured(f"the chat endpoint answers with an upstream LLM: {NOT_CONFIGURED}")
    found = answers.cached(t, name, backends)
    # the first use of a tenant opens its pipeline (and maybe the index): in a worker thread under the deadline
    return found if found is not None else await service.run(answers.agent, t, name, backends)


def check_profiles(settings: Any) -> None:
    """Every backend a profile names is one of CONVSEARCH_BACKENDS (a ConfigError at start-up otherwise)."""
    from ..backends.registry import parse_names
    from ..errors import ConfigError

    known = set(parse_names(settings.backends))
    for name, backends in ServerSettings.of(settings).chat_profile_specs.items():
        unknown = [b for b in backends if b not in known]
        if unknown:
            raise ConfigError(f"CONVSEARCH_CHAT_PROFILES: profile {name!r} names {', '.join(unknown)}, not among "
                              f"CONVSEARCH_BACKENDS ({', '.join(sorted(known))})")


def _conversation(service: Service, t: Tenant, name: str, session_id: str | None) -> Any:
    if session_id is None:
        return None
    from ..history import Conversation, Scope

    return Conversation(service.store(), Scope(t.name, name, session_id))


def install(app: FastAPI, service: Service, tenant_dep: Any) -> None:
    """Add ``POST /v1/chat/completions``, ``GET /v1/models`` and ``GET /v1/models/{model}`` to ``app``."""
    check_profiles(service.settings)
    answers = answers_for(service)
    answers.state = app.state
    errs: dict[int | str, dict[str, Any]] = {s: {"model": m.ErrorBody} for s in (400, 401, 404, 413, 429, 503)}
    started = int(time.time())

    @app.post("/v1/chat/completions", response_model=ChatCompletionOut, tags=["openai"], responses={
        200: {"content": {"text/event-stream": {"schema": {
            # one server-sent event, as /v1/answer describes its own: unnamed events are SSE's "message"
            "type": "object", "required": ["data"],
            "properties": {"event": {"type": "string", "enum": ["message"]},
                           "data": {"type": "string", "description": (
                               "a chat.completion.chunk (JSON), the last one with `finish_reason` and the "
                               "answer's citations, search_results, searches and convsearch fields; then "
                               "`[DONE]`")}}}}},
              "description": "The answer as an OpenAI chat completion (or, with `stream: true`, its chunks)"},
        **errs})
    async def chat_completions(req: ChatRequest, request: Request, t: Annotated[Tenant, Depends(tenant_dep)],
                               x_session_id: Annotated[str | None, Header(max_length=256)] = None) -> Response:
        """OpenAI-compatible chat completions: the search agent answers the last user message, citing [n];
        the sources are in ``citations`` (URLs, citations[n - 1] for [n]) and ``search_results``, the
        searches in ``searches``; ``X-Session-Id`` reads and extends a stored session."""
        session_id = _session_id(x_session_id)
        name, backends = _profile(service, req.model)
        question, history = conversation(req, service.settings.max_query_chars)
        agent = await _agent(service, answers, t, name, backends)
        # the first session opens the history store (and migrates it): in a worker thread, under the deadline
        session = await service.run(_conversation, service, t, name, session_id) if session_id else None
        rid = getattr(request.state, "request_id", None) or "0"
        cid, created = f"chatcmpl-{rid}", int(time.time())
        if not req.stream:
            try:
                a = await agent.aask(question, session=session, history=history)
            except Exception:
                service.metrics.chat.labels("false", "error").inc()
                raise  # the app's error handler answers (a 5xx body names the request id, nothing more)
            _count(service, a, stream=False)
            out = completion(a, id=cid, model=req.model, created=created, limit=cap(req), session_id=session_id)
            return Response(out.model_dump_json(), media_type="application/json")
        w = ChunkWriter(id=cid, model=req.model, created=created, limit=cap(req),
                        include_usage=bool(req.stream_options and req.stream_options.include_usage),
                        session_id=session_id)

        async def chunks() -> AsyncIterator[bytes]:
            yield w.start()
            try:
                async for ev in agent.astream(question, session=session, history=history):
                    if ev.kind == "token":
                        out = w.token(ev.data)
                    elif ev.kind == "replace":
                        out = w.replace(ev.data)
                    elif ev.kind == "done":
                        _count(service, ev.data, stream=True)
                        out = w.finish(ev.data)
                    else:
                        continue  # search steps and citations arrive whole with the last chunk
                    if out:
                        yield out
            except Exception as exc:  # noqa: BLE001 - the status went out: the client gets an error event
                log.error("chat stream %s failed: %s: %s", rid, type(exc).__name__, exc)
                service.metrics.chat.labels("true", "error").inc()
                yield w.error(f"the answer failed (request {rid})")

        return StreamingResponse(chunks(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    def model_list() -> ModelList:
        return ModelList(data=[ModelOut(id=k, created=started) for k in profiles(service.server.chat_profile_specs)])

    @app.get("/v1/models", response_model=ModelList, tags=["openai"], responses={401: errs[401], 429: errs[429]})
    async def list_models(t: Annotated[Tenant, Depends(tenant_dep)]) -> ModelList:
        """The agent profiles, as OpenAI models: ``convsearch`` and ``convsearch/NAME`` per CONVSEARCH_CHAT_PROFILES."""
        return model_list()

    @app.get("/v1/models/{model:path}", response_model=ModelOut, tags=["openai"],
             responses={400: errs[400], 401: errs[401], 404: errs[404], 429: errs[429]})
    async def get_model(model: Annotated[str, Path(max_length=128)], t: Annotated[Tenant, Depends(tenant_dep)]
                        ) -> ModelOut:
        """One profile (404 ``model_not_found`` for any other name)."""
        _profile(service, model)
        return ModelOut(id=model, created=started)


def _count(service: Service, a: Answer, *, stream: bool) -> None:
    service.metrics.chat.labels(str(stream).lower(), outcome(a)).inc()
    service.metrics.chat_tokens.labels("prompt").inc(a.usage.prompt_tokens)
    service.metrics.chat_tokens.labels("completion").inc(a.usage.completion_tokens)


__all__ = ["ChatCompletionOut", "ChatRequest", "ChunkWriter", "ModelNotFound", "check_profiles", "completion",
           "conversation", "cut", "install", "profiles", "sources"]
