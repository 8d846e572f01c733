"""What an agent task returns and emits: frozen types, no behaviour.

``Answer`` is the whole story of one task: the text, the sources it cites, every search step, every LLM call,
token usage, flags and a trace of notes. ``AgentEvent`` is one item of ``Agent.stream()``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..types import Usage

EventKind = Literal["search", "token", "replace", "citations", "done"]


@dataclass(frozen=True, slots=True)
class Source:
    """A result numbered for the whole task: the same URL (or document id) keeps its number ``n``."""

    n: int
    id: str
    title: str
    url: str
    domain: str
    date: str | None
    snippet: str
    provider: str = ""
    # the result's metadata (Citation.metadata): a passage of an indexed file names source, section, page …
    metadata: dict[str, Any] = field(default_factory=dict)

    def cite(self) -> AnswerCitation:
        return AnswerCitation(self.n, self.title, self.url, self.domain, self.date, dict(self.metadata))


@dataclass(frozen=True, slots=True)
class AnswerCitation:
    """A source the answer cites as ``[n]``."""

    n: int
    title: str
    url: str
    domain: str
    date: str | None
    metadata: dict[str, Any] = field(default_factory=dict)  # source, section, page … (see Source)


@dataclass(frozen=True, slots=True)
class SearchStep:
    """One search the agent ran (or refused): what was asked, what was searched, what came back.

    ``query`` is the model's query, ``searched`` what went to the backends (after the guardrails and, when the
    query leaned on the conversation, the rewriter); ``results`` the task numbers of its results; ``cached``
    whether the agent's scoped cache answered; ``queued_ms`` time waiting for a search slot; ``ms`` the search
    itself. A refused call (``error`` set) searched nothing and does not count against the budget.
    """

    step: int
    query: str
    recency: str
    searched: str = ""
    provider: str = ""
    results: tuple[int, ...] = ()
    cached: bool = False
    queued_ms: float = 0.0
    ms: float = 0.0
    error: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LLMCallRecord:
    """One LLM call: which step, how long, tokens (the server's count, and our estimate of the prompt), what
    came back (tool calls, text) or why it failed."""

    step: int
    purpose: str  # step | final | repair
    ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_prompt_tokens: int = 0
    tool_calls: int = 0
    tools_offered: bool = True
    error: str | None = None


@dataclass(frozen=True, slots=True)
class AnswerFlags:
    """What a reader of the answer should know about it.

    ``partial``: the task deadline cut research short; ``budget_exhausted``: the model wanted more searches than
    allowed; ``uncited_sentences``: factual-looking sentences without [n]; ``unknown_citations``: [n] that no
    result shown carries; ``cites_nothing``: results existed and the answer cites none; ``no_search_needed``:
    the question was answered without searching; ``degraded``: the LLM failed and the answer is a list of the
    best results; ``no_llm``: no LLM is configured, no call was made, the text says so and the citations are the most
    relevant sources (``degraded`` too);
    ``repaired``: strict mode sent the answer back once.
    """

    partial: bool = False
    budget_exhausted: bool = False
    uncited_sentences: tuple[str, ...] = ()
    unknown_citations: tuple[int, ...] = ()
    cites_nothing: bool = False
    no_search_needed: bool = False
    degraded: bool = False
    no_llm: bool = False
    repaired: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    """The result of ``Agent.ask``."""

    question: str
    text: str
    citations: tuple[AnswerCitation, ...]
    searches: tuple[SearchStep, ...]
    llm_calls: tuple[LLMCallRecord, ...]
    usage: Usage
    flags: AnswerFlags
    sources: tuple[Source, ...] = ()  # every result shown to the model, by task number
    lang: str = "en"
    ms: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)  # total, llm, search (steps' wall), memory, loop
    rounds_tokens: tuple[int, ...] = ()  # estimated prompt tokens of each LLM call, in order
    saved_calls: int = 0  # search calls the no-search pre-check or the task memory made unnecessary
    trace: tuple[str, ...] = ()

    @property
    def search_count(self) -> int:
        return sum(1 for s in self.searches if s.error is None)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["usage"] = {"prompt_tokens": self.usage.prompt_tokens, "completion_tokens": self.usage.completion_tokens,
                      "total_tokens": self.usage.total_tokens}
        return d


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One item of ``Agent.stream()``: ``search`` (a SearchStep), ``token`` (a piece of the answer text),
    ``replace`` (the whole answer text so far, when it differs from the tokens already sent: "" when a step's
    streamed text turned out to precede a tool call, the repaired or degraded text at the end), ``citations``
    (the cited sources), ``done`` (the Answer)."""

    kind: EventKind
    data: Any = field(default=None)


__all__ = ["AgentEvent", "Answer", "AnswerCitation", "AnswerFlags", "LLMCallRecord", "SearchStep", "Source"]
