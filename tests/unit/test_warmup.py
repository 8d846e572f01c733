"""Start-up of long-running processes (convsearch.warmup): the warm-up runs the real rule path in both languages,
the heap is frozen once per process, and the entry points (serve, mcp, rewrite --batch) do both. Freezing is
checked in subprocesses: a frozen test process would keep its cyclic garbage for good."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from convsearch import warmup


def _python(code: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_warm_up_rewrites_a_chinese_and_an_english_follow_up():
    assert warmup.warm_up() == ["AnySearch 的价格", "When did SpaceX launch?"]


def test_freeze_heap_freezes_once_and_later_garbage_is_still_collected():
    got = _python("""
        import gc, json
        from convsearch.warmup import freeze_heap
        before = gc.get_freeze_count()
        first = freeze_heap()
        frozen = gc.get_freeze_count()
        keep = [[i] for i in range(5000)]          # objects made after the freeze
        second = freeze_heap()
        class Node: pass
        a, b = Node(), Node()
        a.other, b.other = b, a                     # a cycle made after the freeze: collectable
        del a, b
        print(json.dumps({"before": before, "first": first, "frozen": frozen, "second": second,
                          "after": gc.get_freeze_count(), "collected": gc.collect()}))
    """)
    assert got["before"] == 0 and got["first"] is True and got["frozen"] > 1000
    assert got["second"] is False and got["after"] == got["frozen"]  # the second call froze nothing
    assert got["collected"] >= 2


def test_rewrite_batch_warm_freezes_and_writes_what_a_cold_run_writes(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(
        json.dumps({"id": "z", "history": ["深圳最近三天适合露营吗？"], "history_roles": ["user"],
                    "question": "那番禺呢？"}, ensure_ascii=False) + "\n"
        + json.dumps({"id": "e", "history": ["Who founded SpaceX?"], "history_roles": ["user"],
                      "question": "When did it first launch a rocket?"}) + "\n", encoding="utf-8")
    got = _python(f"""
        import gc, json
        from pathlib import Path
        from convsearch.batch import rewrite_batch
        src, tmp = Path({str(src)!r}), Path({str(tmp_path)!r})
        rewrite_batch(src, tmp / "cold.jsonl")
        cold_frozen = gc.get_freeze_count()
        rewrite_batch(src, tmp / "warm.jsonl", warm=True)
        print(json.dumps({{"cold_frozen": cold_frozen, "warm_frozen": gc.get_freeze_count()}}))
    """)
    assert got["cold_frozen"] == 0 and got["warm_frozen"] > 1000

    def outputs(name):
        lines = (tmp_path / name).read_text(encoding="utf-8").splitlines()
        return [(r["id"], r["rewrite"], r["reason"]) for r in map(json.loads, lines)]

    assert outputs("warm.jsonl") == outputs("cold.jsonl")
    assert [o[1] for o in outputs("warm.jsonl")] == ["番禺最近三天适合露营吗", "When did SpaceX first launch a rocket?"]


def test_cli_rewrite_batch_asks_for_the_warm_start(tmp_path, monkeypatch):
    import convsearch.batch
    from convsearch.cli import app

    seen = {}

    def fake(src, dst, rewriter_name="rules", *, window=8, warm=False):
        seen.update(rewriter=rewriter_name, warm=warm)
        return 0, 0.0

    monkeypatch.setattr(convsearch.batch, "rewrite_batch", fake)
    res = CliRunner().invoke(app, ["rewrite", "--batch", str(tmp_path / "in.jsonl"),
                                   "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 0, res.output
    assert seen == {"rewriter": "rules", "warm": True}


def test_mcp_stdio_warms_the_rule_path_not_the_backend_then_freezes_before_serving(monkeypatch):
    pytest.importorskip("mcp")
    import convsearch.server.mcp as mcp_mod
    import convsearch.server.service as service_mod
    from convsearch.config import Settings
    from convsearch.server import serve_mcp_stdio

    order = []

    class FakeService:
        def __init__(self, settings):
            order.append("service")

        def warm_up(self):  # searches the backend: a paid web query per MCP launch with a web backend
            order.append("backend search")

    monkeypatch.setattr(service_mod, "Service", FakeService)
    monkeypatch.setattr(warmup, "warm_up", lambda settings=None: order.append("rule path") or [])
    monkeypatch.setattr(warmup, "freeze_heap", lambda: order.append("freeze") or True)
    monkeypatch.setattr(mcp_mod, "run_stdio", lambda service: order.append("serve"))
    serve_mcp_stdio(Settings.from_env({}, dense="off"))
    assert order == ["service", "rule path", "freeze", "serve"]


def test_server_lifespan_freezes_only_when_warm(monkeypatch, tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    import convsearch.server.app as app_mod
    from convsearch.backends.base import InMemoryBackend
    from convsearch.config import Settings
    from convsearch.history import InMemoryStore

    calls = []
    monkeypatch.setattr(app_mod, "freeze_heap", lambda: calls.append("freeze") or True)
    for warm in (False, True):
        s = Settings.from_env({}, dense="off", rate_limit=0, data_dir=str(tmp_path))
        app = app_mod.create_app(s, warm=warm, mcp=False, backend=InMemoryBackend([]), store=InMemoryStore())
        with TestClient(app) as c:
            assert c.get("/healthz").status_code == 200
        calls.append(f"closed warm={warm}")
    assert calls == ["closed warm=False", "freeze", "closed warm=True"]


@pytest.mark.parametrize("backends, searched", [("local", True), ("memory", True), ("tavily", False),
                                                ("local,brave", False)])
def test_service_warm_up_searches_only_embedded_backends(monkeypatch, tmp_path, backends, searched):
    pytest.importorskip("fastapi")
    from convsearch.config import Settings
    from convsearch.server.service import Service

    calls = []

    class Probe:
        def search(self, query, top_k=10):
            calls.append(query)
            return []

    service = Service(Settings.from_env({}, dense="off", backends=backends, data_dir=str(tmp_path)))
    monkeypatch.setattr(service, "backend", lambda: Probe())
    monkeypatch.setattr(warmup, "warm_up", lambda settings=None: [])
    service.warm_up()
    assert bool(calls) is searched  # a web backend would be a paid query at every start
