"""A replay server for the web search providers, on loopback (stdlib only): one provider per server.

It speaks the request shape of each provider the web adapters call, checks it the way the real API does, and
answers from ``web_pages.json`` (pages written for this project, zh and en) in that provider's documented
response shape:

==========  =====================================  ===========================================  ==============
provider    request                                auth                                         bad request
==========  =====================================  ===========================================  ==============
tavily      ``POST /search`` (JSON body)           ``Authorization: Bearer KEY`` or body key    400 / 401
brave       ``GET /res/v1/web/search``             ``X-Subscription-Token`` header              422 / 401
serpapi     ``GET /search?engine=google|bing``     ``api_key`` query parameter                  400 / 401
searxng     ``GET /search?format=json``            none (403 when the JSON format is disabled)  400
bocha       ``POST /v1/web-search`` (JSON body)    ``Authorization: Bearer KEY``                400 / 401
==========  =====================================  ===========================================  ==============

Dates are rendered as each provider gives them, relative to the server's ``now``: Tavily's ``published_date``
(RFC 2822, news topic only), Brave's ``age`` ("3 days ago", "November 5, 2026") and ``page_age`` (ISO), SerpApi's
``date`` ("3 days ago", "3 天前", "Nov 5, 2026", "2026年11月5日"), SearXNG's ``publishedDate`` (ISO or null),
Bocha's ``datePublished`` (ISO in Beijing time, +08:00). Recency parameters (``time_range``, ``freshness``,
``tbs=qdr:…``) filter the pages by age.

Faults are scripted first in, first out (``push``): a 429 with the provider's own headers, a 5xx, a slow
answer, malformed JSON, an HTML error page, empty results, SerpApi's 200-with-``error``. ``limit=(n, window_s)``
enforces n requests per sliding window per key and answers 429 beyond it (the load benchmark's upstream).

Example::

    with WebReplayServer("brave", keys=["k1"]) as srv:
        srv.push(Fault.rate_limited(retry_after=1))
        ...  # point CONVSEARCH_BRAVE_BASE_URL at srv.base_url
        srv.requests[0]["params"]["q"]
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ._loopback import LoopbackServer, QuietHandler

PROVIDERS = ("tavily", "brave", "serpapi", "searxng", "bocha")
_BEIJING = timezone(timedelta(hours=8))
_RECENCY_H = {"day": 24, "week": 24 * 7, "month": 24 * 31, "year": 24 * 366}
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    content: str
    lang: str
    age_h: float | None


def load_pages() -> tuple[Page, ...]:
    """The bundled pages (``web_pages.json``)."""
    raw = json.loads(resources.files("convsearch.testing").joinpath("web_pages.json").read_text("utf-8"))
    return tuple(Page(p["url"], p["title"], p["content"], p["lang"], p["age_h"]) for p in raw["pages"])


@dataclass(frozen=True)
class Fault:
    """One scripted answer in place of a normal one. ``kind``: rate_limited | status | slow | malformed | html |
    empty | serpapi_error | payload. ``delay_s`` delays any of them (``slow`` then answers normally)."""

    kind: str
    status: int = 200
    delay_s: float = 0.0
    retry_after: float | None = None
    message: str = ""
    body: Any = None

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1.0) -> Fault:
        """A 429 with the provider's rate-limit headers (Retry-After / X-RateLimit-Reset …)."""
        return cls("rate_limited", 429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500, *, delay_s: float = 0.0) -> Fault:
        return cls("status", status, delay_s=delay_s)

    @classmethod
    def slow(cls, delay_s: float) -> Fault:
        return cls("slow", 200, delay_s=delay_s)

    @classmethod
    def malformed(cls) -> Fault:
        return cls("malformed")

    @classmethod
    def html(cls, status: int = 502) -> Fault:
        """An HTML error page (what a proxy or load balancer in front of the API answers)."""
        return cls("html", status)

    @classmethod
    def empty(cls) -> Fault:
        return cls("empty")

    @classmethod
    def serpapi_error(cls, message: str = "Google hasn't returned any results for this query.",
                      status: int = 200) -> Fault:
        """SerpApi's error shape ``{"error": …}`` (status 200 for an empty search, 429 for a spent quota)."""
        return cls("serpapi_error", status, message=message)

    @classmethod
    def payload(cls, body: Any, status: int = 200) -> Fault:
        """This JSON ``body`` with ``status`` (e.g. Bocha's ``{"code": 403, "message": …}`` inside a 200)."""
        return cls("payload", status, body=body)

    def after(self, delay_s: float) -> Fault:
        return replace(self, delay_s=delay_s)


