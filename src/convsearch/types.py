"""Immutable types that cross every stage boundary.

Stages never pass vendor objects (tantivy docs, web API JSON) past the adapter that received them;
they convert to these frozen dataclasses and derive changed copies with ``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

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
    def from_dict(cls, d: dict[str, Any]) -> "Message":
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


@dataclass(frozen=True, slots=True)
class Decision:
    """The follow-up gate's verdict: does this query need a rewrite, why, and how sure."""

    needed: bool
    reason: str
    confidence: float


@dataclass(frozen=True, slots=True)
class RewriteResult:
    """A rewrite and how it came about; ``original`` is always kept."""

    original: str
    rewritten: str
    method: str
    reason: str
    fell_back: bool = False

    @property
    def changed(self) -> bool:
        return self.rewritten != self.original


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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class Trace:
    """What happened in one turn: decisions, timings (ms), counts and fallbacks."""

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

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


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
