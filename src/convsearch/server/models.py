"""Request and response models of the HTTP API, the MCP tools and the exported tool schema (one source).

Our frozen dataclasses (``convsearch.types``) stay the library's types; these pydantic models are the wire
format, converted at the edge by the ``from_*`` helpers below.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ..format import scalar_metadata
from ..types import Citation, Decision, RewriteResult, SearchResponse, Trace, TurnFacts

_NO_CONTROL = r"^[^\x00-\x1f\x7f]+$"
# ... and not blank: the history scope refuses an id that is only whitespace (str.strip())
_ID = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
_NO_NUL = r"^[^\x00]*$"  # text every history database keeps as is
# ... and not blank (str.strip() also removes \x1c-\x1f, which regex \s does not match in every engine)
_TEXT = r"^[^\x00]*[^\s\x00\x1c-\x1f][^\x00]*$"

Recency = Literal["day", "week", "month", "year", "no_limit"]
Role = Literal["user", "assistant", "system", "tool"]
Query = Annotated[str, Field(min_length=1, max_length=4096, pattern=_TEXT, description=(
    "The user's latest message, as typed (a follow-up like '价格呢？' or 'When did it launch?' is fine: it is "
    "rewritten into a standalone query from the conversation)."))]
SessionId = Annotated[str, Field(min_length=1, max_length=256, pattern=_ID, description=(
    "Conversation id: its stored history is the context, and the turn is recorded there."))]
AgentId = Annotated[str, Field(min_length=1, max_length=128, pattern=_ID,
                               description="Which agent of the tenant owns the session.")]
Topic = Annotated[str, Field(min_length=1, max_length=256, pattern=_NO_NUL, description="Session context, e.g. the page or product title.")]
MessageId = Annotated[str, Field(min_length=1, max_length=128, pattern=_NO_CONTROL)]
# a metadata value on the wire: a JSON scalar (bool first: pydantic would otherwise read true as 1)
MetaValue = bool | int | float | str | None
BackendName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$",
                                   description="A backend name of CONVSEARCH_BACKENDS, e.g. local.")]


def _integral(v: Any) -> Any:
    """2.0 is an integer in JSON Schema: pass it on as 2; everything else unchanged (a strict int then refuses
    true and "2", which the schema does not allow)."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


# An integer field as JSON Schema means it, 2 and 2.0, never true or "2": ``Annotated[int, Field(strict=True,
# ge=…), INTEGRAL]`` (the Field first: after a validator its constraints would not reach the published schema)
INTEGRAL = BeforeValidator(_integral)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageIn(_Model):
    """One chat message (OpenAI-style role and text content)."""

    role: Role
    content: Annotated[str, Field(max_length=65536, pattern=_NO_NUL)]
    name: Annotated[str, Field(min_length=1, max_length=128, pattern=_NO_CONTROL)] | None = None
    id: MessageId | None = Field(None, description="Client message id: sending it again stores nothing new.")


class SearchRequest(_Model):
    """One turn: rewrite the query from the conversation, search, return cited results."""

    query: Query
    session_id: SessionId | None = None
    agent: AgentId = "default"
    messages: list[MessageIn] = Field(default_factory=list, max_length=200, description=(
        "The conversation so far, when it is not stored (or as the fallback when the store is down)."))
    topic: Topic | None = None
    top_k: Annotated[int, Field(strict=True, ge=1, le=50), INTEGRAL] = 5  # 2 or 2.0, never true or "2"
    mode: Literal["rewrite", "dual"] = Field("rewrite", description="dual: also search the original query.")
    variants: bool = Field(True, description="Also search heuristic query variants.")
    recency: Recency = Field("no_limit", description="Only results dated within the last day/week/month/year. "
                             "Not given: a time-sensitive question (今天, 最新, price, latest …) searched on web "
                             "backends only gets a default window.")
    lang: Literal["zh", "en"] | None = Field(None, description="Only results in this language.")
    turn_id: MessageId | None = Field(None, description="Client id of this turn: a retried turn is stored once.")
    backends: list[BackendName] | None = Field(None, max_length=16, description=(
        "Search only these of the server's backends (CONVSEARCH_BACKENDS); default: all of them."))


class RewriteRequest(_Model):
    """Rewrite a follow-up into a standalone query (nothing is searched or stored)."""

    query: Query
    session_id: SessionId | None = None
    agent: AgentId = "default"
    messages: list[MessageIn] = Field(default_factory=list, max_length=200)
    topic: Topic | None = None
    variants: bool = True


class MessagesRequest(_Model):
    """Messages to append to a stored session (typically the assistant's reply, citing results as [n])."""

    messages: list[MessageIn] = Field(min_length=1, max_length=100)
    agent: AgentId = "default"


# --- responses -------------------------------------------------------------------------------------------

class RewriteInfo(BaseModel):
    original: str
    rewritten: str
    method: str = Field(description="gate (standalone, untouched), rules, llm, passthrough …")
    reason: str = Field(description="Why: the gate's verdict and the rule or step that produced the rewrite.")
    fell_back: bool = Field(description="A step failed or was rejected and an earlier result was used.")
    changed: bool


class DecisionInfo(BaseModel):
    needed: bool
    reason: str
    confidence: float
    kind: str = Field("standalone", description="Why, as data: the gate check that decided (pronoun, ellipsis, …).")
    analysis: dict[str, Any] | None = Field(None, description="What the gate and the rewriter read of the turn: its "
                                            "language, and each fact computed for it (focus, offer, ordinal, "
                                            "fragment, mentions …).")