class _Reject(Exception):
    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


@dataclass
class _State:
    queue: deque[Fault] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    windows: dict[str, deque[float]] = field(default_factory=dict)
    served: dict[int, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    peers: set[tuple[str, int]] = field(default_factory=set)  # client (host, port): one per TCP connection
    lock: threading.Lock = field(default_factory=threading.Lock)


class WebReplayServer(LoopbackServer):
    """One provider's replay server; ``with`` starts and stops it. ``keys``: the valid keys (none for SearXNG);
    ``now``: the time dates are rendered against (default: the real time at each request); ``latency_s``:
    added to every answer; ``limit``: (requests, window seconds) per key; ``json_enabled``: SearXNG only."""

    def __init__(self, provider: str, *, keys: tuple[str, ...] | list[str] = ("test-key",),
                 now: datetime | None = None, latency_s: float = 0.0, limit: tuple[int, float] | None = None,
                 json_enabled: bool = True, pages: tuple[Page, ...] | None = None, host: str = "127.0.0.1") -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}")
        self.provider = provider
        self.keys = frozenset(keys)
        self.now = now
        self.latency_s = latency_s
        self.limit = limit
        self.json_enabled = json_enabled
        self.pages = pages if pages is not None else load_pages()
        self._st = _State()
        super().__init__(_handler(self), name=f"replay-{provider}", host=host, backlog=512)

    # --- script and records ---
    def push(self, *faults: Fault) -> None:
        with self._st.lock:
            self._st.queue.extend(faults)

    def reset(self) -> None:
        with self._st.lock:
            self._st.queue.clear()
            self._st.requests.clear()
            self._st.windows.clear()
            self._st.served.clear()
            self._st.max_in_flight = 0
            self._st.peers.clear()

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request: ``{"method", "path", "params", "headers", "json", "key", "t", "status"}``."""
        with self._st.lock:
            return list(self._st.requests)

    @property
    def served(self) -> dict[int, int]:
        """Answers by status code."""
        with self._st.lock:
            return dict(self._st.served)

    @property
    def connections(self) -> int:
        """TCP connections the requests came on (a client that keeps its connections open reuses them)."""
        with self._st.lock:
            return len(self._st.peers)

    @property
    def max_in_flight(self) -> int:
        return self._st.max_in_flight

    def _now(self) -> datetime:
        return self.now or datetime.now(UTC)

    # --- the request cycle (called by the handler thread) ---
    def handle(self, method: str, raw_path: str, headers: dict[str, str],
               body: bytes) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(raw_path)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        record: dict[str, Any] = {"method": method, "path": parts.path, "params": params, "headers": headers,
                                  "json": None, "key": None, "t": time.monotonic(), "status": 0}
        with self._st.lock:
            self._st.requests.append(record)
            self._st.in_flight += 1
            self._st.max_in_flight = max(self._st.max_in_flight, self._st.in_flight)
        try:
            status, out_headers, out = self._answer(method, parts.path, params, headers, body, record)
        finally:
            with self._st.lock:
                self._st.in_flight -= 1
        record["status"] = status
        with self._st.lock:
            self._st.served[status] = self._st.served.get(status, 0) + 1
        return status, out_headers, out

    def _answer(self, method: str, path: str, params: dict[str, str], headers: dict[str, str], body: bytes,
                record: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        try:
            req = getattr(self, f"_check_{self.provider}")(method, path, params, headers, body, record)
            self._enforce_limit(record["key"] or "")
        except _Reject as r:
            return r.status, {"Content-Type": "application/json", **r.headers}, _dump(r.body)
        with self._st.lock:
            fault = self._st.queue.popleft() if self._st.queue else None
        delay = self.latency_s + (fault.delay_s if fault else 0.0)
        if delay > 0 and self._stop.wait(delay):
            return 503, {}, b""
        if fault is not None and fault.kind != "slow":
            return self._fault(fault)
        results = self._search(req)
        payload = getattr(self, f"_render_{self.provider}")(req, results)
        return 200, {"Content-Type": "application/json"}, _dump(payload)

    def _enforce_limit(self, key: str) -> None:
        if self.limit is None:
            return
        n, window = self.limit
        now = time.monotonic()
        with self._st.lock:
            q = self._st.windows.setdefault(key, deque())
            while q and q[0] <= now - window:
                q.popleft()
            if len(q) >= n:
                wait = q[0] + window - now
                raise _Reject(429, self._rate_body(), self._rate_headers(wait, n, 0))
            q.append(now)

    # --- faults ---
    def _rate_body(self) -> Any:
        return {
            "tavily": {"detail": {"error": "Rate limit exceeded. Please slow down your requests."}},
            "brave": {"type": "ErrorResponse", "error": {"id": "replay", "status": 429, "code": "RATE_LIMITED",
                                                          "detail": "Request rate limit exceeded for plan."}},
            "serpapi": {"error": "You have exceeded the hourly throughput limit for your plan."},
            "searxng": {"error": "Too Many Requests"},
            "bocha": {"code": 429, "message": "You have reached the request limit.", "log_id": "replay"},
        }[self.provider]

    def _rate_headers(self, wait_s: float | None, limit: int, remaining: int) -> dict[str, str]:
        import math

        secs = None if wait_s is None else max(1, math.ceil(wait_s))
        if self.provider == "brave":  # per-second and per-month windows, comma lists, seconds until reset
            reset = f"{secs if secs is not None else 1}, 1419704"
            return {"X-RateLimit-Limit": f"{limit}, 15000", "X-RateLimit-Policy": f"{limit};w=1, 15000;w=2592000",
                    "X-RateLimit-Remaining": f"{remaining}, 9000", "X-RateLimit-Reset": reset}
        if self.provider in ("serpapi", "bocha") or secs is None:
            return {}
        if self.provider == "tavily":
            return {"Retry-After": str(secs)}
        return {"Retry-After": str(secs)}

    def _fault(self, f: Fault) -> tuple[int, dict[str, str], bytes]:
        js = {"Content-Type": "application/json"}
        if f.kind == "rate_limited":
            return 429, {**js, **self._rate_headers(f.retry_after, 1, 0)}, _dump(self._rate_body())
        if f.kind == "status":
            return f.status, js, _dump({"error": f"scripted {f.status}"})
        if f.kind == "malformed":
            return 200, js, b'{"results": [{"title": "unterminated'
        if f.kind == "html":
            page = f"<html><head><title>{f.status} Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
            return f.status, {"Content-Type": "text/html; charset=utf-8"}, page.encode()
        if f.kind == "empty":
            return 200, js, _dump(getattr(self, f"_render_{self.provider}")({"q": "", "params": {}}, []))
        if f.kind == "payload":
            return f.status, js, _dump(f.body)
        if f.kind == "serpapi_error":
            return f.status, js, _dump({"search_metadata": {"id": "replay", "status": "Success"},
                                        "error": f.message})
        raise AssertionError(f.kind)

    # --- request checks, per provider (what the real API refuses, refused the same way) ---
    def _check_tavily(self, method: str, path: str, params: dict[str, str], headers: dict[str, str], body: bytes,
                      record: dict[str, Any]) -> dict[str, Any]:
        def bad(status: int, msg: str) -> _Reject:
            return _Reject(status, {"detail": {"error": msg}})

        if path != "/search":
            raise bad(404, "Not Found")
        if method != "POST":
            raise bad(405, "Method Not Allowed")
        try:
            js = json.loads(body.decode("utf-8") or "null")
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise bad(400, "Invalid JSON body.") from None
        if not isinstance(js, dict):
            raise bad(400, "The request body must be a JSON object.")
        record["json"] = js
        auth = headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else str(js.get("api_key") or "")
        record["key"] = key
        if not key or key not in self.keys:
            raise bad(401, "Unauthorized: missing or invalid API key.")
        q = js.get("query")
        if not isinstance(q, str) or not q.strip():
            raise bad(400, "Query is missing.")
        n = js.get("max_results", 5)
        if not isinstance(n, int) or not 0 <= n <= 20:
            raise bad(400, "max_results must be between 0 and 20.")
        tr = js.get("time_range")
        tr = {"d": "day", "w": "week", "m": "month", "y": "year"}.get(tr, tr)
        if tr is not None and tr not in _RECENCY_H:
            raise bad(400, "Invalid time_range.")
        topic = js.get("topic", "general")
        if topic not in ("general", "news", "finance"):
            raise bad(400, "Invalid topic.")
        if js.get("search_depth", "basic") not in ("basic", "advanced", "fast", "ultra-fast"):
            raise bad(400, "Invalid search_depth.")
        return {"q": q, "n": n, "max_age_h": _RECENCY_H.get(tr) if tr else None, "topic": topic, "params": js}

    def _check_brave(self, method: str, path: str, params: dict[str, str], headers: dict[str, str], body: bytes,
                     record: dict[str, Any]) -> dict[str, Any]:
        def bad(status: int, code: str, msg: str) -> _Reject:
            return _Reject(status, {"type": "ErrorResponse",
                                    "error": {"id": "replay", "status": status, "code": code, "detail": msg}})

        if path != "/res/v1/web/search":
            raise bad(404, "NOT_FOUND", "Resource not found.")
        if method != "GET":
            raise bad(405, "METHOD_NOT_ALLOWED", "Method not allowed.")
        key = headers.get("x-subscription-token", "")
        record["key"] = key
        if not key or key not in self.keys:
            raise bad(401, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid.")
        q = params.get("q", "")
        if not q.strip() or len(q) > 400:
            raise bad(422, "VALIDATION", "q is required and must be at most 400 characters.")
        try:
            n = int(params.get("count", "20"))
        except ValueError:
            raise bad(422, "VALIDATION", "count must be an integer.") from None
        if not 1 <= n <= 20:
            raise bad(422, "VALIDATION", "count must be between 1 and 20.")
        fr = params.get("freshness")
        ages = {"pd": 24, "pw": 24 * 7, "pm": 24 * 31, "py": 24 * 366}
        if fr is not None and fr not in ages:
            raise bad(422, "VALIDATION", "freshness must be pd, pw, pm, py or a date range.")
        return {"q": q, "n": n, "max_age_h": ages.get(fr) if fr else None, "params": params}

    def _check_serpapi(self, method: str, path: str, params: dict[str, str], headers: dict[str, str], body: bytes,
                       record: dict[str, Any]) -> dict[str, Any]:
        def bad(status: int, msg: str) -> _Reject:
            return _Reject(status, {"error": msg})

        if path not in ("/search", "/search.json"):
            raise bad(404, "Not found.")
        if method != "GET":
            raise bad(405, "Method not allowed.")
        key = params.get("api_key", "")
        record["key"] = key
        if not key or key not in self.keys:
            raise bad(401, "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key")
        engine = params.get("engine", "google")
        if engine not in ("google", "bing"):
            raise bad(400, f"Unsupported `{engine}` search engine.")
        q = params.get("q", "")
        if not q.strip():
            raise bad(400, "Missing query `q` parameter.")
        count_param = "num" if engine == "google" else "count"
        try:
            n = int(params.get(count_param, "10"))
        except ValueError:
            raise bad(400, f"`{count_param}` must be an integer.") from None
        if not 1 <= n <= 100:
            raise bad(400, f"`{count_param}` must be between 1 and 100.")
        tbs = params.get("tbs")
        ages = {"qdr:h": 1, "qdr:d": 24, "qdr:w": 24 * 7, "qdr:m": 24 * 31, "qdr:y": 24 * 366}
        if tbs is not None and engine == "google" and tbs not in ages:
            raise bad(400, "Unsupported `tbs` value.")
        return {"q": q, "n": n, "engine": engine, "max_age_h": ages.get(tbs) if tbs else None, "params": params}

    def _check_searxng(self, method: str, path: str, params: dict[str, str], headers: dict[str, str], body: bytes,
                       record: dict[str, Any]) -> dict[str, Any]:
        if path not in ("/search", "/"):
            raise _Reject(404, {"error": "Not Found"})
        record["key"] = ""
        if params.get("format") != "json":
            raise _Reject(400, {"error": "this replay server answers format=json only"})
        if not self.json_enabled:
            raise _Reject(403, {"error": "Forbidden"})
        q = params.get("q", "")
        if not q.strip():
            raise _Reject(400, {"error": "No query"})
        tr = params.get("time_range", "")
        if tr and tr not in ("day", "month", "year"):  # SearXNG has no week
            raise _Reject(400, {"error": f"Invalid time_range {tr!r}"})
        return {"q": q, "n": 20, "max_age_h": _RECENCY_H.get(tr) if tr else None, "params": params}

    def _check_bocha(self, method: str, path: str, params: dict[str, str], headers: dict[str, str], body: bytes,
                     record: dict[str, Any]) -> dict[str, Any]:
        def bad(status: int, msg: str) -> _Reject:
            return _Reject(status, {"code": status, "message": msg, "log_id": "replay"})

        if path != "/v1/web-search":
            raise bad(404, "Not Found")
        if method != "POST":
            raise bad(405, "Method Not Allowed")
        auth = headers.get("authorization", "")
        key = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        record["key"] = key
        if not key or key not in self.keys:
            raise bad(401, "Invalid API KEY")
        if not headers.get("content-type", "").startswith("application/json"):
            raise bad(400, "Content-Type must be application/json")
        try:
            js = json.loads(body.decode("utf-8") or "null")
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise bad(400, "Invalid JSON body") from None
        if not isinstance(js, dict):
            raise bad(400, "The request body must be a JSON object")
        record["json"] = js
        unknown = set(js) - {"query", "freshness", "summary", "count", "include", "exclude"}
        if unknown:
            raise bad(400, f"Unknown parameter {sorted(unknown)[0]}")
        q = js.get("query")
        if not isinstance(q, str) or not q.strip():
            raise bad(400, "Missing parameter query")
        n = js.get("count", 10)
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 50:
            raise bad(400, "count must be an integer between 1 and 50")
        if not isinstance(js.get("summary", False), bool):
            raise bad(400, "summary must be a boolean")
        ages = {"oneDay": 24, "oneWeek": 24 * 7, "oneMonth": 24 * 31, "oneYear": 24 * 366}
        fr = js.get("freshness", "noLimit")
        if fr != "noLimit" and fr not in ages:
            raise bad(400, "freshness must be noLimit, oneDay, oneWeek, oneMonth, oneYear or a date range")
        return {"q": q, "n": n, "max_age_h": ages.get(fr), "summary": js.get("summary", False), "params": js}

    # --- search and render ---
    def _search(self, req: dict[str, Any]) -> list[Page]:
        from ..lexicon import STOP_EN, STOP_ZH
        from ..text import words

        stop = STOP_EN | STOP_ZH
        q = {w for w in words(req["q"]) if w not in stop and (len(w) > 1 or not w.isascii())}
        scored = []
        for i, p in enumerate(self.pages):
            if req.get("max_age_h") is not None and (p.age_h is None or p.age_h > req["max_age_h"]):
                continue
            if req.get("topic") == "news" and p.age_h is None:
                continue
            s = len(q & set(words(f"{p.title} {p.content}")))
            if s:
                scored.append((-s, i, p))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [p for _, _, p in scored[: req["n"]]]

    def _published(self, p: Page) -> datetime | None:
        return None if p.age_h is None else (self._now() - timedelta(hours=p.age_h)).replace(microsecond=0)

    def _render_tavily(self, req: dict[str, Any], pages: list[Page]) -> dict[str, Any]:
        out = []
        for i, p in enumerate(pages):
            r: dict[str, Any] = {"title": p.title, "url": p.url, "content": p.content,
                                 "score": round(0.95 - 0.07 * i, 4), "raw_content": None}
            pub = self._published(p)
            if req.get("topic") == "news" and pub is not None:
                r["published_date"] = format_datetime(pub, usegmt=True)
            out.append(r)
        return {"query": req["q"], "follow_up_questions": None, "answer": None, "images": [], "results": out,
                "response_time": 0.42, "request_id": "replay"}

    def _render_brave(self, req: dict[str, Any], pages: list[Page]) -> dict[str, Any]:
        out = []
        for p in pages:
            r: dict[str, Any] = {"type": "search_result", "title": p.title, "url": p.url,
                                 "description": _brave_bold(p.content, req["q"]), "language": p.lang,
                                 "profile": {"name": urlsplit(p.url).hostname}, "family_friendly": True}
            pub = self._published(p)
            if pub is not None:
                r["page_age"] = pub.replace(tzinfo=None).isoformat()
                r["age"] = self._age_en(p.age_h or 0, pub)
            sentences = [s for s in p.content.split("。") if s][1:2]
            if sentences:
                r["extra_snippets"] = sentences
            out.append(r)
        return {"type": "search", "query": {"original": req["q"], "more_results_available": False},
                "web": {"type": "search", "results": out, "family_friendly": True}}

    def _render_serpapi(self, req: dict[str, Any], pages: list[Page]) -> dict[str, Any]:
        organic = []
        for i, p in enumerate(pages, start=1):
            r: dict[str, Any] = {"position": i, "title": p.title, "link": p.url,
                                 "displayed_link": (urlsplit(p.url).hostname or "") + " › …", "snippet": p.content}
            pub = self._published(p)
            if pub is not None:
                # (a replayed provider writes ages as it does in the page's language)
                r["date"] = self._age_zh(p.age_h or 0, pub) if p.lang == "zh" else self._age_en(p.age_h or 0, pub,
                                                                                                short=True)
            organic.append(r)
        payload: dict[str, Any] = {
            "search_metadata": {"id": "replay", "status": "Success", "total_time_taken": 0.8},
            "search_parameters": {k: v for k, v in req["params"].items() if k != "api_key"},
        }
        if organic:
            payload["organic_results"] = organic
        else:
            engine = "Bing" if req.get("engine") == "bing" else "Google"
            payload["error"] = f"{engine} hasn't returned any results for this query."
        return payload

    def _render_searxng(self, req: dict[str, Any], pages: list[Page]) -> dict[str, Any]:
        out = []
        for i, p in enumerate(pages):
            pub = self._published(p)
            out.append({"url": p.url, "title": p.title, "content": p.content, "engine": "replay",
                        "engines": ["replay"], "positions": [i + 1], "score": round(1.0 / (i + 1), 4),
                        "category": "general", "publishedDate": pub.replace(tzinfo=None).isoformat() if pub else None})
        return {"query": req["q"], "number_of_results": 0, "results": out, "answers": [], "corrections": [],
                "infoboxes": [], "suggestions": [], "unresponsive_engines": []}

    def _render_bocha(self, req: dict[str, Any], pages: list[Page]) -> dict[str, Any]:
        out = []
        for i, p in enumerate(pages):
            host = urlsplit(p.url).hostname or ""
            # (a replayed page's first sentence, as its language ends one)
            first = p.content.split("。")[0] if p.lang == "zh" else p.content.split(". ")[0]
            r: dict[str, Any] = {"id": f"https://api.bochaai.com/v1/#WebPages.{i}", "name": p.title, "url": p.url,
                                 "displayUrl": p.url, "snippet": first, "siteName": host.removeprefix("www."),
                                 "siteIcon": f"https://th.bochaai.com/favicon?domain_url={host}",
                                 "dateLastCrawled": None, "cachedPageUrl": None, "language": None,
                                 "isFamilyFriendly": None, "isNavigational": None}
            if req.get("summary"):
                r["summary"] = p.content
            pub = self._published(p)
            r["datePublished"] = pub.astimezone(_BEIJING).isoformat() if pub is not None else None
            out.append(r)
        return {"code": 200, "log_id": "replay", "msg": None, "data": {
            "_type": "SearchResponse", "queryContext": {"originalQuery": req["q"]},
            "webPages": {"webSearchUrl": "", "totalEstimatedMatches": len(out), "value": out,
                         "someResultsRemoved": False},
            "images": None, "videos": None}}

    @staticmethod
    def _age_en(age_h: float, pub: datetime, *, short: bool = False) -> str:
        if age_h < 24:
            n = max(1, int(age_h))
            return f"{n} hour{'s' if n > 1 else ''} ago"
        if age_h < 24 * 7:
            n = int(age_h // 24)
            return f"{n} day{'s' if n > 1 else ''} ago"
        month = _MONTHS[pub.month - 1]
        return f"{month[:3] if short else month} {pub.day}, {pub.year}"

    @staticmethod
    def _age_zh(age_h: float, pub: datetime) -> str:
        if age_h < 24:
            return f"{max(1, int(age_h))} 小时前"
        if age_h < 24 * 7:
            return f"{int(age_h // 24)} 天前"
        return f"{pub.year}年{pub.month}月{pub.day}日"


def _brave_bold(text: str, q: str) -> str:
    """Brave marks query words in ``description`` with ``<strong>``: so do we (the adapters must strip it)."""
    for w in sorted({w for w in q.split() if len(w) > 2 or not w.isascii()}, key=len, reverse=True):
        text = text.replace(w, f"<strong>{w}</strong>")
    return text


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def _handler(server: WebReplayServer) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _serve(self) -> None:
            body = self.read_body()
            headers = {k.lower(): v for k, v in self.headers.items()}
            with server._st.lock:
                server._st.peers.add(self.client_address[:2])
            status, out_headers, out = server.handle(self.command, self.path, headers, body)
            self.respond(status, out, out_headers.items(), content_type=None)  # the answer names its own type

        do_GET = do_POST = _serve

    return Handler


__all__ = ["PROVIDERS", "Fault", "Page", "WebReplayServer", "load_pages"]
