"""schemathesis against the published OpenAPI schema, in process (``from_asgi``), bounded by schemathesis.toml:
every generated request, valid or not, must get a documented, schema-conformant answer and never a 5xx."""

from __future__ import annotations

from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("fastapi")

from convsearch.config import Settings  # noqa: E402
from convsearch.history import InMemoryStore  # noqa: E402
from convsearch.llm import ScriptedLLM  # noqa: E402
from convsearch.server.app import create_app  # noqa: E402
from convsearch.server.service import Service  # noqa: E402
from convsearch.types import Document  # noqa: E402

pytestmark = pytest.mark.integration
# one pytest-xdist worker runs the whole module, in order: the last test counts the requests the generated ones
# sent (schemathesis's generated tests do not take the module's marks, so each test carries it)
ONE_WORKER = pytest.mark.xdist_group("schemathesis")

REPO = Path(__file__).resolve().parents[2]
HEADERS = {"Authorization": "Bearer key-fuzz"}
MIN_REQUESTS = 1000
DOCS = [Document("zh-1", "AnySearch 支持 BM25、向量和混合检索，专业版每月 99 元。", title="AnySearch", url="https://a.example/1",
                 date="2024-06-01"),
        Document("zh-2", "深圳最近三天多云转晴，适合露营。", title="深圳露营天气", url="https://w.example/sz", date="2024-11-28"),
        Document("en-1", "SpaceX first launched Falcon 1 in March 2006.", title="Falcon 1", url="https://h.example/f1",
                 date="2020-01-02")]


def _app():
    import atexit
    import shutil
    import tempfile

    from convsearch.backends.local import LocalIndex

    # built at import, before any fixture: every path the app could open by default is in a temporary dir
    # (the service drops its store on shutdown, and reopened one from the data dir: the default, ./.convsearch)
    root = Path(tempfile.mkdtemp(prefix="convsearch-fuzz-"))
    atexit.register(shutil.rmtree, root, True)
    idx = LocalIndex(root / "index", embedder=None)
    idx.add(DOCS)
    settings = Settings.from_env({}, data_dir=root, api_keys="fuzz:key-fuzz", dense="off", rate_limit=0)
    service = Service(settings, backend=idx, store=InMemoryStore())
    app = create_app(settings, service=service, mcp=False)
    # a scripted upstream LLM: without one the chat endpoint answers 503 by design (it says none is configured)
    app.state.answer_llm = ScriptedLLM(default="A scripted answer [1].")
    return app, service


APP, SERVICE = _app()
CONFIG = schemathesis.config.SchemathesisConfig.from_path(str(REPO / "schemathesis.toml"))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG)


@ONE_WORKER
@schema.parametrize()
def test_api_never_fails_with_a_server_error(case) -> None:
    response = case.call(headers=HEADERS)
    assert response.status_code < 500, f"{case.method} {case.path} → {response.status_code}: {response.text[:500]}"
    assert "Traceback" not in response.text
    case.validate_response(response)


@ONE_WORKER
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/answer"])
def test_streamed_events_match_the_published_event_schema(path: str) -> None:
    # the generated tests reach `stream: true` only sometimes; here every event of a stream is checked against the
    # schema the API publishes for it, by the same validator (schemathesis parses each SSE event into an object)
    body = ({"model": "convsearch", "stream": True, "messages": [{"role": "user", "content": "AnySearch 多少钱？"}]}
            if path == "/v1/chat/completions" else {"query": "AnySearch 多少钱？", "stream": True})
    case = schema[path]["POST"].Case(body=body)
    response = case.call(headers=HEADERS)
    assert response.status_code == 200 and response.headers["content-type"][0].startswith("text/event-stream")
    assert response.text.count("data:") >= 2
    case.validate_response(response)


@ONE_WORKER
def test_fuzzing_sent_enough_requests() -> None:
    """Runs after the generated tests of this module: at least 1,000 generated requests, none answered ≥ 500.

    The 401s are not counted: they are schemathesis's own ``ignored_auth`` check, which replays requests
    without the key to see that the API refuses them (the generated requests all carry a valid key)."""
    counts: dict[str, float] = {}
    for metric in SERVICE.metrics.registry.collect():
        if metric.name == "convsearch_http_requests":
            for s in metric.samples:
                if s.name.endswith("_total"):
                    counts[s.labels["status"]] = counts.get(s.labels["status"], 0) + s.value
    generated = sum(v for k, v in counts.items() if k != "401")
    if not counts:
        pytest.skip("run the whole module: the generated tests send the requests this test counts")
    print(f"schemathesis: {int(generated)} generated requests (+ {int(counts.get('401', 0))} auth replays); "
          f"by status {counts}")
    assert generated >= MIN_REQUESTS, counts
    assert not any(int(code) >= 500 for code in counts), counts
