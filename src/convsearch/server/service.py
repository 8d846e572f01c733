"""The operations the HTTP API and the MCP tools share, per tenant: search, rewrite, session messages.

Tenancy is structural: each tenant has its own rewriter (and so its own LLM rewrite cache), its own
response cache and its own token bucket, and every history read or write is scoped by its name
(tenant → agent → session). Nothing here takes a tenant from the request body: the caller passes the one
its API key resolved to.

Blocking work (the pipeline, the history store) runs in a worker thread under the request deadline
(``CONVSEARCH_DEADLINE_S``); past it the caller gets DeadlineExceeded (504) at once.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from .. import __version__
from ..backends.base import SearchBackend
from ..backends.recency import RecencyFilter, since
from ..config import Settings
from ..errors import ConvsearchError, DeadlineExceeded, IndexMissingError, InputError, RateLimited
from ..infra.ratelimit import RateLimiter, TokenBucketLimiter
from ..pipeline import plan_queries, search_with_context, validate_query
from ..rewrite import default_variant_maker, get_rewriter
from ..rewrite.base import Passthrough, Rewriter
from ..rewrite.rules import RuleRewriter
from ..rewrite.cache import LRUCache, NoCache
from ..window import history_window, to_messages
from . import models as m
from .auth import KeyRing, Tenant
from .errors import InvalidField
from .metrics import Metrics

log = logging.getLogger("convsearch.server")
T = TypeVar("T")


@dataclass
class TenantState:
    """What one tenant owns in this process."""

    name: str
    rewriter: Rewriter
    cache: Any  # rewrite.cache.Cache: get/put
    variant_maker: Callable[..., list[str]] | None = None  # LLM variants (own cache), when configured


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
        self.keys = keys if keys is not None else KeyRing.from_settings(settings)
        self.limiter: RateLimiter = limiter if limiter is not None else TokenBucketLimiter(
            settings.rate_limit, settings.rate_burst, rates=self.keys.rates())
        self.metrics = metrics or Metrics()
        self._rewriter_factory = rewriter_factory or (lambda s: get_rewriter(s.rewriter, s))
        self._today = today
        self._backend = backend
        self._store = store
        self._lock = threading.Lock()
        self._tenants: dict[str, TenantState] = {}
        # per-request settings for the option combinations a request can pick (mode × variants)
        self._turn_settings = {(mode, v): replace(settings, mode=mode, max_variants=settings.max_variants if v else 0)
                               for mode in ("rewrite", "dual") for v in (True, False)}

    # --- shared resources -------------------------------------------------------------------------
    def backend(self) -> SearchBackend:
        """The search backend (the embedded index, opened on first use; IndexMissingError until it exists)."""
        if self._backend is None:
            with self._lock:
                if self._backend is None:
                    from ..backends.registry import open_backend

                    self._backend = open_backend(self.settings)
        return self._backend

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
                    cache = LRUCache(s.cache_size, ttl_s=s.cache_ttl_s) if s.cache_size else NoCache()
                    # default_variant_maker is cached per Settings; __wrapped__ builds one for this tenant alone
                    variants = default_variant_maker.__wrapped__(s)
                    state = self._tenants[t.name] = TenantState(t.name, self._rewriter_factory(s), cache, variants)
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
        anyway. Anything that may wait (LLM, history database, embeddings, a remote backend) goes to a
        thread under the deadline. ``CONVSEARCH_INLINE_TURNS=off`` sends every turn to a thread."""
        if self.settings.inline_turns == "off" or session_id:
            return False
        state = self.tenant(t)
        if state.variant_maker is not None or not isinstance(state.rewriter, (RuleRewriter, Passthrough)):
            return False
        if not search:
            return True
        from ..backends.local import LocalIndex

        b = self._backend
        return isinstance(b, LocalIndex) and b.embedder is None

    # --- operations -------------------------------------------------------------------------------
    def search(self, t: Tenant, req: m.SearchRequest) -> m.SearchOut:
        """One turn for tenant ``t`` (cached per tenant when the request carries no session)."""
        q = _checked_query(req.query, self.settings)
        state = self.tenant(t)
        key = None if req.session_id else _cache_key("search", req, self._today())
        if key is not None:
            hit = state.cache.get(key)
            self.metrics.cache.labels("search", "hit" if hit is not None else "miss").inc()
            if hit is not None:
                return hit.model_copy(update={"cached": True})
        s = self._turn_settings[(req.mode, req.variants)]
        backend = self.backend()
        oldest = since(req.recency, self._today())
        if oldest is not None:
            backend = RecencyFilter(backend, oldest)
        session = self._conversation(t, req.session_id, req.agent, turn_id=req.turn_id) if req.session_id else None
        r = search_with_context(q, m.message_dicts(req.messages), backend=backend, rewriter=state.rewriter,
                                settings=s, topic=req.topic, top_k=req.top_k,
                                filters={"lang": req.lang} if req.lang else None, today=self._today(),
                                session=session, variant_maker=_variants(state, req.variants))
        self.metrics.rewrites.labels(r.rewrite.method, str(r.rewrite.fell_back).lower()).inc()
        out = m.search_out(r, session_id=req.session_id)
        if key is not None:
            state.cache.put(key, out)
        return out

    def rewrite(self, t: Tenant, req: m.RewriteRequest) -> m.RewriteOut:
        """The standalone query for a follow-up (nothing searched or stored)."""
        q = _checked_query(req.query, self.settings)
        state = self.tenant(t)
        key = None if req.session_id else _cache_key("rewrite", req, self._today())
        if key is not None:
            hit = state.cache.get(key)
            self.metrics.cache.labels("rewrite", "hit" if hit is not None else "miss").inc()
            if hit is not None:
                return hit.model_copy(update={"cached": True})
        s = self._turn_settings[("rewrite", req.variants)]
        history = history_window(to_messages(m.message_dicts(req.messages)), s.window)
        if req.session_id:
            from ..history.session import history_for_turn

            _, history, _ = history_for_turn(self._conversation(t, req.session_id, req.agent), history, s)
        decision, rw, variants, queries = plan_queries(q, history, rewriter=state.rewriter, settings=s,
                                                       topic=req.topic, variant_maker=_variants(state, req.variants))
        self.metrics.rewrites.labels(rw.method, str(rw.fell_back).lower()).inc()
        out = m.RewriteOut(query=q, standalone_query=rw.rewritten, rewrite=m.rewrite_info(rw),
                           decision=m.decision_info(decision), variants=list(variants), queries=list(queries),
                           session_id=req.session_id)
        if key is not None:
            state.cache.put(key, out)
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
            n = len(b) if hasattr(b, "__len__") else None  # type: ignore[arg-type]
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
        from ..rewrite.rules import RuleRewriter
        from ..types import Message

        rules = RuleRewriter()
        for query, before in (("价格呢？", "AnySearch 支持哪些检索方式？"), ("When did it launch?", "Who founded SpaceX?")):
            plan_queries(query, (Message("user", before),), rewriter=rules, settings=self.settings)
        try:
            self.backend().search("warm up", top_k=1)
        except ConvsearchError as exc:  # no index yet: /healthz says so
            log.warning("warm-up: %s", exc)

    def close(self) -> None:
        for state in self._tenants.values():
            close = getattr(state.rewriter, "close", None)
            if callable(close):
                close()
        store, self._store = self._store, None
        if store is not None and hasattr(store, "close"):
            store.close()

    # --- helpers ----------------------------------------------------------------------------------
    def _conversation(self, t: Tenant, session_id: str, agent: str, *, turn_id: str | None = None) -> Any:
        from ..history import Conversation, Scope

        try:
            scope = Scope(t.name, agent, session_id)
        except InputError as exc:
            raise InvalidField("session_id" if "session" in str(exc) else "agent", str(exc)) from exc
        return Conversation(self.store(), scope, turn_id=turn_id)


def _no_variants(query: str, *, max_variants: int = 0) -> list[str]:
    return []


def _variants(state: TenantState, wanted: bool) -> Callable[..., list[str]] | None:
    """The tenant's variant maker (None: the heuristic table), or none at all when the request says so."""
    return state.variant_maker if wanted else _no_variants


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


__all__ = ["Service", "TenantState"]
