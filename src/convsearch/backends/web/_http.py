"""What every web adapter shares: the HTTP client (httpx, async first with a sync twin), the error tree, rate
and Retry-After parsing, and the call loop (limiter → request → retry / cool / fail).

Errors: ``WebError`` (``UpstreamRateLimited``, ``UpstreamUnavailable``, ``UpstreamMalformed``,
``UpstreamRejected``, ``BreakerOpen``) and ``QueueTimeout``, the web branch of the one ``UpstreamError`` family
drawn in ``convsearch.errors`` beside the LLM's (re-exported here); all are ``BackendError``s, so the server
answers 502 and a fan-out keeps the other backends' results.

One call of ``search``: the breaker must allow it; the limiter grants a key and a slot (waiting in the queue if
every key is at its limit); the request goes out with what is left of the turn's deadline as its timeout; a 429
cools that key (Retry-After, X-RateLimit-Reset) and the call queues again (another key may be free); 5xx /
timeouts / malformed bodies retry after a jittered backoff while the deadline allows. Every decision is a trace
note (``infra.turn.note``), a counter in ``infra.ratelimit.STATS`` (→ /metrics), and, on the hits, metadata
(``key_index``, ``queued_ms``, ``retries``, ``breaker``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from ...errors import (
    BreakerOpen,
    ConfigError,
    InputError,
    UpstreamMalformed,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamUnavailable,
    WebError,
)
from ...infra import turn
from ...infra.deadline import MIN_ATTEMPT_S
from ...infra.ratelimit import STATS, CircuitBreaker, OutboundLimiter, QueueTimeout, WindowStore, backoff_s
from ...types import Hit
from ..base import Capabilities, Filters, Recency, hit_date

if TYPE_CHECKING:
    import httpx

    from ...secret import Secret


class _RedactKeys(logging.Filter):
    """httpx logs every request URL at INFO; SerpApi's key travels in the URL (``api_key=``): mask it."""

    _RE = re.compile(r"(?i)\b(api_key|key|token|access_token)=[^&\s\"']+")

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 — never break logging
            return True
        masked = self._RE.sub(lambda m: f"{m.group(1)}=***", text)
        if masked != text:
            record.msg, record.args = masked, ()
        return True


logging.getLogger("httpx").addFilter(_RedactKeys())


# --- settings helpers -----------------------------------------------------------------------------------

_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d*\.?\d*)\s*(s|sec|second|m|min|minute|h|hour)s?\s*$", re.I)
_UNIT_S = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}


def parse_rate(value: str, *, variable: str = "rate") -> tuple[int, float] | None:
    """``"100/min"`` → (100, 60.0); ``"100/6s"`` → (100, 6.0) (a scaled window, for benchmarks); ``"off"`` or
    ``""`` → None (no limit). Anything else is a ConfigError naming ``variable``."""
    v = (value or "").strip().lower()
    if v in ("", "off", "0", "none", "unlimited"):
        return None
    m = _RATE_RE.match(v)
    if not m or int(m.group(1)) < 1:
        raise ConfigError(f"{variable}={value!r} is not a rate; write e.g. 100/min, 10/s, 5000/hour or off")
    mult = float(m.group(2)) if m.group(2) else 1.0
    if mult <= 0:
        raise ConfigError(f"{variable}={value!r}: the window must be positive")
    return int(m.group(1)), mult * _UNIT_S[m.group(3).lower()]


def secrets_from(raw: Any, variable: str) -> tuple[Secret, ...]:
    """A comma list of keys (a str, or a Secret holding one) as Secrets that remember ``variable``."""
    from ...secret import Secret

    text = raw.reveal() if isinstance(raw, Secret) else str(raw or "")
    return tuple(Secret(variable, k.strip()) for k in text.split(",") if k.strip())


# --- Retry-After / X-RateLimit-Reset ------------------------------------------------------------------

