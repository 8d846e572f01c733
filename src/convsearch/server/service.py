"""The operations the HTTP API and the MCP tools share, per tenant: search, rewrite, session messages.

Tenancy is structural: each tenant has its own ``Pipeline`` (its own rewriter, LLM variants and HyDE writer,
so its own LLM clients and caches), its own response cache and its own token bucket, and every history read
or write is scoped by its name (tenant → agent → session). The backends are the one shared part (the index
is the data every tenant searches); each tenant's Pipeline is closed on shutdown. Nothing here takes a tenant
from the request body: the caller passes the one its API key resolved to.

Blocking work (the pipeline, the history store) runs in a worker thread under the request deadline
(``CONVSEARCH_DEADLINE_S``); past it the caller gets DeadlineExceeded (504) at once.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sized
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from .. import __version__
from ..backends.base import Filters, SearchBackend
from ..infra.turn import turn
from ..config import Settings
from ..errors import ConvsearchError, DeadlineExceeded, IndexMissingError, InputError, RateLimited
from ..infra.cache import CacheSettings, MemoryCache, NullCache, TTLCache
from ..infra.deadline import Deadline
from ..infra.ratelimit import RateLimiter, TokenBucketLimiter
from ..pipeline import Pipeline, TurnRequest, validate_query
from ..rewrite import get_rewriter, make_hyde, make_variant_maker
from ..rewrite.base import Rewriter
from . import models as m
from .auth import KeyRing, Tenant
from .settings import InlineTurns, ServerSettings
from .errors import InvalidField
from .metrics import Metrics

log = logging.getLogger("convsearch.server")
_EMBEDDED_BACKENDS = frozenset({"local", "memory", "milvus"})  # what a warm-up search may touch
T = TypeVar("T")

# The fan-out stops waiting for late backends this long before the request's deadline, so that the others'
# results (a partial answer) still go out rather than a 504; never more than half the budget.
FINISH_RESERVE_S = 0.25


@dataclass
class TenantState:
    """What one tenant owns in this process: its Pipeline (rewriter, variants, HyDE) and its response cache."""

    name: str
    pipeline: Pipeline
    cache: TTLCache  # namespaces "search" and "rewrite"

    @property
    def rewriter(self) -> Rewriter:
        return self.pipeline.rewriter

    @property
    def variant_maker(self) -> Callable[..., list[str]] | None:
        return self.pipeline.variant_maker


class Service:
    """Search, rewrite and session messages for tenants, over one backend and one history store.

    ``backend`` and ``store`` default to the embedded index and the history store of ``settings`` (opened on
    first use); ``rewriter_factory(settings)`` builds each tenant's rewriter (default: ``settings.rewriter``).
    """

    def __init__(self, settings: Settings, *, backend: SearchBackend | None = None, store: Any = None,
                 keys: KeyRing | None = None, limiter: RateLimiter | None = None, metrics: Metrics | None = None,
                 rewriter_factory: Callable[[Settings], Rewriter] | None = None,
                 today: Callable[[], date] = date.today) -> None:
        self.settings = settings
        self.server = ServerSettings.of(settings)
        self.keys = keys if keys is not None else KeyRing.from_settings(settings)
        self.limiter: RateLimiter = limiter if limiter is not None else TokenBucketLimiter(
            self.server.rate_limit, self.server.rate_burst, rates=self.keys.rates())
        self.metrics = metrics or Metrics()
        self._rewriter_factory = rewriter_factory or (lambda s: get_rewriter(s.rewriter, s))
        self._today = today
        self._backend = backend
        self._owns_backend = backend is None
        self._store = store
        self._owns_store = store is None  # a store the caller passed in is the caller's to close, and is kept
        self._lock = threading.Lock()
        self._tenants: dict[str, TenantState] = {}

    # --- shared resources -------------------------------------------------------------------------
    def backend(self) -> SearchBackend:
        """The search backend (the embedded index, opened on first use; IndexMissingError until it exists)."""
        if self._backend is None:
            with self._lock:
                if self._backend is None:
                    from ..backends.registry import open_backend

                    self._backend = open_backend(self.settings)
        return self._backend

    def backend_names(self) -> list[str]:
        """The names a request's ``backends`` may use: this server's backends (CONVSEARCH_BACKENDS until the
        index can be opened)."""
        from ..backends.fanout import FanOut
        from ..backends.registry import parse_names

        try:
            b = self.backend()
        except ConvsearchError:
            return parse_names(self.settings.backends)
        return [x.name for x in (b.backends if isinstance(b, FanOut) else (b,))]

    def store(self) -> Any:
        """The history store (``CONVSEARCH_DB_URL``, else SQLite under the data dir), opened on first use."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    from ..history import open_store

                    self._store = open_store(self.settings)
        return self._store

    def tenant(self, t: Tenant) -> TenantState:
        state = self._tenants.get(t.name)
        if state is None:
            with self._lock:
                state = self._tenants.get(t.name)
                if state is None:
                    s = self.settings
                    c = CacheSettings.of(s)
                    cache: TTLCache = MemoryCache(c.size, ttl_s=c.ttl_s) if c.size else NullCache()
                    rw, vm, hy = self._rewriter_factory(s), make_variant_maker(s), make_hyde(s)
                    # the tenant's own parts (closed with it); the backends are the service's, shared
                    pipeline = Pipeline(self.backend, settings=s, rewriter=rw, variant_maker=vm, hyde=hy,
                                        owns=(rw, vm, hy))
                    state = self._tenants[t.name] = TenantState(t.name, pipeline, cache)
        return state

    def admit(self, t: Tenant) -> None:
        """Spend one request of the tenant's rate; RateLimited (429) when its bucket is empty."""
        a = self.limiter.acquire(t.name)
        if not a.allowed:
            self.metrics.rate_limited.inc()
            raise RateLimited(f"rate limit exceeded; retry in {a.retry_after:.2f}s", a.retry_after)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker thread under the request deadline (504 past it)."""
        try:
            with anyio.fail_after(self.settings.deadline_s):
                return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
        except TimeoutError as exc:
            raise DeadlineExceeded(f"the request took longer than {self.settings.deadline_s:g}s") from exc

    async def asearch(self, t: Tenant, req: m.SearchRequest) -> m.SearchOut:
        """``search`` on the event loop when the turn cannot wait on I/O (see ``inline``), else in a thread
        under the deadline."""
        if self.inline(t, req.session_id, search=True):
            return self.search(t, req)
        return await self.run(self.search, t, req)

    async def arewrite(self, t: Tenant, req: m.RewriteRequest) -> m.RewriteOut:
        if self.inline(t, req.session_id, search=False):
            return self.rewrite(t, req)
        return await self.run(self.rewrite, t, req)

    def inline(self, t: Tenant, session_id: str | None, *, search: bool) -> bool:
        """Whether a turn is pure CPU work of about a millisecond: rule (or pass-through) rewriter, heuristic
        variants, no stored session, and for a search the embedded BM25 index without dense vectors. Such a
        turn runs on the event loop: a worker thread would add its hand-off and GIL ping-pong (~40% of the
        throughput on 2 cores, docs/BENCHMARKS_SERVE.md) and buy nothing, since the GIL serialises the work
        anyway. Anything that may wait (LLM, history database, embeddings, a remote backend or reranker) goes to a
        thread under the deadline. ``CONVSEARCH_INLINE_TURNS=off`` sends every turn to a thread."""
        if self.server.inline_turns is InlineTurns.OFF or session_id:
            return False
        state = self.tenant(t)
        if state.variant_maker is not None or getattr(state.rewriter, "cost", "io") != "pure":
            return False  # (the rule rewriter embeds to break a tie where the embedder is installed: "compute")
        if not search:
            return True
        from ..backends.local import LocalIndex

        b = self._backend
        return (isinstance(b, LocalIndex) and b.embedder is None and state.pipeline.hyde is None
                and not state.pipeline.reranker.remote)  # a rerank server is waited on

    # --- operations -------------------------------------------------------------------------------
    def search(self, t: Tenant, req: m.SearchRequest) -> m.SearchOut:
        """One turn for tenant ``t`` (cached per tenant when the request carries no session)."""
        q = _checked_query(req.query, self.settings)
        state = self.tenant(t)
        # a time-sensitive question is never answered from the response cache (yesterday's weather is wrong today)
        key = None if req.session_id or _time_sensitive(q) else _cache_key("search", req, self._today())
        if key is not None:
            hit = state.cache.get("search", key)
            self.metrics.cache.labels("search", "hit" if hit is not None else "miss").inc()
            if hit is not None:
                return hit.model_copy(update={"cached": True})
        session = self._conversation(t, req.session_id, req.agent, turn_id=req.turn_id) if req.session_id else None
        try:
            turn_req = TurnRequest(q, m.message_dicts(req.messages), topic=req.topic, top_k=req.top_k,
                                   filters=Filters(lang=req.lang) if req.lang else None,
                                   # not given (rather than no_limit): the pipeline may default it
                                   recency=req.recency if "recency" in req.model_fields_set else None,
                                   backends=req.backends, session=session, today=self._today(), mode=req.mode,
                                   max_variants=None if req.variants else 0, deadline=self._turn_deadline())
            with turn(tenant=t, agent=req.agent):  # the web cache's namespace
                r = state.pipeline.search(turn_req)
        except InputError as exc:
            if req.backends and "backend" in str(exc):
                raise InvalidField("backends", str(exc)) from exc
            raise
        self.metrics.rewrites.labels(r.rewrite.method, str(r.rewrite.fell_back).lower()).inc()
        out = m.search_out(r, session_id=req.session_id)
        if key is not None and not out.partial:  # a partial answer is not kept: the next turn may get it all
            state.cache.set("search", key, out)
        return out

    def rewrite(self, t: Tenant, req: m.RewriteRequest) -> m.RewriteOut:
        """The standalone query for a follow-up (nothing searched or stored)."""
        q = _checked_query(req.query, self.settings)
        state = self.tenant(t)
        key = None if req.session_id else _cache_key("rewrite", req, self._today())
        if key is not None:
            hit = state.cache.get("rewrite", key)
            self.metrics.cache.labels("rewrite", "hit" if hit is not None else "miss").inc()
            if hit is not None:
                return hit.model_copy(update={"cached": True})
        conv = self._conversation(t, req.session_id, req.agent) if req.session_id else None
        plan = state.pipeline.plan(q, m.message_dicts(req.messages), topic=req.topic, session=conv, mode="rewrite",
                                   max_variants=None if req.variants else 0)
        rw = plan.rewrite
        self.metrics.rewrites.labels(rw.method, str(rw.fell_back).lower()).inc()
        out = m.RewriteOut(query=q, standalone_query=rw.rewritten, rewrite=m.rewrite_info(rw),
                           decision=m.decision_info(plan.decision, plan.facts), variants=list(plan.variants),
                           queries=list(plan.queries), session_id=req.session_id)
        if key is not None:
            state.cache.set("rewrite", key, out)
        return out

    def add_messages(self, t: Tenant, session_id: str, req: m.MessagesRequest) -> m.MessagesOut:
        """Append messages to a stored session; an assistant reply's [n] marks those results as cited."""
        conv = self._conversation(t, session_id, req.agent)
        rows = [conv.add(d, message_id=msg.id, settings=self.settings)
                for msg, d in zip(req.messages, m.message_dicts(req.messages))]
        return m.MessagesOut(session_id=session_id, agent=req.agent, messages=[_stored(r) for r in rows])

    def get_messages(self, t: Tenant, session_id: str, agent: str, limit: int | None) -> m.MessagesOut:
        """A stored session's messages, oldest first (the last ``limit``); an unknown session has none."""
        conv = self._conversation(t, session_id, agent)
        rows = conv.store.messages(conv.scope, limit=limit)
        summary = conv.store.summary(conv.scope)
        return m.MessagesOut(session_id=session_id, agent=agent, messages=[_stored(r) for r in rows],
                             summary=summary.text if summary else None)

    def health(self) -> m.Health:
        try:
            b = self.backend()
            n = len(b) if isinstance(b, Sized) else None
            index = m.IndexHealth(status="ok", documents=n)
        except IndexMissingError:
            index = m.IndexHealth(status="missing", detail="no index yet: run `convsearch index`")
        except ConvsearchError as exc:
            log.warning("health: backend unavailable: %s", exc)
            index = m.IndexHealth(status="error", detail=type(exc).__name__)
        return m.Health(status="ok" if index.status == "ok" else "degraded", version=__version__,
                        auth="open" if self.keys.open else "keys", index=index)

    def warm_up(self) -> None:
        """Load what the first turns would (dictionaries, stemmer, the index) before any request waits on it."""
        from ..backends.registry import parse_names
        from ..warmup import warm_up

        warm_up(self.settings)
        if not set(parse_names(self.settings.backends)) <= _EMBEDDED_BACKENDS:
            return  # a web backend: a warm-up search would be a paid query at every start
        try:
            self.backend().search("warm up", top_k=1)
        except ConvsearchError as exc:  # no index yet: /healthz says so
            log.warning("warm-up: %s", exc)

    def close(self) -> None:
        """Close every tenant's Pipeline (its LLM clients), then the backends and the store this service opened."""
        answers = getattr(self, "_answers", None)  # the agents' LLM client (server/answer.py)
        if answers is not None:
            answers.close()
        tenants, self._tenants = list(self._tenants.values()), {}
        for state in tenants:
            try:
                state.pipeline.close()
            except Exception as exc:  # noqa: BLE001 - one tenant's client must not keep the rest open
                log.warning("closing tenant %s: %s", state.name, exc)
        backend, self._backend = (self._backend, None) if self._owns_backend else (None, self._backend)
        if backend is not None:
            backend.close()
        store, self._store = (self._store, None) if self._owns_store else (None, self._store)
        if store is not None:
            store.close()

    # --- helpers ----------------------------------------------------------------------------------
    def _turn_deadline(self) -> Deadline:
        budget = self.settings.deadline_s
        return Deadline(budget - min(FINISH_RESERVE_S, budget / 2))

    def _conversation(self, t: Tenant, session_id: str, agent: str, *, turn_id: str | None = None) -> Any:
        from ..history import Conversation, Scope

        try:
            scope = Scope(t.name, agent, session_id)
        except InputError as exc:
            raise InvalidField("session_id" if "session" in str(exc) else "agent", str(exc)) from exc
        return Conversation(self.store(), scope, turn_id=turn_id)


def _checked_query(query: str, settings: Settings) -> str:
    try:
        return validate_query(query, max_chars=settings.max_query_chars)
    except InputError as exc:
        raise InvalidField("query", str(exc)) from exc


def _cache_key(kind: str, req: Any, today: date) -> str:
    """Everything that shapes the answer (today's date too: recency and staleness depend on it)."""
    return json.dumps([kind, today.isoformat(), req.model_dump(exclude={"turn_id"})], ensure_ascii=False,
                      sort_keys=True, default=str)


def _stored(r: Any) -> m.StoredMessageOut:
    return m.StoredMessageOut(id=r.id, seq=r.seq, role=r.role, content=r.content, kind=r.kind, created_at=r.created_at)


def _time_sensitive(query: str) -> bool:
    from ..timesense import time_sensitive

    return time_sensitive(query) is not None


__all__ = ["Service", "TenantState"]
