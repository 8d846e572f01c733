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

    def render(self) -> bytes:
        return generate_latest(self.registry)


__all__ = ["Metrics"]