def retry_after_s(headers: Any, *, now: float | None = None) -> float | None:
    """Seconds to wait according to ``Retry-After`` (seconds or an HTTP date) or ``X-RateLimit-Reset`` (seconds,
    or epoch seconds; a comma list per window, as Brave sends: the window whose ``X-RateLimit-Remaining`` is 0,
    else the shortest). None when neither header says."""
    now = time.time() if now is None else now
    ra = headers.get("retry-after")
    if ra:
        try:
            return max(0.0, float(ra))
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(ra).timestamp() - now)
            except (TypeError, ValueError, IndexError):
                pass
    reset = headers.get("x-ratelimit-reset")
    if not reset:
        return None
    try:
        resets = [float(x) for x in str(reset).split(",") if x.strip()]
    except ValueError:
        return None
    if not resets:
        return None
    remaining_raw = headers.get("x-ratelimit-remaining") or ""
    try:
        remaining = [float(x) for x in str(remaining_raw).split(",") if x.strip()]
    except ValueError:
        remaining = []
    spent = [r for r, left in zip(resets, remaining) if left <= 0]
    pick = spent[0] if spent else min(resets)
    return max(0.0, pick - now) if pick > 1e9 else pick  # epoch seconds vs seconds from now


# --- shared per-process state: one limiter and one breaker per provider and key set ---------------------

_SHARED_LOCK = threading.Lock()
_LIMITERS: dict[tuple[Any, ...], OutboundLimiter] = {}
_BREAKERS: dict[tuple[Any, ...], CircuitBreaker] = {}


def shared_limiter(provider: str, keys: Sequence[Secret], rate: tuple[int, float] | None, *, max_wait_s: float,
                   store: WindowStore | None = None, namespace: str = "convsearch:rl") -> OutboundLimiter:
    """The process's limiter for these keys (every backend instance, every tenant's pipeline shares it: the
    budget belongs to the key, not to the caller). No rate: a limiter that never waits but still rotates keys."""
    import hashlib

    digest = hashlib.sha256("\n".join(k.reveal() for k in keys).encode()).hexdigest()[:16]
    limit, window = rate if rate is not None else (1_000_000_000, 1.0)
    ident = (provider, digest, limit, window, max_wait_s, id(store) if store is not None else None, namespace)
    with _SHARED_LOCK:
        lim = _LIMITERS.get(ident)
        if lim is None:
            lim = _LIMITERS[ident] = OutboundLimiter(provider, len(keys), limit, window, max_wait_s=max_wait_s,
                                                     store=store, namespace=f"{namespace}:{digest}")
        return lim


def shared_breaker(provider: str, failures: int, cooldown_s: float, base_url: str = "") -> CircuitBreaker:
    """The process's breaker for one provider at one endpoint."""
    ident = (provider, base_url, failures, cooldown_s)
    with _SHARED_LOCK:
        b = _BREAKERS.get(ident)
        if b is None:
            b = _BREAKERS[ident] = CircuitBreaker(failures, cooldown_s)
        return b


def reset_shared_state() -> None:
    """Forget every shared limiter and breaker (tests: each starts from fresh budgets and closed breakers)."""
    with _SHARED_LOCK:
        _LIMITERS.clear()
        _BREAKERS.clear()


_SSL: Any = None


def ssl_context() -> Any:
    """One TLS context for every client of the process: building one (loading the CA bundle) costs ~20-35 ms,
    and an async client is made per event loop (a sync turn's own loop uses the sync client instead:
    ``fanout.ON_TURN_LOOP``)."""
    global _SSL
    with _SHARED_LOCK:
        if _SSL is None:
            import httpx

            _SSL = httpx.create_ssl_context()
        return _SSL


# --- the adapter base -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    json: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Per-backend call settings (from ``CONVSEARCH_WEB_*``)."""

    timeout_s: float = 5.0
    max_retries: int = 2
    max_wait_s: float = 5.0
    breaker_failures: int = 5
    breaker_cooldown_s: float = 30.0
    snippet_tokens: int = 120
    backoff_base_s: float = 0.1


