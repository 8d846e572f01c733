"""The outbound decisions reach /metrics (the app's Prometheus registry)."""

from __future__ import annotations

import pytest

pytest.importorskip("prometheus_client")

from convsearch.infra.ratelimit import STATS, OutboundLimiter  # noqa: E402
from convsearch.server.metrics import Metrics  # noqa: E402


def test_queue_decisions_and_waits_are_exported():
    t = [0.0]
    lim = OutboundLimiter("metrics-probe", 1, limit=1, window_s=2, clock=lambda: t[0], max_wait_s=5, margin_s=0)
    lim._reserve(float("inf"))
    assert lim._reserve(float("inf")) == (None, 2)  # must wait 2 s
    t[0] = 2.0
    lim._reserve(float("inf"))
    lim.cool(0, 1)
    text = Metrics().render().decode()
    assert 'convsearch_web_outbound_total{kind="granted",provider="metrics-probe"} 2.0' in text
    assert 'convsearch_web_outbound_total{kind="cooled",provider="metrics-probe"} 1.0' in text
    assert 'convsearch_web_queue_wait_seconds_total{provider="metrics-probe"} 0.0' in text
    assert STATS.snapshot()[1]["metrics-probe"] == (0.0, 2)