class Result(BaseModel):
    n: int = Field(description="The [n] the context string uses.")
    id: str
    title: str
    url: str
    domain: str
    date: str | None
    snippet: str
    stale: bool
    score: float
    undated: bool = Field(False, description="A web result that no provider field dated.")
    provider: str = Field("", description="The web provider that found it ('' for the local index).")
    tier: str = Field("", description="Its site tier from CONVSEARCH_SITE_POLICY ('' when unlisted).")
    metadata: dict[str, MetaValue] = Field(default_factory=dict, description=(
        "The result's metadata (JSON scalars). A passage of an indexed file: source (the file's path), title, "
        "section (heading path joined with ' › '), page and page_end (PDF), doc_id, chunk (and chunk_end when "
        "adjacent passages were merged), start, end, lang."))


class BackendInfo(BaseModel):
    """One backend's part of the turn."""

    backend: str
    status: Literal["ok", "failed", "late"] = Field(description="failed: it raised; late: no answer by the deadline.")
    why: str = Field("", description="Why it failed or was late (empty when ok).")
    queries: list[str] = Field(description="The queries it was sent (a paid web backend: the standalone one only).")
    ms: float
    hits: int
    notes: list[str] = Field(description="How each filter / recency / dense query was applied: natively, after "
                                         "the search, or not applicable.")


class TraceInfo(BaseModel):
    decision: DecisionInfo
    queries: list[str]
    timings_ms: dict[str, float]
    hits_before_dedup: int
    hits_after_dedup: int
    window_size: int
    fusion: str
    notes: list[str]
    backends: list[BackendInfo] = Field(default_factory=list)
    partial: bool = False


class SearchOut(BaseModel):
    query: str
    standalone_query: str
    rewrite: RewriteInfo
    variants: list[str]
    results: list[Result]
    context: str = Field(description="Numbered results ready for an LLM prompt: '[1] title (domain, date)\\n…'.")
    trace: TraceInfo
    session_id: str | None = None
    cached: bool = False
    partial: bool = Field(False, description="Some backend failed or missed the deadline; the results are the "
                                             "other backends' (see errors).")
    errors: list[str] = Field(default_factory=list, description="'backend: failed|late: why' per backend that "
                                                                "did not answer; 'rerank (name): why; heuristic "
                                                                "order used' when the rerank server failed.")


class RewriteOut(BaseModel):
    query: str
    standalone_query: str
    rewrite: RewriteInfo
    decision: DecisionInfo
    variants: list[str]
    queries: list[str]
    session_id: str | None = None
    cached: bool = False


class StoredMessageOut(BaseModel):
    id: str
    seq: int
    role: str
    content: str
    kind: str
    created_at: datetime | None = None


class MessagesOut(BaseModel):
    session_id: str
    agent: str
    messages: list[StoredMessageOut]
    summary: str | None = None


class IndexHealth(BaseModel):
    status: Literal["ok", "missing", "error"]
    documents: int | None = None
    detail: str | None = None


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    version: str
    auth: Literal["keys", "open"]
    index: IndexHealth


class ErrorDetail(BaseModel):
    code: str
    status: int
    message: str
    field: str | None = Field(None, description="The request field at fault (400).")
    request_id: str
    type: str | None = Field(None, description="OpenAI's error type (the OpenAI-compatible routes only).")
    param: str | None = Field(None, description="OpenAI's name for `field` (the OpenAI-compatible routes only).")


class ErrorBody(BaseModel):
    error: ErrorDetail


# --- conversions from our own types ----------------------------------------------------------------------

def rewrite_info(rw: RewriteResult) -> RewriteInfo:
    return RewriteInfo(original=rw.original, rewritten=rw.rewritten, method=rw.method, reason=rw.reason,
                       fell_back=rw.fell_back, changed=rw.changed)


def decision_info(d: Decision, facts: TurnFacts | None = None) -> DecisionInfo:
    analysis = None if facts is None else dict(facts.describe())
    return DecisionInfo(needed=d.needed, reason=d.reason, confidence=float(d.confidence), kind=d.kind.value,
                        analysis=analysis)


def result(c: Citation) -> Result:
    return Result(n=c.n, id=c.id, title=c.title, url=c.url, domain=c.domain, date=c.date, snippet=c.snippet,
                  stale=c.stale, score=float(c.score), undated=c.undated, provider=c.provider, tier=c.tier,
                  metadata=scalar_metadata(c.metadata))


def trace_info(t: Trace) -> TraceInfo:
    return TraceInfo(decision=decision_info(t.decision, t.facts), queries=list(t.queries), timings_ms=dict(t.timings_ms),
                     hits_before_dedup=t.hits_before_dedup, hits_after_dedup=t.hits_after_dedup,
                     window_size=t.window_size, fusion=t.fusion, notes=list(t.notes),
                     backends=[BackendInfo(backend=b.backend, status=b.status, why=b.why, queries=list(b.queries),  # type: ignore[arg-type]
                                           ms=b.ms, hits=b.hits, notes=list(b.notes)) for b in t.backends],
                     partial=t.partial)


def search_out(r: SearchResponse, *, session_id: str | None) -> SearchOut:
    return SearchOut(query=r.query, standalone_query=r.standalone_query, rewrite=rewrite_info(r.rewrite),
                     variants=list(r.variants), results=[result(c) for c in r.citations], context=r.context,
                     trace=trace_info(r.trace), session_id=session_id, partial=r.partial, errors=list(r.errors))


def message_dicts(messages: list[MessageIn]) -> list[dict[str, Any]]:
    return [m.model_dump(exclude={"id"}, exclude_none=True) for m in messages]


__all__ = ["BackendInfo", "DecisionInfo", "ErrorBody", "ErrorDetail", "Health", "IndexHealth", "MessageIn", "MessagesOut",
           "MessagesRequest", "Query", "Recency", "Result", "RewriteInfo", "RewriteOut", "RewriteRequest",
           "SearchOut", "SearchRequest", "StoredMessageOut", "TraceInfo"]