_NATIVE_ORDER = (Recency.DAY, Recency.WEEK, Recency.MONTH, Recency.YEAR)


def wider_recency(rec: Recency, native: frozenset[Recency]) -> Recency | None:
    """The narrowest natively supported window at least as wide as ``rec`` (None when there is none)."""
    days = rec.days or 0
    for r in _NATIVE_ORDER:
        if r in native and (r.days or 0) >= days:
            return r
    return None


class WebBackend:
    """Base of the four adapters: subclasses give ``provider``, ``capabilities``, ``build(query, n, recency,
    key)`` and ``parse(payload, now, n)``; this class runs the call loop, sync and async."""

    provider = "web"
    name = "web"
    capabilities = Capabilities(remote=True, web=True, paid=True)
    max_count = 20

    def __init__(self, *, base_url: str, keys: Sequence[Secret] = (), rate: tuple[int, float] | None = None,
                 options: CallOptions | None = None, store: WindowStore | None = None,
                 limiter: OutboundLimiter | None = None, breaker: CircuitBreaker | None = None,
                 transport: httpx.BaseTransport | None = None,
                 async_transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.keys = tuple(keys)
        self.options = options or CallOptions()
        n_keys = max(1, len(self.keys))
        self.limiter = limiter or (shared_limiter(self.provider, self.keys, rate, max_wait_s=self.options.max_wait_s,
                                                  store=store) if self.keys else
                                   OutboundLimiter(self.provider, n_keys, *(rate or (1_000_000_000, 1.0)),
                                                   max_wait_s=self.options.max_wait_s, store=store))
        self.breaker = breaker or shared_breaker(self.name, self.options.breaker_failures,
                                                 self.options.breaker_cooldown_s, self.base_url)
        self._transport = transport
        self._async_transport = async_transport
        self._client: httpx.Client | None = None
        self._aclients: dict[int, tuple[Any, httpx.AsyncClient, Any]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, keys={len(self.keys)})"

    # --- what subclasses give -----
    def build(self, query: str, n: int, recency: Recency | None, key: str | None) -> Request:
        raise NotImplementedError

    def parse(self, payload: Any, now: datetime, n: int) -> list[Hit]:
        raise NotImplementedError

    def reject_hint(self, status: int) -> str:
        """What a 4xx most likely means for this provider (said in the error)."""
        if status in (401, 403):
            keys = f"CONVSEARCH_{self.provider.upper()}_API_KEYS"
            return f"check {keys}" if self.keys else ""
        return ""

    def native_recency(self, recency: Recency | None) -> tuple[Recency | None, date | None, str | None]:
        """(window sent upstream, oldest date to keep after, trace note) for a requested recency."""
        if recency is None or recency is Recency.NO_LIMIT:
            return None, None, None
        if recency in self.capabilities.recency:
            return recency, None, None
        wider = wider_recency(recency, self.capabilities.recency)
        since = recency.since(datetime.now(UTC).date())
        if wider is None:
            return None, since, f"{self.name}: recency {recency.value}: by date filter after the search"
        return wider, since, (f"{self.name}: recency {recency.value}: {wider.value} natively, "
                              f"then {recency.value} by date filter after the search")

    # --- HTTP clients -----
    def _sync_client(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(transport=self._transport, follow_redirects=False, verify=ssl_context(),
                                            headers={"Accept": "application/json"})
            return self._client

    async def _async_client(self) -> httpx.AsyncClient:
        """One AsyncClient per event loop (connections belong to their loop). A suspended async generator holds
        it: when the loop shuts down (``asyncio.run`` calls ``shutdown_asyncgens``) the generator is closed and
        closes the client, so no socket outlives its loop."""
        import httpx

        return await loop_client(self._aclients, self._lock, lambda: httpx.AsyncClient(
            transport=self._async_transport, follow_redirects=False, verify=ssl_context(),
            headers={"Accept": "application/json"}))

    def close(self) -> None:
        """Close the sync client; async clients close with their event loop (or with ``aclose``)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            held = self._aclients.pop(id(loop), None)
        if held is not None:
            await held[1].aclose()
        self.close()

    # --- the call -----
    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
               recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        call = _Call(self, query, top_k, recency, filters)
        if call.nothing_to_search:
            return []
        client = self._sync_client()
        while True:
            call.start()
            slot = self.limiter.acquire(call.wait_budget())
            req, timeout = call.request(slot)
            try:
                r = client.request(req.method, self.base_url + req.path, params=req.params or None, json=req.json,
                                   headers=req.headers, timeout=timeout)
                action = call.on_response(slot, r.status_code, r.headers, r.content)
            except Exception as exc:  # noqa: BLE001 — transport errors of any kind become one of ours
                action = call.on_exception(slot, exc)
            if action is not None and action[0] == "done":
                done: list[Hit] = action[1]
                return done
            if action is not None and action[1] > 0:
                time.sleep(action[1])

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        from ..fanout import ON_TURN_LOOP

        if ON_TURN_LOOP.get():  # a sync turn's throwaway loop: the pooled sync client outlives it, an async one not
            return await asyncio.to_thread(self.search, query, top_k=top_k, filters=filters, recency=recency)
        call = _Call(self, query, top_k, recency, filters)
        if call.nothing_to_search:
            return []
        client = await self._async_client()
        while True:
            call.start()
            slot = await self.limiter.aacquire(call.wait_budget())
            req, timeout = call.request(slot)
            try:
                r = await client.request(req.method, self.base_url + req.path, params=req.params or None,
                                         json=req.json, headers=req.headers, timeout=timeout)
                action = call.on_response(slot, r.status_code, r.headers, r.content)
            except Exception as exc:  # noqa: BLE001
                action = call.on_exception(slot, exc)
            if action is not None and action[0] == "done":
                done: list[Hit] = action[1]
                return done
            if action is not None and action[1] > 0:
                await asyncio.sleep(action[1])


async def loop_client(clients: dict[int, tuple[Any, httpx.AsyncClient, Any]], lock: threading.Lock,
                      make: Callable[[], httpx.AsyncClient]) -> httpx.AsyncClient:
    """The running event loop's client in ``clients`` (keyed by loop id, guarded by ``lock``), made by ``make``
    on the loop's first call. A suspended async generator holds it: when the loop shuts down (``asyncio.run``
    calls ``shutdown_asyncgens``) the generator is closed and closes the client, so no socket outlives its loop;
    entries of closed loops are dropped."""
    loop = asyncio.get_running_loop()
    with lock:
        held = clients.get(id(loop))
        if held is not None and held[0] is loop:
            return held[1]
        for gone in [k for k, (other, _, _) in clients.items() if other.is_closed()]:
            del clients[gone]  # their clients closed with their loops
        client = make()
        keeper = _keep_until_loop_ends(client)
        clients[id(loop)] = (loop, client, keeper)
    await keeper.__anext__()  # the loop's shutdown closes the generator, which closes the client
    return client


async def _keep_until_loop_ends(client: Any) -> Any:
    try:
        yield
    finally:
        await client.aclose()


class _Call:
    """The state of one search across its attempts; the sync and async loops share every decision here."""

    def __init__(self, backend: WebBackend, query: str, top_k: int, recency: Recency | Any,
                 filters: Filters | Any = None) -> None:
        from ...text import words

        if not isinstance(query, str):
            raise InputError("query must be a string")
        # filters the backend lacks natively are applied by compose; given directly, they are honoured here
        self.filters = Filters.of(filters)
        self.b = backend
        self.query = query.strip()
        self.nothing_to_search = not words(self.query)  # no word: no paid call, no hit
        self.n = max(1, min(int(top_k), backend.max_count))
        self.top_k = top_k
        rec = Recency.parse(recency)
        self.recency, self.since, rec_note = backend.native_recency(rec)
        if rec_note:
            turn.note(rec_note)
        self.deadline = turn.deadline()
        self.retries = 0
        self.rate_limited = 0
        self.started = False
        self.breaker_state = "closed"

    def start(self) -> None:
        if self.started:
            return
        ok, state = self.b.breaker.allow()
        self.breaker_state = state
        if not ok:
            STATS.count(self.b.name, "breaker_open")
            turn.note(f"{self.b.name}: breaker open, not called")
            raise BreakerOpen(self.b.name, f"circuit breaker open after {self.b.breaker.failures} consecutive "
                                           f"failures; next probe after {self.b.breaker.cooldown_s:g} s")
        if state == "half-open":
            turn.note(f"{self.b.name}: breaker half-open, probe call")
        self.started = True

    def wait_budget(self) -> float:
        left = self.deadline.remaining() - MIN_ATTEMPT_S
        if left <= 0:
            self._give_up_deadline()
        return left

    def _give_up_deadline(self) -> None:
        STATS.count(self.b.name, "deadline")
        turn.note(f"{self.b.name}: deadline reached, no new upstream call")
        self.b.breaker.release()
        raise UpstreamUnavailable(self.b.name, "the turn's deadline leaves no time for another call")

    def request(self, slot: Any) -> tuple[Request, float]:
        key = self.b.keys[slot.index].reveal() if self.b.keys else None
        timeout = min(self.b.options.timeout_s, max(MIN_ATTEMPT_S, self.deadline.remaining()))
        if self.deadline.expired():
            self._give_up_deadline()
        self.slot = slot
        self.request_time = datetime.now(UTC)
        return self.b.build(self.query, self.n, self.recency, key), timeout

    def _scrub(self, text: str) -> str:
        for k in self.b.keys:
            text = k.scrub(text)
        return text

    def on_response(self, slot: Any, status: int, headers: Any, body: bytes) -> tuple[str, Any] | None:
        b = self.b
        b.limiter.settle(slot)
        if status == 429:
            wait = retry_after_s(headers)
            return self._rate_limited(slot, wait, self._error_text(body) or "429 Too Many Requests")
        if status >= 500:
            return self._retry(UpstreamUnavailable(b.name, f"HTTP {status}{self._brief(body)}", status=status))
        if status >= 400:
            b.breaker.release()
            STATS.count(b.name, "rejected")
            hint = b.reject_hint(status)
            raise UpstreamRejected(b.name, f"HTTP {status}: {self._error_text(body) or 'rejected'}"
                                           + (f" ({hint})" if hint else ""), status=status)
        try:
            payload = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._retry(UpstreamMalformed(b.name, f"the answer is not JSON{self._brief(body)}", status=status))
        try:
            hits = b.parse(payload, self.request_time, self.n)
        except UpstreamRejected:
            b.breaker.release()
            STATS.count(b.name, "rejected")
            raise
        except UpstreamRateLimited as exc:
            return self._rate_limited(slot, exc.retry_after, str(exc))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return self._retry(UpstreamMalformed(b.name, f"unexpected JSON shape ({type(exc).__name__}: {exc})"))
        b.breaker.success()
        STATS.count(b.name, "ok")
        if self.since is not None:
            hits = [h for h in hits if (d := hit_date(h)) is not None and d >= self.since]
        if self.filters is not None:
            hits = [h for h in hits if self.filters.matches(h)]
        seen: set[str] = set()
        unique: list[Hit] = []
        for h in hits:  # one page once (canonical URL)
            if h.id not in seen:
                seen.add(h.id)
                unique.append(h)
        hits = unique
        extra = {"key_index": slot.index, "queued_ms": slot.queued_ms, "retries": self.retries,
                 "breaker": self.breaker_state}
        out = []
        for r, h in enumerate(hits[: self.top_k], start=1):
            md = {**h.metadata, **extra, "rank": r}
            out.append(Hit(h.id, h.title, h.text, h.score, h.url, h.date, h.source, r, md))
        turn.note(f"{b.name}: {len(out)} hits, key #{slot.index}, queued {slot.queued_ms:g} ms, "
                  f"{self.retries} retr{'y' if self.retries == 1 else 'ies'}, breaker {self.breaker_state}")
        return "done", out

    def on_exception(self, slot: Any, exc: Exception) -> tuple[str, Any] | None:
        import httpx

        self.b.limiter.settle(slot)
        if isinstance(exc, WebError):
            raise exc
        if isinstance(exc, httpx.TimeoutException):
            return self._retry(UpstreamUnavailable(self.b.name, f"timed out ({type(exc).__name__})"))
        if isinstance(exc, httpx.TransportError):
            return self._retry(UpstreamUnavailable(self.b.name, f"unreachable at {self.b.base_url} "
                                                                f"({type(exc).__name__})"))
        raise exc

    def _rate_limited(self, slot: Any, wait: float | None, text: str) -> tuple[str, float]:
        b = self.b
        cool = wait if wait is not None else 1.0
        b.limiter.cool(slot.index, cool)
        STATS.count(b.name, "upstream_429")
        self.rate_limited += 1
        turn.note(f"{b.name}: upstream 429 on key #{slot.index}, key cooled {cool:g} s")
        if self.rate_limited > len(b.keys) + b.options.max_retries:
            b.breaker.release()
            raise UpstreamRateLimited(b.name, self._scrub(text), status=429, retry_after=wait)
        self.retries += 1
        return "retry", 0.0  # the limiter's queue does the waiting (another key may be free now)

    def _retry(self, err: WebError) -> tuple[str, float]:
        b = self.b
        b.breaker.failure()
        STATS.count(b.name, "failure")
        pause = backoff_s(self.retries, base_s=b.options.backoff_base_s)
        if self.retries >= b.options.max_retries or self.deadline.remaining() <= pause + MIN_ATTEMPT_S * 2:
            why = "no retries left" if self.retries >= b.options.max_retries else "the deadline allows no retry"
            turn.note(f"{b.name}: failed after {self.retries} retr{'y' if self.retries == 1 else 'ies'} "
                      f"({why}): {err}")
            raise err
        if b.breaker.state == "open":
            turn.note(f"{b.name}: breaker opened: {err}")
            raise err
        self.retries += 1
        STATS.count(b.name, "retry")
        turn.note(f"{b.name}: retry {self.retries} in {pause * 1000:.0f} ms after {err}")
        return "retry", pause

    @staticmethod
    def _brief(body: bytes) -> str:
        text = body[:200].decode("utf-8", "replace").strip()
        if text.lower().startswith(("<!doctype", "<html")):
            return " (an HTML page)"
        return ""

    def _error_text(self, body: bytes) -> str:
        try:
            js = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._brief(body).strip(" ()")
        return self._scrub(error_message(js))[:300]


def error_message(js: Any) -> str:
    """The human text of a provider's error body (Tavily ``detail.error``, Brave ``error.detail``, SerpApi
    ``error``, or a bare string)."""
    if isinstance(js, str):
        return js
    if not isinstance(js, dict):
        return ""
    for k in ("detail", "error", "message"):
        v = js.get(k)
        if isinstance(v, str):
            return v
        if isinstance(v, dict):
            inner = error_message(v)
            if inner:
                return inner
    return ""


def ceil_s(x: float) -> int:
    return max(1, math.ceil(x))


__all__ = ["BreakerOpen", "CallOptions", "QueueTimeout", "Request", "UpstreamMalformed", "UpstreamRateLimited",
           "UpstreamRejected", "UpstreamUnavailable", "WebBackend", "WebError", "error_message", "parse_rate",
           "reset_shared_state", "retry_after_s", "secrets_from", "shared_breaker", "shared_limiter",
           "wider_recency"]
