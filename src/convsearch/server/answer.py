"""``POST /v1/answer``: the search agent (``convsearch.agent``) behind the HTTP API, as JSON or as server-sent
events (``"stream": true``: events ``search``, ``token``, ``citations``, ``done``).

One Agent per tenant and agent name, over the service's backend and history store, with the tenant's rewriter:
its result cache and its memory are scoped tenant → agent → session. The LLM is the one the settings configure
(``CONVSEARCH_LLM_*``); when it fails, the answer is the best results as a numbered list with a one-line note
(``flags.degraded``), never a 5xx; with none, no call is made and the text says so on one line, the most
relevant sources being the answer's citations (``flags.no_llm``). Tests put a double in ``app.state.answer_llm``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route signature (a local dependency) at run time.

import json
import threading
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field

from ..agent import Agent, Answer
from ..agent.search import PipelineSearcher
from ..llm import NoLLM, llm_configured
from . import models as m
from .auth import Tenant
from .service import Service


class AnswerRequest(m._Model):
    """A question for the search agent: it decides whether and what to search and answers with numbered sources."""

    query: m.Query
    session_id: m.SessionId | None = None
    agent: m.AgentId = "default"
    messages: list[m.MessageIn] = Field(default_factory=list, max_length=200, description=(
        "The conversation so far, when it is not stored."))
    stream: bool = Field(False, description="Server-sent events: search, token, citations, done.")


class CitationOut(BaseModel):
    n: int
    title: str
    url: str
    domain: str
    date: str | None = None
    metadata: dict[str, m.MetaValue] = Field(default_factory=dict, description=(
        "The result's metadata, as POST /v1/search gives it: a passage of an indexed file names source (its "
        "path), section and page."))


class SourceOut(CitationOut):
    id: str
    snippet: str
    provider: str = ""


class SearchStepOut(BaseModel):
    step: int
    query: str = Field(description="The model's query")
    recency: str
    searched: str = Field("", description="What went to the backends (after guardrails and rewrite)")
    provider: str = ""
    results: list[int] = Field(default_factory=list, description="Task numbers of the results")
    cached: bool = False
    queued_ms: float = 0.0
    ms: float = 0.0
    error: str | None = None
    notes: list[str] = Field(default_factory=list)


class LLMCallOut(BaseModel):
    step: int
    purpose: str
    ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_prompt_tokens: int = 0
    tool_calls: int = 0
    tools_offered: bool = True
    error: str | None = None


class UsageOut(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class FlagsOut(BaseModel):
    partial: bool = False
    budget_exhausted: bool = False
    uncited_sentences: list[str] = Field(default_factory=list)
    unknown_citations: list[int] = Field(default_factory=list)
    cites_nothing: bool = False
    no_search_needed: bool = False
    degraded: bool = False
    no_llm: bool = False
    repaired: bool = False


class AnswerOut(BaseModel):
    """The agent's answer, its cited sources, every search step and LLM call, token usage, flags and trace."""

    question: str
    text: str
    citations: list[CitationOut]
    searches: list[SearchStepOut]
    llm_calls: list[LLMCallOut]
    usage: UsageOut
    flags: FlagsOut
    sources: list[SourceOut] = Field(default_factory=list)
    lang: str = "en"
    ms: float = 0.0
    timings_ms: dict[str, float] = Field(default_factory=dict,
                                         description="total, llm, search, memory, loop (the rest)")
    rounds_tokens: list[int] = Field(default_factory=list)
    saved_calls: int = 0
    trace: list[str] = Field(default_factory=list)
    session_id: str | None = None


class CompareRequest(m._Model):
    """Two queries to search side by side: what the user typed and what it was rewritten to."""

    original: m.Query
    rewritten: m.Query
    top_k: Annotated[int, Field(strict=True, ge=1, le=20), m.INTEGRAL] = 5  # 2 or 2.0, never true or "2"


class CompareOut(BaseModel):
    """What each query found and how many results contain a word the rewrite added (keyword hits)."""

    original: str
    rewritten: str
    original_ids: list[str]
    rewritten_ids: list[str]
    original_keyword_hits: int
    rewritten_keyword_hits: int
    only_original: list[str]
    only_rewritten: list[str]
    keyword_hit_gain: int


def answer_out(a: Answer, session_id: str | None = None) -> AnswerOut:
    return AnswerOut.model_validate({**a.to_dict(), "session_id": session_id})


