"""The Pipeline: one object that owns a turn's parts and their lifetimes; ``search_with_context`` over it.

A ``Pipeline`` holds the rewriter, the variant maker, the HyDE writer, the backends and their caches, built once
from ``Settings`` (``Pipeline.from_settings``) and released by ``close()`` (or ``with``). Per turn:

- ``plan(query, messages, topic=…)``: window → gate (once) → rewrite → variants; no I/O (a stored ``session``
  is read for its history). Returns a ``TurnPlan``.
- ``search(…)`` / ``asearch(…)``: plan, then HyDE (when on, for backends with a dense side), then every backend
  with the queries routed to it (``backends.fanout.route_queries``: a paid backend gets the standalone query only
  unless ``CONVSEARCH_WEB_VARIANTS=on``), each call through ``backends.compose`` (filters and recency natively
  or after the search), several backends concurrently (``backends.fanout``); then fuse (RRF) → dedup → rerank
  with the original query → cited context. The trace says per backend what it was sent, how it went (ok /
  failed / late, and why) and how each option was applied; ``partial`` when some backend did not answer.

>>> from convsearch.backends.base import InMemoryBackend
>>> from convsearch.types import Document
>>> with Pipeline(InMemoryBackend([Document("p", "AnySearch 的价格：专业版每月 99 元")])) as p:
...     r = p.search("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}])
>>> r.standalone_query, r.hits[0].id, r.partial
('AnySearch 的价格', 'p', False)
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from . import events
from .backends.base import Filters, Recency, SearchBackend, takes_many
from .backends.compose import search_applied, search_many_applied
from .backends.fanout import OK, FanOut, Route, afan_out, route_queries, run_sync
from .config import SearchMode, Settings
from .dedup import dedup
from .errors import InputError, RerankError
from .format import citations, context
from .fuse import fused_order
from .group import group_passages, neighbour_ids, widen
from .infra.deadline import Deadline
from .infra.turn import turn
from .rerank import Reranker, open_reranker, rerank
from .resolve.analysis import Analysis, analyse
from .resolve.gate import decide
from .resolve.guard import content_words
from .rewrite.base import Rewriter
from .text import words
from .types import (
    BackendRun,
    Decision,
    Hit,
    LLMCall,
    Message,
    QueryComparison,
    RewriteResult,
    SearchResponse,
    Trace,
    TurnFacts,
)
from .variants import make_variants, mixed_on
from .window import history_window, to_messages

if TYPE_CHECKING:
    from .history.session import Conversation

VariantMaker = Callable[..., list[str]]


def validate_query(query: str, *, max_chars: int) -> str:
    """The query stripped, or an InputError saying what is wrong with it."""
    if not isinstance(query, str):
        raise InputError("query must be a string")
    q = query.strip()
    if not q:
        raise InputError("query is empty")
    if len(q) > max_chars:
        raise InputError(f"query is {len(q):,} characters long; the limit is {max_chars:,}")
    return q


class _Clock:
    def __init__(self) -> None:
        self.t = time.perf_counter()
        self.timings: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round((now - self.t) * 1000, 3)
        self.t = now


@lru_cache(maxsize=256)
def reads_analysis(cls: type) -> bool:
    """Does a rewriter class's ``rewrite`` take the turn's analysis (``analysis=``, or ``**kwargs``)? Read once per
    class: a rewriter written before the analysis existed is called as it was."""
    try:
        params = inspect.signature(getattr(cls, "rewrite")).parameters  # noqa: B009 (a class, not a Rewriter)
    except (AttributeError, TypeError, ValueError):
        return False
    return "analysis" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class Planned(NamedTuple):
    """What ``plan_turn`` decided: the turn's analysis, the gate's decision, the rewrite, the variants and the
    queries to run (the standalone query first)."""

    analysis: Analysis
    decision: Decision
    rewrite: RewriteResult
    variants: list[str]
    queries: list[str]


def plan_queries(query: str, history: Sequence[Message], *, rewriter: Rewriter, settings: Settings,
                 topic: str | None = None, clock: _Clock | None = None,
                 variant_maker: VariantMaker | None = None,
                 calls: list[LLMCall] | None = None) -> tuple[Decision, RewriteResult, list[str], list[str]]:
    """``plan_turn`` without the analysis: (decision, rewrite, variants, queries to run)."""
    p = plan_turn(query, history, rewriter=rewriter, settings=settings, topic=topic, clock=clock,
                  variant_maker=variant_maker, calls=calls)
    return p.decision, p.rewrite, p.variants, p.queries


def plan_turn(query: str, history: Sequence[Message], *, rewriter: Rewriter, settings: Settings,
              topic: str | None = None, clock: _Clock | None = None, variant_maker: VariantMaker | None = None,
              calls: list[LLMCall] | None = None) -> Planned:
    """Analysis, gate, rewrite and variants: the rule path of a turn, without I/O. The turn is analysed once
    (``resolve.analysis.analyse``: its language detected once) and the analysis handed to the gate and to a
    rewriter that takes it (``reads_analysis``); the rewriter gets the gate's Decision, and is also asked about
    standalone verdicts less sure than its ``uncertain_below`` (the LLM path; 0 for rules). ``variant_maker``
    (``(query, *, max_variants, calls=None)``) replaces the heuristic table; ``calls`` collects the LLM calls of the
    rewrite and the variants."""
    analysis = analyse(history, query, topic)
    decision = decide(analysis)
    if clock:
        clock.lap("gate")
    if decision.needed or decision.confidence < rewriter.uncertain_below:
        if reads_analysis(type(rewriter)):
            rw = rewriter.rewrite(history, query, topic=topic, decision=decision, analysis=analysis)  # type: ignore[call-arg]
        else:
            rw = rewriter.rewrite(history, query, topic=topic, decision=decision)
    else:
        rw = RewriteResult(query, query, "gate", f"standalone: {decision.reason}", False)
    if clock:
        clock.lap("rewrite")
    if calls is not None:
        calls.extend(rw.llm_calls)
    if variant_maker is None:
        variants = make_variants(rw.rewritten, max_variants=settings.max_variants, mixed=mixed_on(settings))
    elif calls is None:
        variants = variant_maker(rw.rewritten, max_variants=settings.max_variants)
    else:
        variants = variant_maker(rw.rewritten, max_variants=settings.max_variants, calls=calls)
    queries = [rw.rewritten, *variants]
    if settings.mode == "dual" and rw.rewritten != query:
        queries.insert(1, query)
    if settings.history_variant == "on" and decision.needed and (hv := history_variant(query, history)):
        queries.append(hv)
    if clock:
        clock.lap("variants")
    return Planned(analysis, decision, rw, variants, list(dict.fromkeys(queries)))


EMBED_FAILED = "embed: "  # a backend's note that the query's embedding failed (the turn was answered from BM25)
HISTORY_VARIANT_CHARS = 300  # of the previous question: a pasted page is not a question


def history_variant(query: str, history: Sequence[Message]) -> str | None:
    """The previous user question followed by ``query`` as typed: one more query for a follow-up, so that a rewrite
    that picked the wrong antecedent, or none, still searches the conversation's topic (fused by RRF, then
    reranked with the original query as every list is). None without an earlier user question.

    >>> history_variant("And for Python 3.12?", [Message("user", "How do I install pip?"), Message("assistant", "…")])
    'How do I install pip? And for Python 3.12?'
    """
    prev = next((m.content for m in reversed(history) if m.role == "user" and m.content.strip()), None)
    if prev is None:
        return None
    return f"{' '.join(prev.split())[:HISTORY_VARIANT_CHARS]} {query.strip()}"


def rank_turn(query: str, rw: RewriteResult, lists: Sequence[Sequence[Hit]], *, settings: Settings, top_k: int,
              clock: _Clock | None = None, candidates: int = 0) -> tuple[list[Hit], Any]:
    """Fuse, dedup, rerank with the original query (the heuristic): the turn's hits in that order and the dedup
    stats. Only the ``top_k`` head is built, unless passages will be grouped or a remote reranker will reorder
    ``candidates`` of them (then every deduplicated hit, in order)."""
    # Only the head of the fused list can reach the top_k after reranking; dedup and rerank look at
    # max(4·top_k, 20) candidates rather than every hit of every query (or what a remote reranker takes).
    # (the hits as their engines returned them, in fused order, and the fused scores: rerank gives each survivor
    # its final score and rank, so no hit is built for the fused list in between)
    fused, scores = fused_order(lists, settings.fusion, limit=max(4 * top_k, 20, candidates))
    if clock:
        clock.lap("fuse")
    deduped, stats = dedup(fused, max_bits=settings.near_dup_bits, min_jaccard=settings.near_dup_jaccard,
                           renumber=False)  # rerank numbers them
    if clock:
        clock.lap("dedup")
    # passages of indexed files: every candidate is reranked, then grouped by document (group.py), cut to top_k
    grouped = any("doc_id" in h.metadata for h in deduped)
    return rerank(deduped, query, rw.rewritten, limit=None if grouped or candidates else top_k, fused=scores), stats


def cite_turn(ranked: list[Hit], *, settings: Settings, top_k: int, today: date | None = None,
              clock: _Clock | None = None, time_sensitive: bool | None = None,
              fetch: Callable[[list[str]], dict[str, Hit]] | None = None) -> tuple[list[Hit], list[Any], str]:
    """Group passages by document and cut to ``top_k``, widen the first ``settings.widen_top`` passages with their
    neighbours of the same section (``fetch``: stored hits by id, when the backends can), then cite and format:
    (hits, citations, context)."""
    if any("doc_id" in h.metadata for h in ranked):
        ranked = group_passages(ranked, per_doc=settings.per_doc, limit=top_k)
        if fetch is not None and settings.widen_top > 0:
            ranked = widen_top(ranked, fetch, settings.widen_top)
    elif len(ranked) > top_k:  # a remote reranker's candidates
        ranked = ranked[:top_k]
    if clock:
        clock.lap("rerank")  # the heuristic, a remote reranker's call and the grouping
    cites = citations(ranked, snippet_tokens=settings.snippet_tokens, stale_days=settings.stale_days, today=today,
                      time_sensitive=time_sensitive, passage_tokens=settings.passage_tokens)
    ctx = context(cites)
    if clock:
        clock.lap("format")
    return ranked, cites, ctx


def widen_top(hits: list[Hit], fetch: Callable[[list[str]], dict[str, Hit]], n: int) -> list[Hit]:
    """The first ``n`` passages of ``hits`` each merged with the passages just before and after it in its section
    (small-to-big: the best match is cited with what surrounds it, where an answer often continues); one ``fetch``
    for all their ids."""
    want = {h.id: neighbour_ids(h) for h in hits[:n]}
    ids = [i for ids in want.values() for i in ids]
    if not ids:
        return hits
    found = fetch(ids)
    return [widen(h, [found[i] for i in want[h.id] if i in found]) if h.id in want else h for h in hits]


def finish_turn(query: str, rw: RewriteResult, lists: Sequence[Sequence[Hit]], *, settings: Settings,
                top_k: int, today: date | None = None, clock: _Clock | None = None,
                time_sensitive: bool | None = None) -> tuple[list[Hit], Any, list[Any], str]:
    """Fuse, dedup, rerank with the original query, format: the pure tail of a turn (``rank_turn`` then
    ``cite_turn``; a Pipeline with a remote reranker calls it between the two)."""
    ranked, stats = rank_turn(query, rw, lists, settings=settings, top_k=top_k, clock=clock)
    ranked, cites, ctx = cite_turn(ranked, settings=settings, top_k=top_k, today=today, clock=clock,
                                   time_sensitive=time_sensitive)
    return ranked, stats, cites, ctx


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """What a turn will search for, decided without I/O: the checked query, the history the rewriter saw, the
    gate's decision, the rewrite, the variants and the queries in search order (the standalone query first)."""

    query: str
    history: tuple[Message, ...]
    decision: Decision
    rewrite: RewriteResult
    variants: tuple[str, ...]
    queries: tuple[str, ...]
    timings_ms: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what reading a stored session's history said (fallbacks)
    memory: Any = None  # convsearch.history.Memory when planned in a stored session
    llm_calls: tuple[LLMCall, ...] = ()  # the rewrite's and the variants' LLM calls, with their tokens
    facts: TurnFacts | None = field(default=None, compare=False, repr=False)  # the turn's analysis

    @property
    def standalone_query(self) -> str:
        return self.rewrite.rewritten


