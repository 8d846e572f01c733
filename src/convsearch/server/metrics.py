"""Prometheus metrics of one app (its own registry, so two apps in one process never share counters).

No label carries a tenant name: ``/metrics`` is unauthenticated, and tenants should not learn of each other.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("convsearch_http_requests", "HTTP requests by route template, method and status",
                                ("route", "method", "status"), registry=r)
        self.latency = Histogram("convsearch_http_request_duration_seconds", "HTTP request wall time",
                                 ("route",), buckets=_BUCKETS, registry=r)
        self.in_flight = Gauge("convsearch_http_in_flight", "HTTP requests being served", registry=r)
        self.rewrites = Counter("convsearch_rewrites", "Turns by rewrite method and whether a step fell back",
                                ("method", "fell_back"), registry=r)
        self.cache = Counter("convsearch_response_cache", "Response cache look-ups", ("kind", "result"), registry=r)
        self.rate_limited = Counter("convsearch_rate_limited", "Requests refused with 429", registry=r)
        self.mcp_calls = Counter("convsearch_mcp_tool_calls", "MCP tool calls by tool and outcome",
                                 ("tool", "outcome"), registry=r)
        self.chat = Counter("convsearch_chat_completions", "OpenAI-compatible chat completions answered, by "
                            "whether they streamed and how the answer came out (ok, partial, degraded, error)",
                            ("stream", "outcome"), registry=r)
        self.chat_tokens = Counter("convsearch_chat_upstream_tokens", "Upstream LLM tokens spent on chat "
                                   "completions, by kind (prompt, completion)", ("kind",), registry=r)
        r.register(_OutboundCollector())

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _OutboundCollector:
    """The web providers' outbound decisions (``infra.ratelimit.STATS``, process-wide): queued / granted calls,
    upstream 429s, cooled keys, retries, failures, breaker refusals, failovers, cache hits / misses / skips,
    and the total time calls waited in the outbound queue."""

    def collect(self):  # type: ignore[no-untyped-def]
        from prometheus_client.core import CounterMetricFamily

        from ..infra.ratelimit import STATS

        counts, waits = STATS.snapshot()
        c = CounterMetricFamily("convsearch_web_outbound", "Outbound web search decisions by provider and kind",
                                labels=("provider", "kind"))
        for (provider, kind), n in sorted(counts.items()):
            c.add_metric((provider, kind), n)
        yield c
        w = CounterMetricFamily("convsearch_web_queue_wait_seconds", "Time outbound calls waited for a key slot",
                                labels=("provider",))
        for provider, (total, _) in sorted(waits.items()):
            w.add_metric((provider,), total)
        yield w

    def describe(self):  # type: ignore[no-untyped-def]
        return []


__all__ = ["Metrics"]