class Answers:
    """The agents of one service, one per (tenant, agent name), created on first use."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.state: Any = None  # the app's state: tests put an LLM double in ``state.answer_llm``
        self._agents: dict[tuple[str, str, tuple[str, ...]], Agent] = {}
        self._lock = threading.Lock()
        self._llm: Any = None

    def llm(self) -> Any:
        injected = getattr(self.state, "answer_llm", None)
        if injected is not None:
            return injected
        if self._llm is None:
            s = self.service.settings
            if llm_configured(s):
                from ..llm import shared_llm

                self._llm = shared_llm(s)  # the process's client: the tenants' Pipelines hold the same
            else:
                self._llm = NoLLM()
        return self._llm

    def close(self) -> None:
        """Give the LLM client back (the server's shutdown)."""
        llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()

    def has_llm(self) -> bool:
        """Whether an upstream LLM is configured (or a test double injected): /v1/answer degrades without one,
        the chat endpoint refuses with 503."""
        return not isinstance(self.llm(), NoLLM)

    def cached(self, t: Tenant, name: str, backends: tuple[str, ...] = ()) -> Agent | None:
        """The agent of (tenant, name, backends) when it exists already (no thread hop to build it), else None."""
        agent = self._agents.get((t.name, name, backends))
        if agent is not None:
            agent.llm = self.llm()
        return agent

    def agent(self, t: Tenant, name: str, backends: tuple[str, ...] = ()) -> Agent:
        """The agent ``name`` of tenant ``t``, searching ``backends`` (a chat profile's; () = all of them)."""
        key = (t.name, name, backends)
        agent = self._agents.get(key)
        if agent is None:
            with self._lock:
                agent = self._agents.get(key)
                if agent is None:
                    svc = self.service
                    # the tenant's own Pipeline: its rewriter and caches over the service's backends
                    searcher = PipelineSearcher(svc.tenant(t).pipeline, today=svc._today(), backends=backends)
                    agent = self._agents[key] = Agent(searcher, self.llm(), svc.settings, tenant=t.name, name=name,
                                                      today=svc._today())
        agent.llm = self.llm()
        return agent


def answers_for(service: Service) -> Answers:
    """The service's agents (one Answers per service, shared by the HTTP route and the MCP tool)."""
    found = getattr(service, "_answers", None)
    if found is None:
        found = Answers(service)
        service._answers = found  # type: ignore[attr-defined]
    return found


async def answer_request(service: Service, t: Tenant, req: AnswerRequest) -> Answer:
    """Run one agent task for tenant ``t`` (the JSON form of the route and the MCP tool)."""
    agent = await service.run(answers_for(service).agent, t, req.agent)
    return await agent.aask(req.query, session=_session(service, t, req), history=m.message_dicts(req.messages))


def _session(service: Service, t: Tenant, req: AnswerRequest) -> Any:
    if req.session_id is None:
        return None
    from ..history import Conversation, Scope

    return Conversation(service.store(), Scope(t.name, req.agent, req.session_id))


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


def install(app: FastAPI, service: Service, tenant_dep: Any) -> None:
    """Add ``POST /v1/answer`` and ``POST /v1/compare`` to ``app`` (``tenant_dep``: the app's API-key dependency)."""
    answers = answers_for(service)
    answers.state = app.state

    @app.post("/v1/answer", response_model=AnswerOut, tags=["agent"], responses={
        200: {"content": {"text/event-stream": {"schema": {
            "type": "object", "required": ["event", "data"],
            "properties": {"event": {"type": "string", "enum": [
                "search", "token", "replace", "citations", "done"]},
                           "data": {"type": "string", "description": "JSON"}}}}},
              "description": "The answer (JSON), or with `stream: true` server-sent events `search` (a search "
                             "step), `token` (a piece of the answer, live from the model), `replace` (the whole "
                             "text so far, when it differs from the tokens sent: `\"\"` retracts text a step "
                             "streamed before calling the tool; the repaired or degraded answer at the end), "
                             "`citations`, `done` (the whole answer)"},
        400: {"model": m.ErrorBody}, 401: {"model": m.ErrorBody}, 404: {"model": m.ErrorBody},
        429: {"model": m.ErrorBody}, 503: {"model": m.ErrorBody}})
    async def answer(req: AnswerRequest, request: Request, t: Annotated[Tenant, Depends(tenant_dep)]) -> Response:
        """Ask the search agent: it searches (several searches of one step at once), reads the numbered
        results and answers citing them as [n]. With ``session_id`` the stored conversation is the context and
        the answer with its cited results is recorded. A failed or unconfigured LLM gives the best results as a
        numbered list (``flags.degraded``). The task's time budget is CONVSEARCH_AGENT_DEADLINE_S (near it the
        answer is ``partial``), not the search deadline."""
        if not req.stream:
            a = await answer_request(service, t, req)
            return Response(answer_out(a, req.session_id).model_dump_json(), media_type="application/json")
        agent = await service.run(answers.agent, t, req.agent)
        session, history = _session(service, t, req), m.message_dicts(req.messages)

        async def events() -> AsyncIterator[bytes]:
            async for ev in agent.astream(req.query, session=session, history=history):
                if ev.kind == "search":
                    yield _sse("search", asdict(ev.data))
                elif ev.kind == "token":
                    yield _sse("token", {"text": ev.data})
                elif ev.kind == "replace":
                    yield _sse("replace", {"text": ev.data})
                elif ev.kind == "citations":
                    yield _sse("citations", [asdict(c) for c in ev.data])
                else:
                    yield _sse("done", json.loads(answer_out(ev.data, req.session_id).model_dump_json()))

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.post("/v1/compare", response_model=CompareOut, tags=["search"], responses={
        400: {"model": m.ErrorBody}, 401: {"model": m.ErrorBody}, 404: {"model": m.ErrorBody},
        429: {"model": m.ErrorBody}, 502: {"model": m.ErrorBody}})
    async def compare(req: CompareRequest, t: Annotated[Tenant, Depends(tenant_dep)]) -> Response:
        """Search the raw and the rewritten query side by side (``compare_queries``): the results of each and
        the keyword hits the rewrite won (results containing a word it added)."""
        from ..pipeline import compare_queries

        def run() -> Any:
            return compare_queries(req.original, req.rewritten, backend=service.backend(), top_k=req.top_k)

        c = await service.run(run)
        out = CompareOut(original=c.original, rewritten=c.rewritten, original_ids=list(c.original_ids),
                         rewritten_ids=list(c.rewritten_ids), original_keyword_hits=c.original_keyword_hits,
                         rewritten_keyword_hits=c.rewritten_keyword_hits, only_original=list(c.only_original),
                         only_rewritten=list(c.only_rewritten), keyword_hit_gain=c.keyword_hit_gain)
        return Response(out.model_dump_json(), media_type="application/json")


__all__ = ["AnswerOut", "AnswerRequest", "Answers", "CompareOut", "CompareRequest", "answer_out", "answer_request",
           "answers_for", "install"]