_REQUEST_FIELDS = ("messages", "topic", "top_k", "filters", "recency", "backends", "session", "today", "mode",
                   "max_variants", "deadline")


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """One turn's question and options, checked once: what ``Pipeline.search`` / ``asearch`` / ``plan`` take.

    ``messages``: the conversation so far (Messages or OpenAI-style dicts; kept as Messages); ``topic``: a known
    topic of the conversation; ``top_k``: results wanted (default ``Settings.top_k``); ``filters`` (a Filters or
    a dict of its fields) and ``recency`` (a Recency or its name); ``backends``: names of the pipeline's backends
    to search (default every one); ``session``: a stored conversation (its history replaces ``messages`` and the
    turn is recorded there); ``today``: the date recency and staleness count from; ``mode`` / ``max_variants``:
    this turn's override of the settings; ``deadline``: the turn's (default ``CONVSEARCH_DEADLINE_S`` from the
    start of the turn). A bad value is one InputError line naming the option.

    >>> TurnRequest("价格呢？", top_k=3, recency="week").recency
    <Recency.WEEK: 'week'>
    >>> TurnRequest("价格呢？", top_k=0)
    Traceback (most recent call last):
    convsearch.errors.InputError: top_k must be a positive integer, not 0
    """

    query: str
    messages: tuple[Message, ...] = ()
    topic: str | None = None
    top_k: int | None = None
    filters: Filters | None = None
    recency: Recency | None = None
    backends: tuple[str, ...] | None = None
    session: Conversation | None = None
    today: date | None = None
    mode: SearchMode | None = None
    max_variants: int | None = None
    deadline: Deadline | None = None

    def __init__(self, query: str, messages: Iterable[Message | dict[str, Any]] = (), *, topic: str | None = None,
                 top_k: int | None = None, filters: Filters | dict[str, Any] | None = None,
                 recency: Recency | str | None = None, backends: Sequence[str] | str | None = None,
                 session: Conversation | None = None, today: date | None = None, mode: SearchMode | str | None = None,
                 max_variants: int | None = None, deadline: Deadline | None = None) -> None:
        if not isinstance(query, str):
            raise InputError("query must be a string")
        if topic is not None and not isinstance(topic, str):
            raise InputError(f"topic must be a string, not {type(topic).__name__}")
        _count("top_k", top_k, least=1)
        _count("max_variants", max_variants, least=0)
        if today is not None and not isinstance(today, date):
            raise InputError(f"today must be a date, not {type(today).__name__}")
        if deadline is not None and not isinstance(deadline, Deadline):
            raise InputError(f"deadline must be a Deadline, not {type(deadline).__name__}")
        if isinstance(backends, str):
            backends = (backends,)
        elif backends is not None:
            backends = tuple(backends)
            if not all(isinstance(b, str) for b in backends):
                raise InputError("backends must be backend names (strings)")
        if mode is not None and not isinstance(mode, SearchMode):
            try:
                mode = SearchMode(str(mode).strip().lower())
            except ValueError:
                raise InputError(f"mode must be one of {', '.join(SearchMode)}, not {mode!r}") from None
        sets = object.__setattr__  # a frozen dataclass with a converting constructor
        sets(self, "query", query)
        sets(self, "messages", tuple(to_messages(messages)))
        sets(self, "topic", topic)
        sets(self, "top_k", top_k)
        sets(self, "filters", Filters.of(filters))
        sets(self, "recency", Recency.parse(recency))
        sets(self, "backends", backends or None)
        sets(self, "session", session)
        sets(self, "today", today)
        sets(self, "mode", mode)
        sets(self, "max_variants", max_variants)
        sets(self, "deadline", deadline)

    @classmethod
    def of(cls, query: "str | TurnRequest", messages: Iterable[Message | dict[str, Any]] = (),
           options: dict[str, Any] | None = None) -> "TurnRequest":
        """``query`` when it is a TurnRequest already (then nothing else may be given), else one built from the
        query, ``messages`` and the keyword ``options``; an unknown option is an InputError naming it."""
        if isinstance(query, TurnRequest):
            if messages or options:
                raise InputError("pass a TurnRequest alone, or a query with options, not both")
            return query
        if options:
            unknown = sorted(set(options) - set(_REQUEST_FIELDS))
            if unknown:
                raise InputError(f"unknown search option(s) {', '.join(map(repr, unknown))}; options are: "
                                 f"{', '.join(_REQUEST_FIELDS)}")
            return cls(query, messages, **options)
        return cls(query, messages)


