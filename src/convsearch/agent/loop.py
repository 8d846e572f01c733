"""The agent loop (ReAct): the model reads the conversation and the numbered results, calls ``web_search`` (several
calls of one step run at once), and answers with citations; code, not the model, enforces the budget, the
deadline, the context size and the citation check.

    question ─► no-search pre-check ─► [LLM step ─► tool calls ─► guard ─► gate/rewrite ─► search ─► number]*
             ─► final answer (no tool offered when the budget, the step limit or the deadline says so)
             ─► citation check (strict: one repair) ─► memory (the session's task stack)

Failures never reach the user as exceptions: a failed LLM call (timeout, 5xx, garbage) turns the answer into the
best results as a numbered list with a one-line note (``flags.degraded``).

>>> from convsearch.agent.testing import search_call
>>> from convsearch.backends.base import InMemoryBackend
>>> from convsearch.config import Settings
>>> from convsearch.llm import ScriptedLLM
>>> from convsearch.types import Document
>>> docs = [Document("sz", "深圳未来三天晴到多云，夜间 18-24 度，适合露营。", title="深圳天气", url="https://w.example/sz")]
>>> llm = ScriptedLLM([search_call("深圳 露营 天气"), "深圳未来三天晴到多云，适合露营 [1]。"])  # a real one: open_llm
>>> agent = Agent(InMemoryBackend(docs), llm, Settings())
>>> a = agent.ask("深圳最近三天适合露营吗？")
>>> a.text, [(c.n, c.domain) for c in a.citations], a.flags.partial
('深圳未来三天晴到多云，适合露营 [1]。', [(1, 'w.example')], False)
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from functools import lru_cache, partial
from typing import Any

from ..backends.base import Recency
from ..config import Settings, Switch
from ..errors import ConvsearchError, HistoryUnavailable
from ..format import domain as domain_of
from ..infra.deadline import MIN_ATTEMPT_S, Deadline
from ..infra.turn import turn
from ..llm import LLMBadOutput, LLMError, LLMSettings, LLMTimeout, stream_reply
from ..resolve.gate import needs_rewrite
from ..server.tools import openai_tools
from ..text import count_tokens, detect_lang, truncate_tokens
from ..types import Citation, Completion, Message, ToolCall, Usage
from ..window import history_window, to_messages
from . import prompts as P
from .citations import check_citations, refs_in
from .policy import (
    call_key,
    conclusion_line,
    guard_query,
    looks_like_injection,
    no_search_reason,
    parse_tool_call,
    result_count,
)
from .search import ResultCache, Searcher, as_searcher
from .settings import AgentSettings
from .types import AgentEvent, Answer, AnswerFlags, LLMCallRecord, SearchStep, Source

MAX_TOKENS = 1024          # completion cap of one agent call
_MODEL_NOTES = ("query shortened", "rewritten with")  # the step notes the model is shown
TOOL_SCHEMA_TOKENS = 120   # the web_search schema, counted once per call that offers it
Emit = Callable[[str, Any], None]
log = logging.getLogger("convsearch.agent")


class _LLMFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Round:
    """One step that called the tool: the assistant's calls, and per call the tool message and its sources."""

    step: int
    text: str
    calls: list[ToolCall]
    replies: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    conclusions: list[str] = field(default_factory=list)


@dataclass
class _Task:
    question: str
    lang: str
    deadline: Deadline
    history: tuple[Message, ...]
    summary: str | None
    ns: tuple[str, str]
    memory: list[Source] = field(default_factory=list)
    registry: dict[str, Source] = field(default_factory=dict)
    rounds: list[_Round] = field(default_factory=list)
    seen: dict[tuple[str, str], SearchStep] = field(default_factory=dict)
    steps: list[SearchStep] = field(default_factory=list)
    calls: list[LLMCallRecord] = field(default_factory=list)
    usage: Usage = Usage()
    cited_so_far: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    searches: int = 0
    search_ms: float = 0.0  # wall time of the search steps (parallel calls of a step counted once)
    memory_ms: float = 0.0  # reading the session's memory from the history store
    partial: bool = False
    budget_exhausted: bool = False
    top_k: int = 5
    sync_llm: bool = False  # call llm.complete in a thread (the task runs on a loop of its own)
    emit: Emit | None = None  # astream: where live tokens go
    streamed: list[str] = field(default_factory=list)  # the tokens already sent live
    listed: tuple[int, ...] = ()  # the sources a degraded answer shows, by number

    def number(self, key: str, make: Callable[[int], Source]) -> Source:
        """The task-wide number of a result: the same URL (or id) keeps its number."""
        s = self.registry.get(key)
        if s is None:
            s = self.registry[key] = make(max((x.n for x in self.registry.values()), default=0) + 1)
        return s

    @property
    def shown(self) -> set[int]:
        return {s.n for s in self.registry.values()}


