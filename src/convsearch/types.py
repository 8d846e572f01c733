"""Immutable types that cross every stage boundary.

Stages never pass vendor objects (tantivy docs, web API JSON) past the adapter that received them;
they convert to these frozen dataclasses and derive changed copies with ``dataclasses.replace``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["user", "assistant", "system", "tool"]
MessageKind = Literal["text", "tool_call", "tool_result"]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message.

    ``partial`` marks a message still streaming; ``kind`` marks tool calls and tool results. Both are
    dropped by the history window, so tool output never reaches a rewrite.
    """

    role: str
    content: str
    kind: MessageKind = "text"
    partial: bool = False
    name: str | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Message:
        """Build from an OpenAI-style dict (``role``, ``content``, optional ``tool_calls``)."""
        role = str(d.get("role", ""))
        content = d.get("content")
        kind: MessageKind = "text"
        if d.get("tool_calls") or d.get("function_call"):
            kind = "tool_call"
        elif role == "tool" or d.get("tool_call_id"):
            kind = "tool_result"
        if isinstance(content, list):  # OpenAI content parts: keep the text ones
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        return cls(role=role, content=str(content or ""), kind=kind, partial=bool(d.get("partial", False)),
                   name=d.get("name"))


class DecisionKind(str, enum.Enum):
    """Why the gate decided as it did, as data (rewriters branch on this, never on ``Decision.reason`` text)."""

    NO_CONTEXT = "no_context"        # no history and no topic: nothing to lean on
    SOCIAL = "social"                # thanks, goodbyes: nothing to search for
    PARTIAL_NAME = "partial_name"    # a partial name of the topic ("Divac")
    OFFER = "offer"                  # a bare yes to an offer of information
    ORDINAL = "ordinal"              # a positional reference to a listed item ("the third step", 第二种)
    PRONOUN = "pronoun"              # a pronoun or demonstrative standing alone
    DEFINITE = "definite"            # an English definite noun phrase naming an earlier entity's head
    ELLIPSIS = "ellipsis"            # an ellipsis frame: "X呢", "what about X", "and X?"
    LEADING = "leading"              # a leading 那/那么/还有/另外
    NAMED = "named"                  # the query names its own entity: standalone
    SHORT = "short"                  # very short, or only relational nouns (价格, types)
    TOPIC = "topic"                  # names nothing of the session topic
    SUBJECT = "subject"              # an information question naming nothing of the conversation's subject
    OPENING = "opening"              # an aspect question going on about what the conversation opened on
    STANDALONE = "standalone"        # none of the above
    ANTECEDENT_INSIDE = "antecedent_inside"  # a pronoun whose antecedent is in the query itself


@dataclass(frozen=True, slots=True)
class Decision:
    """The follow-up gate's verdict: does this query need a rewrite, why (``kind`` as data, ``reason`` for
    people), and how sure."""

    needed: bool
    reason: str
    confidence: float
    kind: DecisionKind = DecisionKind.STANDALONE

    @property
    def is_frame(self) -> bool:
        """An ellipsis or leading-word frame: the rule rewriter completes it from the previous question's frame."""
        return self.kind in (DecisionKind.ELLIPSIS, DecisionKind.LEADING)


@dataclass(frozen=True, slots=True)
class RewriteResult:
    """A rewrite and how it came about; ``original`` is always kept."""

    original: str
    rewritten: str
    method: str
    reason: str
    fell_back: bool = False
    llm_calls: tuple[LLMCall, ...] = ()  # every LLM call the rewrite made (re-asks included), with its tokens

    @property
    def changed(self) -> bool:
        return self.rewritten != self.original

    @property
    def usage(self) -> Usage:
        return total_usage(self.llm_calls)


@dataclass(frozen=True, slots=True)
class Document:
    """A document to index."""

    id: str
    text: str
    title: str = ""
    url: str = ""
    date: str | None = None
    lang: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, init=False)
class Hit:
    """One search result. ``score`` is only comparable within one ranked list of one engine."""

    id: str
    title: str
    text: str
    score: float
    url: str = ""
    date: str | None = None
    source: str = ""
    rank: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)

    def __init__(self, id: str, title: str, text: str, score: float, url: str = "", date: str | None = None,
                 source: str = "", rank: int = 0, metadata: dict[str, Any] | None = None) -> None:
        # the generated __init__ of a frozen dataclass, but through the slots' own setters: a turn builds dozens of
        # hits and a backend hundreds, and this is 1.7 µs a hit instead of 3.0 (object.__setattr__ per field)
        _HIT_SET[0](self, id)
        _HIT_SET[1](self, title)
        _HIT_SET[2](self, text)
        _HIT_SET[3](self, score)
        _HIT_SET[4](self, url)
        _HIT_SET[5](self, date)
        _HIT_SET[6](self, source)
        _HIT_SET[7](self, rank)
        _HIT_SET[8](self, {} if metadata is None else metadata)


_HIT_SET = tuple(getattr(Hit, f).__set__ for f in Hit.__slots__)