def _count(name: str, value: object, *, least: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
        raise InputError(f"{name} must be {'a positive' if least == 1 else 'a non-negative'} integer, not {value!r}")


@dataclass(frozen=True, slots=True)
class _Wait:
    """A step of a turn that waits (HyDE's LLM call, the backends, a rerank server): how to run it blocking and how
    to await it. The turn's body (``Pipeline._turn``) yields these; ``_run`` and ``_arun`` drive it."""

    blocking: Callable[[], Any]
    awaitable: Callable[[], Awaitable[Any]]


Turn = Generator[_Wait, Any, SearchResponse]


def _run(body: Turn) -> SearchResponse:
    """Drive a turn's body with blocking calls (this thread)."""
    sent: Any = None
    failed: BaseException | None = None
    while True:
        try:
            step = body.send(sent) if failed is None else body.throw(failed)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        failed = None
        try:
            sent = step.blocking()
        except BaseException as exc:  # noqa: BLE001 - raised in the body, where the step was asked for
            failed = exc


async def _arun(body: Turn) -> SearchResponse:
    """Drive a turn's body on the running loop (its waits awaited)."""
    sent: Any = None
    failed: BaseException | None = None
    while True:
        try:
            step = body.send(sent) if failed is None else body.throw(failed)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        failed = None
        try:
            sent = await step.awaitable()
        except BaseException as exc:  # noqa: BLE001 - a cancellation too: the body's `with` blocks unwind in order
            failed = exc


def _is_backend(x: object) -> bool:
    # not isinstance(x, SearchBackend): a runtime Protocol check costs ~20 µs, twice per one-call turn
    return hasattr(x, "search") and hasattr(x, "capabilities")


def _unwrap(backend: SearchBackend | Sequence[SearchBackend]) -> tuple[SearchBackend, ...]:
    if isinstance(backend, FanOut):
        return backend.backends
    if _is_backend(backend):
        return (backend,)  # type: ignore[return-value]
    return tuple(b for x in backend for b in _unwrap(x))  # type: ignore[union-attr]


class Pipeline:
    """One conversational search pipeline: rewriter, variant maker, HyDE, backends and caches, and their lifetimes.

    ``backend`` is a SearchBackend (a FanOut is searched per member), a sequence of them, or a zero-argument
    callable opening one on first use (the server's shared index). What the Pipeline built itself
    (``from_settings``) it closes; what it was handed, the caller closes, unless listed in ``owns`` (parts) or
    ``owns_backends=True``.
    """

    def __init__(self, backend: SearchBackend | Sequence[SearchBackend] | Callable[[], SearchBackend], *,
                 settings: Settings | None = None, rewriter: Rewriter | None = None,
                 variant_maker: VariantMaker | None = None, hyde: Any = None, owns_backends: bool = False,
                 owns: Sequence[Any] = (), reranker: Reranker | None = None) -> None:
        self.settings = settings or Settings()
        # CONVSEARCH_RERANKER (rerank/registry.py): the heuristic by default; opened here, closed by close()
        self.reranker: Reranker = open_reranker(self.settings) if reranker is None else reranker
        if rewriter is None:
            from .resolve.rules import RuleRewriter

            rewriter = RuleRewriter()
        self.rewriter: Rewriter = rewriter
        self.variant_maker = variant_maker
        self.hyde = hyde
        self._open = backend if callable(backend) and not _is_backend(backend) else None
        self._backends: tuple[SearchBackend, ...] | None = None if self._open else _unwrap(backend)  # type: ignore[arg-type]
        self._opened: SearchBackend | None = None
        self._owns_backends = owns_backends
        self._owned = [x for x in owns if x is not None]  # parts with close() this Pipeline releases
        if reranker is None:
            self._owned.append(self.reranker)
        self._turn_settings: dict[tuple[str, int], Settings] = {}
        self.closed = False

    @classmethod
    def from_settings(cls, settings: Settings | None = None, *,
                      backend: SearchBackend | Sequence[SearchBackend] | Callable[[], SearchBackend] | None = None,
                      rewriter: Rewriter | None = None) -> "Pipeline":
        """Everything ``settings`` configures: the rewriter (``CONVSEARCH_REWRITER``), LLM variants and HyDE when
        on, and the backends of ``CONVSEARCH_BACKENDS`` (opened on first use, unless ``backend`` is given)."""
        from .rewrite import get_rewriter, make_hyde, make_variant_maker

        s = settings or Settings.from_env()
        owns = backend is None
        if backend is None:
            from .backends.registry import open_backend

            backend = lambda: open_backend(s)  # noqa: E731 - opened on first search
        rw = rewriter or get_rewriter(s.rewriter, s)
        vm, hy = make_variant_maker(s), make_hyde(s)
        return cls(backend, settings=s, rewriter=rw, variant_maker=vm, hyde=hy, owns_backends=owns,
                   owns=(None if rewriter is not None else rw, vm, hy))

    # --- parts ----------------------------------------------------------------------------------------
    @property
    def backends(self) -> tuple[SearchBackend, ...]:
        """The backends searched (opened on first use when the Pipeline was given an opener)."""
        if self._backends is None:
            assert self._open is not None
            self._opened = self._open()
            self._backends = _unwrap(self._opened)
        return self._backends

    def _settings_for(self, mode: SearchMode | None, max_variants: int | None) -> Settings:
        if mode is None and max_variants is None:
            return self.settings
        key = (mode or self.settings.mode, self.settings.max_variants if max_variants is None else max_variants)
        s = self._turn_settings.get(key)
        if s is None:
            s = replace(self.settings, mode=SearchMode(key[0]), max_variants=key[1])
            self._turn_settings[key] = s
        return s

    def _select(self, names: Sequence[str] | None) -> tuple[SearchBackend, ...]:
        every = self.backends
        if not names:
            return every
        by_name = {b.name: b for b in every}
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise InputError(f"unknown backend(s) {', '.join(map(repr, unknown))}; this pipeline has: "
                             f"{', '.join(by_name)}")
        return tuple(by_name[n] for n in dict.fromkeys(names))

    # --- a turn ---------------------------------------------------------------------------------------
    def plan(self, query: str | TurnRequest, messages: Iterable[Message | dict[str, Any]] = (),
             **options: Any) -> TurnPlan:
        """Window → gate → rewrite → variants: what the turn will search for. No I/O but reading a stored
        ``session``'s history (which replaces ``messages`` unless the store is down, said in ``notes``).
        Takes a :class:`TurnRequest` or what builds one (only its query, messages, topic, session, mode and
        max_variants matter here). Emits the ``rewrite`` event."""
        req = TurnRequest.of(query, messages, options)
        return self._plan(req, self._settings_for(req.mode, req.max_variants), _Clock())

    def _plan(self, req: TurnRequest, settings: Settings, clock: _Clock) -> TurnPlan:
        """The plan step of every turn (sync or async): the checked query, the window (or a stored session's
        history), then ``plan_queries``."""
        q = validate_query(req.query, max_chars=settings.max_query_chars)
        history = history_window(req.messages, settings.window)
        memory: Any = None
        notes: tuple[str, ...] = ()
        if req.session is not None:
            from .history.session import history_for_turn

            memory, history, notes = history_for_turn(req.session, history, settings)
        clock.lap("window")
        calls: list[LLMCall] = []
        analysis, decision, rw, variants, queries = plan_turn(q, history, rewriter=self.rewriter, settings=settings,
                                                              topic=req.topic, clock=clock,
                                                              variant_maker=self.variant_maker, calls=calls)
        events.emit("rewrite", original=rw.original, rewritten=rw.rewritten, method=rw.method, reason=rw.reason,
                    fell_back=rw.fell_back, gate=decision.reason)
        return TurnPlan(q, tuple(history), decision, rw, tuple(variants), tuple(queries), clock.timings,
                        tuple(notes), memory, tuple(calls), analysis)

    def _hyde(self, plan: TurnPlan, backends: Sequence[SearchBackend],
              clock: _Clock, calls: list[LLMCall]) -> tuple[str | None, tuple[str, ...]]:
        """HyDE (CONVSEARCH_HYDE=on with an LLM): a short passage that would answer the standalone query, for the
        dense side of the backends that have one; None (and why, in the trace) when off, failed or out of
        budget. No backend with a dense side: no call."""
        if self.hyde is None or not plan.rewrite.rewritten.strip():
            return None, ()
        if not any(b.capabilities.dense for b in backends):
            return None, ("hyde skipped: the backend has no dense side",)
        text, why = self.hyde(plan.rewrite.rewritten, calls=calls)
        clock.lap("hyde")
        return text, (why,)

    def _routes(self, plan: TurnPlan, backends: Sequence[SearchBackend], dense: str | None) -> list[Route]:
        return route_queries(backends, plan.queries, web_variants=self.settings.web_variants == "on",
                             dense_query=dense)

    def search(self, query: str | TurnRequest, messages: Iterable[Message | dict[str, Any]] = (),
               **options: Any) -> SearchResponse:
        """One turn: a follow-up made standalone, searched on every backend (or the ``backends`` named), results
        fused, deduplicated, reranked with the original query and cited.

        Takes a :class:`TurnRequest`, or a query, the messages and the request's options as keywords (``topic``,
        ``top_k``, ``filters``, ``recency``, ``backends``, ``session``, ``today``, ``mode``, ``max_variants``,
        ``deadline``). ``filters`` / ``recency`` are honoured by each backend natively or after its search (the
        trace says which); ``session`` reads the history from the store and records the turn; ``mode`` /
        ``max_variants`` override the settings for this turn. A backend that fails or misses the deadline is left
        out while another answered (``partial``); none answering is an error. Safe to call from a thread or from
        code running an event loop (the backends' loop then runs in a worker thread).
        """
        return _run(self._turn(TurnRequest.of(query, messages, options)))

    async def asearch(self, query: str | TurnRequest, messages: Iterable[Message | dict[str, Any]] = (),
                      **options: Any) -> SearchResponse:
        """The async twin of :meth:`search` (the same body, its waits awaited): backends searched concurrently on
        the running loop, HyDE's call in a worker thread; a turn with a stored ``session`` runs in a worker
        thread as a whole (the store is blocking)."""
        req = TurnRequest.of(query, messages, options)
        if req.session is not None:
            if req.deadline is None:  # counted from now, not from when the thread starts
                req = replace(req, deadline=Deadline(self.settings.deadline_s))
            return await asyncio.to_thread(_run, self._turn(req))
        return await _arun(self._turn(req))

    def _turn(self, req: TurnRequest) -> Turn:
        """The one body of a turn, sync or async: plan, HyDE, the backends, rank, rerank, cite. Every wait is a
        yielded ``_Wait`` (``_run`` makes the blocking call, ``_arun`` awaits); the rest is pure and runs where it
        is driven."""
        deadline = req.deadline or Deadline(self.settings.deadline_s)
        s = self._settings_for(req.mode, req.max_variants)
        clock = _Clock()
        plan = self._plan(req, s, clock)
        chosen = self._select(req.backends)
        k = req.top_k or s.top_k
        hyde_calls: list[LLMCall] = []
        dense: str | None = None
        hyde_notes: tuple[str, ...] = ()
        if self.hyde is not None:
            dense, hyde_notes = yield _Wait(lambda: self._hyde(plan, chosen, clock, hyde_calls),
                                            lambda: asyncio.to_thread(self._hyde, plan, chosen, clock, hyde_calls))
        routes = self._routes(plan, chosen, dense)
        rec, web_notes = _web_recency(plan, chosen, req.recency)
        kw: dict[str, Any] = dict(top_k=max(k * 2, 10), filters=req.filters, recency=rec, today=req.today)
        with turn(deadline=deadline) as notes:
            lists, runs = yield _Wait(lambda: _search(routes, deadline, kw), lambda: _asearch(routes, deadline, kw))
        clock.lap("search")
        ranked, stats = self._rank(plan, lists, s, k, clock)
        reordered: tuple[list[Hit], tuple[str, ...], tuple[str, ...]] | None = None
        if self.reranker.remote:
            reordered = yield _Wait(lambda: self._reorder(plan, ranked, deadline),
                                    lambda: self._areorder(plan, ranked, deadline))
        return self._finish(plan, reordered or (ranked, (), ()), stats, runs, s, k, req.today, clock,
                            hyde_notes + web_notes + tuple(notes), req.session, hyde_calls,
                            _stale_matters(plan, chosen))

    def _rank(self, plan: TurnPlan, lists: Sequence[Sequence[Hit]], s: Settings, top_k: int,
              clock: _Clock) -> tuple[list[Hit], Any]:
        """The heuristic order (``rank_turn``): a remote reranker's fallback and the order it picks candidates in."""
        candidates = max(self.reranker.candidates, 1) if self.reranker.remote else 0
        return rank_turn(plan.query, plan.rewrite, lists, settings=s, top_k=top_k, clock=clock, candidates=candidates)

    def _reorder(self, plan: TurnPlan, ranked: list[Hit],
                 deadline: Deadline) -> tuple[list[Hit], tuple[str, ...], tuple[str, ...]]:
        """The remote reranker over the heuristic order, asked with the standalone question (never a variant), within
        what is left of the deadline: (hits, notes, errors); on its failure the heuristic order and the reason."""
        try:
            out = self.reranker.rerank(plan.rewrite.rewritten, ranked, budget_s=deadline.remaining())
        except RerankError as exc:
            return _rerank_failed(ranked, exc)
        return out, (_rerank_note(self.reranker, ranked),), ()

    async def _areorder(self, plan: TurnPlan, ranked: list[Hit],
                        deadline: Deadline) -> tuple[list[Hit], tuple[str, ...], tuple[str, ...]]:
        try:
            out = await self.reranker.arerank(plan.rewrite.rewritten, ranked, budget_s=deadline.remaining())
        except RerankError as exc:
            return _rerank_failed(ranked, exc)
        return out, (_rerank_note(self.reranker, ranked),), ()

    def _fetch(self, ids: list[str]) -> dict[str, Hit]:
        """Stored hits by id from the backends that can look one up (``get``: the local index, Milvus), for the
        widening of the top passages; a backend that fails to answer is passed over (the turn cites what it has)."""
        out: dict[str, Hit] = {}
        for b in self.backends:
            get = getattr(b, "get", None)
            if get is None:
                continue
            for i in ids:
                if i in out:
                    continue
                try:
                    h = get(i)
                except Exception:  # noqa: BLE001 - widening is an extra: never the end of a turn
                    h = None
                if h is not None:
                    out[i] = h
        return out

    def _finish(self, plan: TurnPlan, reranked: tuple[list[Hit], tuple[str, ...], tuple[str, ...]], stats: Any,
                runs: Sequence[BackendRun], s: Settings, top_k: int, today: date | None, clock: _Clock,
                hyde_notes: tuple[str, ...], session: Conversation | None, hyde_calls: Sequence[LLMCall] = (),
                time_sensitive: bool | None = None) -> SearchResponse:
        ranked, rerank_notes, rerank_errors = reranked
        ranked, cites, ctx = cite_turn(ranked, settings=s, top_k=top_k, today=today, clock=clock,
                                       time_sensitive=time_sensitive, fetch=self._fetch)
        events.emit("dedup", before=stats.before, after=stats.after, by_url=stats.by_url, by_hash=stats.by_hash,
                    by_near=stats.by_near)
        history_notes = plan.notes
        if session is not None and plan.memory is not None:
            from .history.session import record_for_turn

            history_notes += record_for_turn(session, plan.query, cites, s)
            clock.lap("history")
        partial = any(r.status != OK for r in runs)
        backend_notes = tuple(f"backend {r.backend} {r.status}: {r.why}" for r in runs if r.status != OK)
        if partial:
            events.emit("partial", failed=[r.backend for r in runs if r.status != OK],
                        answered=[r.backend for r in runs if r.status == OK])
        trace = Trace(facts=plan.facts, decision=plan.decision, rewrite=plan.rewrite, variants=plan.variants,
                      queries=plan.queries,
                      timings_ms=dict(clock.timings), hits_before_dedup=stats.before, hits_after_dedup=stats.after,
                      window_size=len(plan.history), fusion=s.fusion,
                      notes=_fallback_notes(plan.rewrite) + hyde_notes + history_notes + backend_notes + rerank_notes,
                      llm_calls=plan.llm_calls + tuple(hyde_calls), backends=tuple(runs), partial=partial,
                      errors=tuple(n for n in hyde_notes if n.startswith(EMBED_FAILED)) + rerank_errors)
        return SearchResponse(query=plan.query, standalone_query=plan.rewrite.rewritten, rewrite=plan.rewrite,
                              variants=plan.variants, hits=tuple(ranked), citations=tuple(cites), context=ctx,
                              trace=trace, memory=plan.memory)

    # --- lifetime -------------------------------------------------------------------------------------
    def close(self) -> None:
        """Release what this Pipeline owns: the LLM clients of its rewriter / variants / HyDE (when it built
        them) and the backends it opened. Idempotent."""
        if self.closed:
            return
        self.closed = True
        for part in self._owned:
            part.close()
        if self._owns_backends:
            if self._opened is not None:
                self._opened.close()
            elif self._open is None and self._backends is not None:
                for b in self._backends:
                    b.close()

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        names = ", ".join(b.name for b in self._backends) if self._backends is not None else "(not opened)"
        return f"Pipeline(rewriter={self.rewriter.name}, backends={names})"


def _web_recency(plan: TurnPlan, backends: Sequence[SearchBackend],
                 recency: Recency | None) -> tuple[Recency | None, tuple[str, ...]]:
    """A time-sensitive question (今天, 最新, price, latest …) gets a default recency when the caller gave none,
    if every backend of the turn searches the web (``capabilities.web``): a local index or a knowledge base on a
    Milvus server (remote, not web) keeps its undated / older documents."""
    if recency is not None or not backends or not all(b.capabilities.web for b in backends):
        return recency, ()
    from .timesense import default_recency

    rec, note = default_recency(plan.rewrite.rewritten, None)
    return rec, ((note,) if note else ())


def _stale_matters(plan: TurnPlan, backends: Sequence[SearchBackend]) -> bool | None:
    """With a web backend in the turn, old results are marked stale only for a time-sensitive question; a
    local-only turn keeps the plain age rule (None)."""
    if not any(b.capabilities.web for b in backends):
        return None
    from .timesense import time_sensitive

    return time_sensitive(plan.rewrite.rewritten) is not None


def _search(routes: Sequence[Route], deadline: Deadline,
            kw: dict[str, Any]) -> tuple[Sequence[Sequence[Hit]], Sequence[BackendRun]]:
    """The backends of a turn, blocking: one in-process backend in this thread (no event loop needed), else the
    fan-out on a loop of its own (``run_sync``)."""
    if len(routes) == 1 and not routes[0].backend.capabilities.remote:
        return _search_one(routes[0], **kw)
    r = run_sync(afan_out(routes, deadline=deadline, **kw))
    return list(r.lists), r.runs


async def _asearch(routes: Sequence[Route], deadline: Deadline,
                   kw: dict[str, Any]) -> tuple[Sequence[Sequence[Hit]], Sequence[BackendRun]]:
    r = await afan_out(routes, deadline=deadline, **kw)
    return list(r.lists), r.runs


def _search_one(route: Route, *, top_k: int, filters: Filters | None, recency: Recency | None,
                today: date | None) -> tuple[list[tuple[Hit, ...]], tuple[BackendRun, ...]]:
    """One backend, in this thread (no event loop): its error is the turn's error."""
    t0 = time.perf_counter()
    if len(route.queries) > 1 and takes_many(route.backend):  # all variants in one call
        applied = [search_many_applied(route.backend, route.queries, top_k=top_k, filters=filters, recency=recency,
                                       dense_query=route.dense_query, today=today)]
    else:
        applied = [search_applied(route.backend, q, top_k=top_k, filters=filters, recency=recency,
                                  dense_query=route.dense_query if i == 0 else None, today=today)
                   for i, q in enumerate(route.queries)]
    notes = tuple(dict.fromkeys(n for a in applied for n in a.notes))
    run = BackendRun(route.name, OK, route.queries, "", round((time.perf_counter() - t0) * 1000, 3), notes,
                     sum(len(a.hits) for a in applied))
    return [a.hits for a in applied], (run,)


def search_with_context(
    query: str,
    messages: Iterable[Message | dict[str, Any]] = (),
    *,
    backend: SearchBackend,
    rewriter: Rewriter | None = None,
    settings: Settings | None = None,
    topic: str | None = None,
    top_k: int | None = None,
    filters: Filters | dict[str, Any] | None = None,
    recency: Recency | str | None = None,
    today: date | None = None,
    session: Conversation | None = None,
    variant_maker: VariantMaker | None = None,
) -> SearchResponse:
    """Turn a follow-up into a standalone query, search, and return cited, deduplicated results: one turn of a
    :class:`Pipeline` built for this call (its rewriter, LLM variants and HyDE from ``settings`` unless given,
    closed on return). Keep a Pipeline instead when running many turns with an LLM configured.

    With ``session`` (a :class:`convsearch.history.Conversation`: store + scope) the history comes from the
    store (summary + window + task stack) and the turn is recorded there; ``messages`` are then only the
    fallback used, flagged in ``trace.notes``, when the store is locked or down.

    >>> from convsearch.backends.base import InMemoryBackend
    >>> from convsearch.types import Document
    >>> docs = [Document("price", "AnySearch 专业版每月 99 元", title="AnySearch 价格")]
    >>> r = search_with_context("价格呢？", [{"role": "user", "content": "AnySearch 支持哪些检索方式？"}],
    ...                         backend=InMemoryBackend(docs))
    >>> r.standalone_query
    'AnySearch 的价格'
    """
    from .rewrite import get_rewriter, make_hyde, make_variant_maker

    s = settings or Settings()
    rw = rewriter or get_rewriter(s.rewriter, s)
    vm = variant_maker if variant_maker is not None else make_variant_maker(s)
    hy = make_hyde(s)
    # closed on return: what was built here, never what the caller passed in
    owned = (None if rewriter is not None else rw, None if variant_maker is not None else vm, hy)
    with Pipeline(backend, settings=s, rewriter=rw, variant_maker=vm, hyde=hy, owns=owned) as p:
        return p.search(TurnRequest(query, messages, topic=topic, top_k=top_k, filters=filters, recency=recency,
                                    session=session, today=today))


def _rerank_note(reranker: Reranker, ranked: Sequence[Hit]) -> str:
    sent = len(ranked) if reranker.candidates <= 0 else min(reranker.candidates, len(ranked))
    return f"rerank ({reranker.name}): {sent} candidates reordered"


def _rerank_failed(ranked: list[Hit], exc: RerankError) -> tuple[list[Hit], tuple[str, ...], tuple[str, ...]]:
    events.emit("rerank_failed", reranker=exc.reranker, reason=exc.reason)
    why = f"{exc}; heuristic order used"
    return ranked, (why,), (why,)


def _fallback_notes(rw: RewriteResult) -> tuple[str, ...]:
    """What the trace says about a fallback (the why is in ``rw.reason``)."""
    if not rw.fell_back:
        return ()
    return (f"rewrite fell back to {rw.method}",) if rw.changed else ("rewrite fell back to the original",)


def compare_queries(original: str, rewritten: str, *, backend: SearchBackend, top_k: int = 5) -> QueryComparison:
    """Run both queries and count, for each, the results containing at least one word the rewrite
    added (the keyword hits the rewrite is meant to win; all its content words if it added none)."""
    keys = (content_words(rewritten) - content_words(original)) or content_words(rewritten)
    a = backend.search(original, top_k=top_k)
    b = backend.search(rewritten, top_k=top_k)

    def kw_hits(hits: Sequence[Hit]) -> int:
        return sum(1 for h in hits if keys & set(words(f"{h.title} {h.text}")))

    ids_a, ids_b = tuple(h.id for h in a), tuple(h.id for h in b)
    return QueryComparison(original, rewritten, ids_a, ids_b, kw_hits(a), kw_hits(b),
                           tuple(i for i in ids_a if i not in ids_b), tuple(i for i in ids_b if i not in ids_a))


__all__ = ["Pipeline", "Planned", "TurnPlan", "TurnRequest", "compare_queries", "finish_turn", "plan_queries",
           "plan_turn", "search_with_context", "validate_query"]