def _source_key(url: str, id_: str) -> str:
    return url.strip().rstrip("/").lower() or f"id:{id_}"


class Agent:
    """A search agent over a pipeline (or a bare backend) and any OpenAI-compatible LLM.

    ``tenant`` and ``name`` scope its result cache and its memory (tenant → agent → session): another agent's
    cached searches and task stack never reach this one's context. ``store`` is the history store a session id
    (``ask(..., session="s-42")``) is looked up in; a ``Conversation`` may be passed instead. ``today`` fixes the
    date the prompt, recency and the cache count from (tests, benchmarks).
    """

    def __init__(self, pipeline: Any, llm: Any, settings: Settings | None = None, *, tenant: str = "local",
                 name: str = "default", store: Any = None, cache: ResultCache | None = None,
                 today: date | None = None) -> None:
        self.settings = settings or Settings()
        s = self.settings
        self.conf = AgentSettings.of(s)
        self.llm_conf = LLMSettings.of(s)
        self.searcher: Searcher = as_searcher(pipeline, s, today=today)
        self.llm = llm
        self.tenant = tenant
        self.name = name
        self.store = store
        self.cache = cache if cache is not None else ResultCache(self.conf.cache_size, self.conf.cache_ttl_s)
        self.today = today
        self.tools = _tools()  # fixed here: nothing a result says can change it
        self._sem: asyncio.Semaphore | None = None
        self._sem_loop: Any = None

    # --- public API --------------------------------------------------------------------------------
    def ask(self, question: str, *, session: Any = None, history: Iterable[Any] | None = None) -> Answer:
        """Answer ``question`` (sync). ``session``: a Conversation or a session id (with ``store``);
        ``history``: messages for a stateless call."""
        # an event loop of our own: the LLM's sync client in a thread (an async client bound to a loop that is
        # about to close would leave its connections behind)
        return _run_sync(self._run(question, session, history, None, sync_llm=True))

    async def aask(self, question: str, *, session: Any = None, history: Iterable[Any] | None = None) -> Answer:
        return await self._run(question, session, history, None)

    async def astream(self, question: str, *, session: Any = None, history: Iterable[Any] | None = None,
                      _sync_llm: bool = False) -> AsyncIterator[AgentEvent]:
        """Events as they happen: ``search`` per search step, then ``token`` pieces of the answer,
        ``citations`` and ``done`` (the Answer).

        Tokens are real when the LLM has ``astream``: every step and final call streams its text as the model
        writes it (leading/trailing blanks held back, a ``[n`` marker held until its ``]``); with a client of
        ``complete`` / ``acomplete`` only, the answer is sent in pieces once its call ends. A step call that offers
        the tool may turn into tool calls after some text: then one ``replace`` event with the text "" retracts
        what was streamed, the searches follow, and the next call's tokens start the answer afresh. When the
        answer the user gets differs from what was streamed (the citation repair rewrote it, or the LLM failed
        mid-stream and the degraded list replaced it), a ``replace`` event carries the whole new text before
        ``citations``, so a client redraws. The text standing after the last ``replace`` plus the tokens after
        it is always ``Answer.text``."""
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()

        def emit(kind: str, data: Any) -> None:
            queue.put_nowait(AgentEvent(kind, data))  # type: ignore[arg-type]

        async def work() -> None:
            try:
                await self._run(question, session, history, emit, sync_llm=_sync_llm)
            finally:
                queue.put_nowait(None)

        task = asyncio.ensure_future(work())
        try:
            while (ev := await queue.get()) is not None:
                yield ev
            await task
        finally:
            if not task.done():
                task.cancel()

    def stream(self, question: str, *, session: Any = None,
               history: Iterable[Any] | None = None) -> Iterator[AgentEvent]:
        """``astream`` for synchronous callers (its own event loop, one event at a time)."""
        loop = asyncio.new_event_loop()
        live = hasattr(self.llm, "astream")  # real tokens need the async client, closed with this loop
        agen = self.astream(question, session=session, history=history, _sync_llm=not live)
        try:
            while True:
                try:
                    yield loop.run_until_complete(agen.__anext__())
                except StopAsyncIteration:
                    break
        finally:
            loop.run_until_complete(agen.aclose())
            if live and hasattr(self.llm, "aclose"):
                loop.run_until_complete(self.llm.aclose())
            loop.close()

    # --- the task ----------------------------------------------------------------------------------
    def _conversation(self, session: Any) -> Any:
        if session is None or not isinstance(session, str):
            return session
        if self.store is None:
            raise ConvsearchError("a session id needs a history store: Agent(..., store=open_store(settings))")
        from ..history import Conversation, Scope

        return Conversation(self.store, Scope(self.tenant, self.name, session))

    async def _run(self, question: str, session: Any, history: Iterable[Any] | None, emit: Emit | None, *,
                   sync_llm: bool = False) -> Answer:
        s = self.settings
        t0 = time.perf_counter()
        q = " ".join(str(question).split())
        if not q:
            from ..errors import InputError

            raise InputError("question is empty")
        if len(q) > s.max_query_chars:
            from ..errors import InputError

            raise InputError(f"question is {len(q):,} characters long; the limit is {s.max_query_chars:,}")
        conv = self._conversation(session)
        given = history_window(to_messages(history or ()), s.window)
        task = _Task(question=q, lang=detect_lang(q), deadline=Deadline(self.conf.deadline_s), history=tuple(given),
                     summary=None, ns=(self.tenant, self.name), sync_llm=sync_llm, emit=emit)
        if conv is not None:
            task.ns = (conv.scope.tenant, conv.scope.agent)
            tm = time.perf_counter()
            await self._load_memory(task, conv)
            task.memory_ms = (time.perf_counter() - tm) * 1000
        task.top_k = (result_count(q, simple=self.conf.top_k, compare=self.conf.top_k_compare)
                      if self.conf.dynamic_count is Switch.ON else self.conf.top_k_fixed)
        flags: dict[str, Any] = {}
        saved = 0
        try:
            if getattr(self.llm, "configured", True) is False:  # NoLLM: no call at all, the sources say so
                raise _LLMFailed("no LLM configured")
            skip = no_search_reason(q) if self.conf.no_search_check is Switch.ON else None
            if skip or self.conf.max_searches == 0:
                task.notes.append(f"no-search pre-check: {skip}; the tool was not offered" if skip
                                  else "CONVSEARCH_AGENT_MAX_SEARCHES=0: the tool was not offered")
                saved += 1 if skip else 0
                text = await self._final(task, purpose="final", reason=None, offer_tools=False)
            else:
                text = await self._loop(task, emit)
            text, flags = await self._checked(task, text)
        except _LLMFailed as exc:
            no_llm = not task.calls and getattr(self.llm, "configured", True) is False
            task.notes.append("no LLM configured: answered with the most relevant sources" if no_llm
                              else f"LLM failed: {exc.reason}; answered with the best results")
            text = await self._degraded(task, emit, no_llm=no_llm)
            flags = {"degraded": True, "no_llm": no_llm, "cited": task.listed if no_llm else tuple(refs_in(text))}
        if not task.steps or all(st.error for st in task.steps):
            flags["no_search_needed"] = not flags.get("degraded", False)
            if task.memory and flags.get("cited"):
                saved += 1
        cited = flags.pop("cited", ())
        by_n = {x.n: x for x in task.registry.values()}
        citations = tuple(by_n[n].cite() for n in sorted(set(cited)) if n in by_n)
        ms = (time.perf_counter() - t0) * 1000
        llm_ms = sum(c.ms for c in task.calls)
        timings = {"total": round(ms, 3), "llm": round(llm_ms, 3), "search": round(task.search_ms, 3),
                   "memory": round(task.memory_ms, 3),
                   "loop": round(max(0.0, ms - llm_ms - task.search_ms - task.memory_ms), 3)}
        answer = Answer(
            question=q, text=text, citations=citations, searches=tuple(task.steps), llm_calls=tuple(task.calls),
            usage=task.usage, flags=AnswerFlags(partial=task.partial, budget_exhausted=task.budget_exhausted, **flags),
            sources=tuple(sorted(task.registry.values(), key=lambda x: x.n)), lang=task.lang,
            ms=round(ms, 3), timings_ms=timings,
            rounds_tokens=tuple(c.estimated_prompt_tokens for c in task.calls), saved_calls=saved,
            trace=tuple(task.notes))
        if conv is not None:
            await self._remember(task, conv, answer)
        if emit is not None:
            sent = "".join(task.streamed)
            if not sent:
                for piece in _pieces(answer.text):
                    emit("token", piece)
            elif sent != answer.text:
                emit("replace", answer.text)  # repaired or degraded after tokens went out: the client redraws
            emit("citations", answer.citations)
            emit("done", answer)
        return answer

    async def _loop(self, task: _Task, emit: Emit | None) -> str:
        step = 0
        while True:
            step += 1
            near = task.deadline.remaining() <= self.conf.answer_reserve_s
            if near and task.rounds:
                task.partial = True
                task.notes.append(f"step {step}: {task.deadline.remaining():.1f} s left; no new search, answering")
                return await self._final(task, purpose="final", reason="deadline")
            if task.searches >= self.conf.max_searches and task.rounds:
                return await self._final(task, purpose="final", reason="budget")
            if step > self.conf.max_steps:
                task.notes.append(f"step limit ({self.conf.max_steps}) reached")
                return await self._final(task, purpose="final", reason="steps")
            comp = await self._call(task, self._messages(task), tools=True, purpose="step", step=step)
            if not comp.tool_calls:
                if comp.text.strip():
                    return comp.text.strip()
                raise _LLMFailed("empty answer")
            await self._run_calls(task, step, comp, emit)

    async def _run_calls(self, task: _Task, step: int, comp: Completion, emit: Emit | None) -> None:
        lang = task.lang
        rnd = _Round(step, comp.text.strip(), list(comp.tool_calls))
        from ..history.memory import cited_refs

        task.cited_so_far.update(cited_refs(rnd.text))
        pending: list[tuple[int, Any, str, Recency | None, list[str]]] = []  # (index, key, query, recency, notes)
        rnd.replies = [""] * len(rnd.calls)
        planned = 0
        for i, call in enumerate(rnd.calls):
            args = parse_tool_call(call.arguments, call.name)
            if args.error is not None:
                rnd.replies[i] = args.error
                task.steps.append(SearchStep(step, args.query, args.recency.value, error=args.error))
                continue
            key = call_key(args.query, args.recency)
            if key in task.seen or any(p[1] == key for p in pending):
                prev = task.seen.get(key)
                rnd.replies[i] = P.repeat_refusal(lang, args.query, prev.results if prev else ())
                task.steps.append(SearchStep(step, args.query, args.recency.value, error="repeated call"))
                task.notes.append(f"step {step}: refused a repeated search {args.query!r}")
                continue
            if task.searches + planned >= self.conf.max_searches:
                rnd.replies[i] = P.budget_refusal(lang, task.searches + planned)
                task.steps.append(SearchStep(step, args.query, args.recency.value, error="search budget used up"))
                task.budget_exhausted = True
                continue
            if task.deadline.remaining() <= self.conf.answer_reserve_s:
                rnd.replies[i] = P.deadline_refusal(lang)
                task.steps.append(SearchStep(step, args.query, args.recency.value, error="deadline near"))
                task.partial = True
                continue
            lc = self.llm_conf
            g = guard_query(args.query, max_zh_chars=lc.max_zh_chars, max_en_words=lc.max_en_words, blocked=lc.blocked)
            if g.error is not None:
                rnd.replies[i] = g.error
                task.steps.append(SearchStep(step, args.query, args.recency.value, error="blocked word"))
                continue
            planned += 1
            pending.append((i, key, g.query, args.recency if args.recency_given else None,
                            [g.note] if g.note else []))
        t0 = time.perf_counter()
        results = await asyncio.gather(*(self._search(task, step, args_q, rec, notes, raw=rnd.calls[i])
                                         for i, _, args_q, rec, notes in pending))
        task.search_ms += (time.perf_counter() - t0) * 1000
        for (i, key, _q, _rec, _n), (st, sources) in zip(pending, results):
            task.seen[key] = st
            task.steps.append(st)
            if st.error is None:
                task.searches += 1
            said = [n for n in st.notes if n.startswith(_MODEL_NOTES)]  # not the backends' operational notes
            rnd.replies[i] = P.tool_result(lang, st.query, st.searched or st.query, sources, said) \
                if st.error is None else f"error: {st.error}"
            rnd.sources.extend(x for x in sources if x not in rnd.sources)
            rnd.conclusions.append(conclusion_line(st.searched or st.query, sources[0].snippet if sources else "",
                                                   sources[0].n if sources else None))
            if emit is not None:
                emit("search", st)
        task.rounds.append(rnd)
        if task.searches >= self.conf.max_searches:
            task.budget_exhausted = True
            task.notes.append(f"step {step}: search budget ({self.conf.max_searches}) used up")

    async def _search(self, task: _Task, step: int, query: str, recency: Recency | None, notes: list[str],
                      raw: ToolCall) -> tuple[SearchStep, list[Source]]:
        model_query = parse_tool_call(raw.arguments, raw.name).query
        leans = needs_rewrite(task.history, query).needed if task.history else False
        label = recency.value if recency is not None else "auto"  # auto: the pipeline's default window
        key = ResultCache.key(query, task.history if leans else (), label, task.top_k, self.today)
        t0 = time.perf_counter()
        resp = self.cache.get(task.ns, key)
        cached = resp is not None
        queued = 0.0
        if resp is None:
            sem = self._semaphore()
            tq = time.perf_counter()
            async with sem:
                queued = (time.perf_counter() - tq) * 1000
                t1 = time.perf_counter()
                budget = max(task.deadline.remaining() - self.conf.answer_reserve_s / 2, MIN_ATTEMPT_S)
                try:
                    # the turn's scope and deadline reach the backends: web caches are namespaced tenant →
                    # agent, and a web call does not start past the deadline
                    with turn(deadline=Deadline(budget), tenant=task.ns[0], agent=task.ns[1]):
                        resp = await asyncio.wait_for(
                            self.searcher.asearch(query, history=task.history if leans else (), recency=recency,
                                                  top_k=task.top_k, deadline=Deadline(budget)),
                            timeout=budget + 0.25)
                except TimeoutError:
                    return SearchStep(step, model_query, label, searched=query, error="search timed out",
                                      queued_ms=round(queued, 3)), []
                except Exception as exc:  # noqa: BLE001 - a failed search is a message to the model, not a crash
                    if not isinstance(exc, ConvsearchError):
                        log.warning("agent search failed: %s: %s", type(exc).__name__, exc)
                    return SearchStep(step, model_query, label, searched=query,
                                      error=f"search failed: {type(exc).__name__}", queued_ms=round(queued, 3)), []
                ms = (time.perf_counter() - t1) * 1000
            self.cache.put(task.ns, key, resp)
        else:
            ms = (time.perf_counter() - t0) * 1000
        # what the backends said: a web cache hit, time queued for a provider's rate limit
        cached = cached or any(n.startswith("cache hit") for n in resp.trace.notes)
        queued += max((float(h.metadata.get("queued_ms", 0) or 0) for h in resp.hits), default=0.0)
        sources: list[Source] = []
        for c in resp.citations:
            hit = next((h for h in resp.hits if h.id == c.id), None)
            provider = hit.source if hit is not None else ""
            src = task.number(_source_key(c.url, c.id), lambda n, c=c, p=provider: Source(
                n, c.id, c.title, c.url, c.domain, c.date, c.snippet, p, c.metadata))
            sources.append(src)
            if looks_like_injection(f"{c.title} {c.snippet}"):
                task.notes.append(f"result [{src.n}] contains instruction-like text; shown as data only")
        if resp.standalone_query != query:
            notes = [*notes, f"rewritten with the conversation: {resp.rewrite.reason}"]
        notes = [*notes, *(n for n in resp.trace.notes if n not in notes)]  # the backends' own notes (web)
        provider = ",".join(dict.fromkeys(x.provider for x in sources if x.provider))
        return SearchStep(step, model_query, label, searched=resp.standalone_query, provider=provider,
                          results=tuple(x.n for x in sources), cached=cached, queued_ms=round(queued, 3),
                          ms=round(ms, 3), notes=tuple(notes)), sources

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem_loop is not loop:
            self._sem, self._sem_loop = asyncio.Semaphore(self.conf.parallel), loop
        return self._sem

    # --- prompts -----------------------------------------------------------------------------------
    def _system(self, task: _Task, *, offer_tools: bool) -> str:
        today = (self.today or date.today()).isoformat()
        text = P.system_prompt(task.lang, today=today, max_searches=self.conf.max_searches,
                               max_chars=self.conf.max_answer_chars)
        mem = P.memory_block(task.lang, task.memory, task.summary)
        if mem:
            text += "\n\n" + mem
        if not offer_tools and not task.rounds:
            text += "\n\n" + P.no_tool_note(task.lang)
        return text

    def _messages(self, task: _Task, *, final: str | None = None, offer_tools: bool = True) -> list[dict[str, Any]]:
        """The prompt of the next call, cut to CONVSEARCH_AGENT_CONTEXT_TOKENS: first the oldest history
        messages go, then the latest round's snippets are shortened, then dropped."""
        budget = self.conf.context_tokens - (TOOL_SCHEMA_TOKENS if offer_tools else 0) - MAX_TOKENS // 4
        drop, snippet = 0, None
        while True:
            msgs = self._build(task, final=final, offer_tools=offer_tools, drop_history=drop, snippet_tokens=snippet)
            n = _estimate(msgs)
            if n <= budget:
                break
            if drop < len(task.history):
                drop += 1
                continue
            snippet = 60 if snippet is None else snippet // 2
            if snippet < 4:
                msgs = _truncate(msgs, budget)
                break
        if drop or snippet is not None:
            task.notes.append(f"context fitted to {budget} tokens: dropped {drop} history messages"
                              + (f", snippets cut to {snippet} tokens" if snippet is not None else ""))
        return msgs

    def _build(self, task: _Task, *, final: str | None, offer_tools: bool, drop_history: int,
               snippet_tokens: int | None) -> list[dict[str, Any]]:
        compress = self.conf.compress is Switch.ON
        msgs: list[dict[str, Any]] = [{"role": "system", "content": self._system(task, offer_tools=offer_tools)}]
        for m in task.history[drop_history:]:
            msgs.append({"role": "assistant" if m.role == "assistant" else "user", "content": m.content})
        msgs.append({"role": "user", "content": task.question})
        rounds = task.rounds
        if compress and len(rounds) > 1:
            earlier, rounds = rounds[:-1], rounds[-1:]
            lines = [c for r in earlier for c in r.conclusions]
            kept = [x for r in earlier for x in r.sources if x.n in task.cited_so_far]
            msgs.append({"role": "assistant", "content": P.research_so_far(task.lang, lines, kept)})
        for r in rounds:
            # our own call ids: servers reuse theirs across replies ("call_1" every time)
            msgs.append({"role": "assistant", "content": r.text or None, "tool_calls": [
                {"id": f"call_{r.step}_{i}", "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}} for i, c in enumerate(r.calls)]})
            for i, reply in enumerate(r.replies):
                if snippet_tokens is not None:
                    reply = _shorten_results(reply, snippet_tokens)
                msgs.append({"role": "tool", "tool_call_id": f"call_{r.step}_{i}", "content": reply})
        if final is not None:
            msgs.append({"role": "user", "content": P.final_instruction(task.lang, final)})
        return msgs

    # --- LLM calls ---------------------------------------------------------------------------------
    async def _call(self, task: _Task, msgs: list[dict[str, Any]], *, tools: bool, purpose: str,
                    step: int) -> Completion:
        est = _estimate(msgs) + (TOOL_SCHEMA_TOKENS if tools else 0)
        budget = min(self.conf.llm_timeout_s, task.deadline.remaining())
        t0 = time.perf_counter()
        err: str | None = None
        comp = Completion()
        try:
            if budget <= MIN_ATTEMPT_S:
                raise LLMTimeout("no time left for an LLM call")
            kw: dict[str, Any] = {"budget_s": budget, "max_tokens": MAX_TOKENS}
            if tools:
                kw["tools"] = self.tools
            # every step and final call streams when someone listens; a repair arrives whole (as ``replace``)
            live = task.emit is not None and purpose != "repair" and not task.sync_llm \
                and (hasattr(self.llm, "astream") or hasattr(self.llm, "acomplete"))
            if live:
                coro = self._streamed(task, msgs, kw)
            elif hasattr(self.llm, "acomplete") and not (task.sync_llm and hasattr(self.llm, "complete")):
                coro = self.llm.acomplete(msgs, **kw)
            else:
                # a pool of our own: a client that overruns its budget must not hold up the loop's shutdown
                coro = asyncio.get_running_loop().run_in_executor(_llm_pool(), partial(self.llm.complete, msgs, **kw))
            out = await asyncio.wait_for(coro, timeout=budget + 0.25)  # the hard stop, whatever the client does
            comp = _as_completion(out)
        except TimeoutError:
            err = f"timed out (budget {budget:.2f} s)"
        except LLMError as exc:
            err = exc.reason
            rejected = getattr(exc, "usage", None)  # a rejected reply still cost its tokens
            if isinstance(rejected, Usage):
                comp = Completion(usage=rejected)
        except Exception as exc:  # noqa: BLE001 - a broken client must not break the answer
            err = f"client error ({type(exc).__name__})"
        ms = (time.perf_counter() - t0) * 1000
        task.usage = task.usage + comp.usage
        task.calls.append(LLMCallRecord(step, purpose, round(ms, 3), comp.usage.prompt_tokens,
                                        comp.usage.completion_tokens, est, len(comp.tool_calls), tools, err))
        if err is not None:
            raise _LLMFailed(err)
        return comp

    async def _streamed(self, task: _Task, msgs: list[dict[str, Any]], kw: dict[str, Any]) -> Completion:
        """One call through ``llm.astream`` (``stream_reply``: one ``acomplete`` for a client without it), its
        text deltas sent as ``token`` events as they arrive. A call that offers the tool may turn into tool calls
        after some text: at the first tool-call delta the text sent so far is retracted (``replace`` with "")
        and the rest of the call stays quiet; the loop then searches and the next call streams afresh."""
        emit = task.emit
        assert emit is not None
        held = ""  # blanks at the edges and an unclosed "[n" wait for what follows
        out: Completion | None = None
        calling = False  # a tool-call delta came: nothing more of this call is the answer
        stream = stream_reply(self.llm, msgs, **kw)
        try:
            async for ev in stream:
                if ev.completion is not None:
                    out = ev.completion
                    continue
                if ev.tool_call and not calling and "tools" in kw:
                    calling = True
                    if task.streamed:
                        task.streamed.clear()
                        emit("replace", "")  # the preamble was no answer: the client drops it
                if calling:
                    continue
                held += ev.text
                if not task.streamed:
                    held = held.lstrip()
                body = held.rstrip()
                cut = body.rfind("[")
                if cut > body.rfind("]") and len(body) - cut <= 8:
                    body = body[:cut]
                if body:
                    task.streamed.append(body)
                    emit("token", body)
                    held = held[len(body):]
        finally:
            await stream.aclose()  # also when the hard stop cancels us: the connection and the slot go back
        if out is None:
            raise LLMBadOutput("the stream ended without a reply")
        if out.tool_calls and task.streamed and "tools" in kw:  # a client that marks no tool-call deltas
            task.streamed.clear()
            emit("replace", "")
        return out

    async def _final(self, task: _Task, *, purpose: str, reason: str | None, offer_tools: bool = False) -> str:
        """The last call: no tool offered; the model answers from what it has."""
        final = None if reason is None else P.stop_reason(task.lang, reason)
        msgs = self._messages(task, final=final, offer_tools=offer_tools)
        comp = await self._call(task, msgs, tools=offer_tools, purpose=purpose, step=len(task.rounds) + 1)
        if comp.text.strip():
            return comp.text.strip()
        raise _LLMFailed("no answer text in the final call" if comp.tool_calls else "empty answer")

    async def _checked(self, task: _Task, text: str) -> tuple[str, dict[str, Any]]:
        """The citation check; with CONVSEARCH_AGENT_STRICT=on a flawed answer is sent back once."""
        shown = task.shown
        check = check_citations(text, shown)
        repaired = False
        if not check.ok and shown and self.conf.strict is Switch.ON and \
                task.deadline.remaining() > MIN_ATTEMPT_S * 20:
            msgs = self._messages(task, offer_tools=False)
            msgs.append({"role": "assistant", "content": text})
            msgs.append({"role": "user", "content": P.repair_instruction(task.lang, check.problems(task.lang),
                                                                          sorted(shown))})
            try:
                comp = await self._call(task, msgs, tools=False, purpose="repair", step=len(task.rounds) + 1)
                if comp.text.strip():
                    text, repaired = comp.text.strip(), True
                    check = check_citations(text, shown)
                    task.notes.append("strict: the answer was sent back once for its citations")
            except _LLMFailed as exc:
                task.notes.append(f"strict: the repair call failed ({exc.reason}); the first answer is kept")
        return text, {"uncited_sentences": check.uncited_sentences, "unknown_citations": check.unknown,
                      "cites_nothing": check.cites_nothing, "repaired": repaired, "cited": check.cited}

    async def _degraded(self, task: _Task, emit: Emit | None, *, no_llm: bool = False) -> str:
        """The best results as a numbered list with a one-line note (the LLM failed, or there is none)."""
        if task.searches == 0 and task.deadline.remaining() > MIN_ATTEMPT_S * 20:  # memory alone is not enough
            raw = ToolCall("degraded", "web_search", "{}")
            t0 = time.perf_counter()
            st, _ = await self._search(task, 0, task.question, None, ["the question itself"], raw=raw)
            task.search_ms += (time.perf_counter() - t0) * 1000
            st = replace(st, query=task.question)
            task.steps.append(st)
            if st.error is None:
                task.searches += 1
            if emit is not None:
                emit("search", st)
        found = {n for st in task.steps for n in st.results}
        best = sorted(task.registry.values(), key=lambda x: (x.n not in found, x.n))[:task.top_k]  # this task's first
        if not best:
            return P.no_llm_note(task.lang, found=False) if no_llm else P.no_results_note(task.lang)
        task.listed = tuple(x.n for x in best)
        task.cited_so_far.update(task.listed)
        if no_llm:  # nothing failed: the note, and the sources once, as the answer's citations
            return P.no_llm_note(task.lang)
        lines = [P.degraded_note(task.lang)]
        for x in best:
            meta = ", ".join(v for v in (x.domain, x.date or "") if v)
            lines.append(f"[{x.n}] {x.title}" + (f" ({meta})" if meta else "") + (f" {x.url}" if x.url else ""))
        return "\n".join(lines)

    # --- memory ------------------------------------------------------------------------------------
    async def _load_memory(self, task: _Task, conv: Any) -> None:
        try:
            memory = await asyncio.to_thread(conv.load, self.settings)
        except HistoryUnavailable as exc:
            task.notes.append(f"{exc}; ran without the session's memory")
            return
        task.history = tuple(memory.window) if memory.window else task.history
        task.summary = memory.summary.text if memory.summary else None
        for r in memory.tasks:
            # keep the number the earlier answer used when it is free, so "[2]" in the window still means it
            free = r.n not in task.shown
            src = task.number(_source_key(r.url, r.id), lambda n, r=r, free=free: Source(
                r.n if free else n, r.id, r.title or r.id, r.url, domain_of(r.url), None, r.snippet, "memory"))
            if src not in task.memory:
                task.memory.append(src)
        if task.memory:
            task.notes.append(f"memory: {len(task.memory)} results cited earlier in the session")

    async def _remember(self, task: _Task, conv: Any, answer: Answer) -> None:
        """The question, the numbered results and the answer go into the session; its [n] mark them cited."""
        cites = [Citation(x.n, x.id, x.title, x.domain, x.date, x.snippet, x.url, False, 0.0, metadata=x.metadata)
                 for x in answer.sources]

        def write() -> None:
            conv.record_turn(task.question, cites, self.settings)
            conv.add({"role": "assistant", "content": answer.text}, settings=self.settings)

        try:
            await asyncio.to_thread(write)
        except HistoryUnavailable as exc:
            task.notes.append(f"{exc}; this answer was not stored")


# --- helpers --------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _llm_pool() -> Any:
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=8, thread_name_prefix="agent-llm")


@lru_cache(maxsize=1)
def _tool_schema() -> str:
    import json

    return json.dumps(openai_tools(), ensure_ascii=False)


def _tools() -> list[dict[str, Any]]:
    """The web_search tool definition (built once; each agent gets its own copy)."""
    import json

    return json.loads(_tool_schema())


def _as_completion(out: Any) -> Completion:
    if isinstance(out, Completion):
        return out
    if isinstance(out, str):  # a client of the text-only contract
        return Completion(text=out)
    raise LLMBadOutput(f"the LLM returned {type(out).__name__}, not a Completion")


@lru_cache(maxsize=4096)
def _tokens(text: str) -> int:
    return count_tokens(text)  # a task's prompts repeat the same messages: count each once


def _estimate(msgs: Sequence[dict[str, Any]]) -> int:
    """Prompt tokens as our tokenizer counts them (4 per message for the chat framing)."""
    n = 0
    for m in msgs:
        n += 4 + _tokens(str(m.get("content") or ""))
        for c in m.get("tool_calls") or ():
            n += 8 + _tokens(c["function"]["arguments"])
    return n


_RESULT_LINE_RE = re.compile(r"^\[\d+\] ")


def _shorten_results(reply: str, tokens: int) -> str:
    """A tool message with each snippet cut to ``tokens`` (titles kept)."""
    out = []
    for line in reply.split("\n"):
        if line.startswith(("<", "[")) and (_RESULT_LINE_RE.match(line) or line.startswith("<")):
            out.append(line)
        else:
            out.append(truncate_tokens(line, tokens) if tokens > 0 else "")
    return "\n".join(x for x in out if x)


def _truncate(msgs: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Last resort: cut the longest contents until the prompt fits."""
    msgs = [dict(m) for m in msgs]
    while _estimate(msgs) > budget:
        i = max(range(len(msgs)), key=lambda j: count_tokens(str(msgs[j].get("content") or "")))
        content = str(msgs[i].get("content") or "")
        n = count_tokens(content)
        if n <= 8:
            break
        msgs[i]["content"] = truncate_tokens(content, n // 2)
    return msgs


_PIECE_RE = re.compile(r"\[\d+\]|[A-Za-z0-9'’.,:;%$-]+\s*|\s+|.", re.DOTALL)


def _pieces(text: str, size: int = 4) -> Iterator[str]:
    """The answer in small pieces for streaming (a citation marker is never split)."""
    parts = _PIECE_RE.findall(text)
    for i in range(0, len(parts), size):
        yield "".join(parts[i:i + size])


def _run_sync(coro: Any) -> Any:
    """Run ``coro`` to completion from sync code, also when the caller is inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["v"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["e"] = exc

    t = threading.Thread(target=target, name="agent-ask")
    t.start()
    t.join()
    if "e" in box:
        raise box["e"]
    return box["v"]


__all__ = ["Agent"]