@dataclass(frozen=True, slots=True)
class Citation:
    """A numbered, formatted result ready to show or to hand to an LLM."""

    n: int
    id: str
    title: str
    domain: str
    date: str | None
    snippet: str
    url: str
    stale: bool
    score: float
    undated: bool = False   # a web result no provider field dated
    provider: str = ""      # the web provider that found it ("" for local backends)
    tier: str = ""          # its site tier from CONVSEARCH_SITE_POLICY ("" when unlisted)
    # the hit's metadata (JSON scalars only): for a passage of an indexed file its provenance, ``source`` (the
    # file's path), ``title``, ``section``, ``page`` / ``page_end``, ``doc_id``, ``chunk`` (/ ``chunk_end``) …
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BackendRun:
    """How one backend's part of a turn went: ``status`` ``ok``, ``failed`` (``why``: the error) or ``late`` (no
    answer by the deadline); the queries it was sent, its time (ms), its hit count, and how each requested option
    (filters, recency, dense query) was applied: natively, after the search, or not applicable."""

    backend: str
    status: str
    queries: tuple[str, ...] = ()
    why: str = ""
    ms: float = 0.0
    notes: tuple[str, ...] = ()
    hits: int = 0


@runtime_checkable
class TurnFacts(Protocol):
    """What the resolver found out about a turn (``resolve.analysis.Analysis``), for the trace and ``--debug``."""

    def describe(self, *, candidates: bool = False) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Trace:
    """What happened in one turn: decisions, timings (ms), counts and fallbacks; per backend, what it was sent
    and how it went (``backends``); ``partial`` when some backend failed or was late and the others answered."""

    decision: Decision
    rewrite: RewriteResult
    variants: tuple[str, ...]
    queries: tuple[str, ...]
    timings_ms: dict[str, float]
    hits_before_dedup: int
    hits_after_dedup: int
    window_size: int
    fusion: str
    notes: tuple[str, ...] = ()
    llm_calls: tuple[LLMCall, ...] = ()  # every LLM call of the turn (rewrite, variants, HyDE), with its tokens
    backends: tuple[BackendRun, ...] = ()
    partial: bool = False
    # steps that failed open, each "step (name): why; what was used instead" (a remote reranker's failure)
    errors: tuple[str, ...] = ()
    # the turn's analysis (``resolve.analysis.Analysis``): what the gate and the rewriter read, described on demand
    facts: TurnFacts | None = field(default=None, compare=False, repr=False)

    @property
    def llm_usage(self) -> Usage:
        """Prompt and completion tokens of the whole turn."""
        return total_usage(self.llm_calls)

    @property
    def analysis(self) -> dict[str, Any] | None:
        """What the gate and the rewriter read of this turn (``resolve.analysis.Analysis.describe``), as plain data;
        None when the turn was not analysed (a trace built by hand)."""
        return None if self.facts is None else dict(self.facts.describe())


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """The result of ``search_with_context``."""

    query: str
    standalone_query: str
    rewrite: RewriteResult
    variants: tuple[str, ...]
    hits: tuple[Hit, ...]
    citations: tuple[Citation, ...]
    context: str
    trace: Trace
    memory: Any = None  # convsearch.history.Memory when the turn ran in a stored session

    @property
    def partial(self) -> bool:
        """Some backend failed or missed the deadline; the results are the other backends' (see ``errors``)."""
        return self.trace.partial

    @property
    def errors(self) -> tuple[str, ...]:
        """``"backend: failed: why"`` / ``"backend: late: why"`` per backend that did not answer, then the steps
        that failed open (``"rerank (cohere): HTTP 500; heuristic order used"``)."""
        return tuple(f"{b.backend}: {b.status}: {b.why}" for b in self.trace.backends
                     if b.status != "ok") + self.trace.errors

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-serialisable); the decision's analysis as ``Trace.analysis`` gives it."""
        from dataclasses import asdict, replace

        out = asdict(replace(self, trace=replace(self.trace, facts=None)))
        del out["trace"]["facts"]
        out["trace"]["decision"]["analysis"] = self.trace.analysis
        return out


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call a model asked for; ``arguments`` is the raw JSON text (parse it, it may be junk)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one LLM call (0 when the server did not say)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)


@dataclass(frozen=True, slots=True)
class LLMCall:
    """One LLM call of a turn, for the trace: the step that made it, the model, its tokens, its time, and
    ``error`` (the failure's reason; empty when it answered)."""

    step: str  # rewrite | variants | hyde | summary | agent
    model: str
    usage: Usage = Usage()
    ms: float = 0.0
    error: str = ""


def total_usage(calls: tuple[LLMCall, ...]) -> Usage:
    """The tokens of ``calls`` summed."""
    return sum((c.usage for c in calls), Usage())


@dataclass(frozen=True, slots=True)
class Completion:
    """What ``LLM.complete`` returns: text (or the parsed structured value in ``parsed``), tool calls, usage."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""
    finish_reason: str = ""
    parsed: Any = None


@dataclass(frozen=True, slots=True)
class QueryComparison:
    """``compare_queries``: what each query found and how their keyword hits differ."""

    original: str
    rewritten: str
    original_ids: tuple[str, ...]
    rewritten_ids: tuple[str, ...]
    original_keyword_hits: int
    rewritten_keyword_hits: int
    only_original: tuple[str, ...]
    only_rewritten: tuple[str, ...]

    @property
    def keyword_hit_gain(self) -> int:
        return self.rewritten_keyword_hits - self.original_keyword_hits
