"""One JSON schema for a turn: ``convsearch search --json`` prints what ``POST /v1/search`` answers.

Both are generated from the same pydantic model (``convsearch.server.models.SearchOut``): the same zh and en
conversations run through the CLI (a subprocess) and a real ``convsearch serve`` on loopback over one index,
and each body must validate against the model's schema made strict (every property required, no other
property allowed), have the same shape, and carry the same rewrite and results."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")
jsonschema = pytest.importorskip("jsonschema")
pytest.importorskip("fastapi")

from convsearch.backends.local import LocalIndex  # noqa: E402
from convsearch.server.models import SearchOut  # noqa: E402
from convsearch.testing.live_server import LiveServer  # noqa: E402

pytestmark = pytest.mark.integration

CONVERSATIONS = [
    pytest.param(["AnySearch 支持哪些检索方式？", "价格呢？"], "AnySearch 的价格", id="zh"),
    pytest.param(["Who founded SpaceX?", "When did it first launch a rocket?"],
                 "When did SpaceX first launch a rocket?", id="en"),
]


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The model's schema with every object closed (additionalProperties false) and every property required:
    a renamed (``hits``), missing (``rewrite.changed``) or extra field fails validation."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = sorted(node["properties"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(out)
    return out


def shape(value: Any, path: str = "") -> set[str]:
    """Every key path in a JSON value (list items merged; the keys of free maps such as timings included)."""
    if isinstance(value, dict):
        paths = set()
        for k, v in value.items():
            paths |= {f"{path}.{k}"} | shape(v, f"{path}.{k}")
        return paths
    if isinstance(value, list):
        return set().union(*(shape(v, f"{path}[]") for v in value)) if value else set()
    return set()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, corpus) -> Path:
    d = tmp_path_factory.mktemp("schema")
    LocalIndex(d / "index", embedder=None).add(corpus)
    return d


@pytest.fixture(scope="module")
def server(data_dir: Path) -> Iterator[LiveServer]:
    with LiveServer(data_dir, env={"CONVSEARCH_RATE_LIMIT": "0"}) as srv:  # open mode: no key
        yield srv


def cli_turns(cli_at, data_dir: Path, turns: list[str], session: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for q in turns:
        p = cli_at(data_dir, "search", q, "--data-dir", str(data_dir), "--session", session, "--json")
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
    return out


def http_turns(server: LiveServer, turns: list[str], session: str) -> dict[str, Any]:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for q in turns:
            r = c.post("/v1/search", json={"query": q, "session_id": session})
            assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("turns,standalone", CONVERSATIONS)
def test_cli_json_and_http_search_share_one_schema(cli_at, data_dir, server, turns, standalone):
    cli = cli_turns(cli_at, data_dir, turns, f"cli-{standalone[:3]}")
    http = http_turns(server, turns, f"http-{standalone[:3]}")
    schema = strict(SearchOut.model_json_schema(mode="serialization"))
    for body in (cli, http):
        jsonschema.validate(body, schema)
    assert shape(cli) == shape(http)
    assert "results" in cli and "hits" not in cli and "citations" not in cli
    assert cli["rewrite"]["changed"] is True and cli["standalone_query"] == standalone
    for key in ("query", "standalone_query", "rewrite", "variants", "context"):
        assert cli[key] == http[key], key
    assert [r["id"] for r in cli["results"]] == [r["id"] for r in http["results"]]
    assert cli["trace"]["queries"] == http["trace"]["queries"]


def test_the_published_openapi_schema_is_the_models(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        published = c.get("/openapi.json").json()["components"]["schemas"]
    model = SearchOut.model_json_schema(mode="serialization")
    assert set(published["SearchOut"]["properties"]) == set(model["properties"])
    for name, sub in model["$defs"].items():
        assert set(published[name]["properties"]) == set(sub["properties"]), name
