"""What a client is told for the request mistakes of issue 27: plain words, never pydantic's regular expression or
"a valid dictionary or object to extract fields from" (400, the field named), the same over MCP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from convsearch.backends.base import InMemoryBackend  # noqa: E402
from convsearch.config import Settings  # noqa: E402
from convsearch.history import InMemoryStore  # noqa: E402
from convsearch.server.app import create_app  # noqa: E402
from convsearch.types import Document  # noqa: E402


@pytest.fixture
def client() -> Iterator[TestClient]:
    app = create_app(Settings.from_env({}, dense="off", rate_limit=0),
                     backend=InMemoryBackend([Document("a", "AnySearch 价格")]), store=InMemoryStore())
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def error_of(r: Any) -> dict[str, Any]:
    assert r.status_code == 400, r.text
    e: dict[str, Any] = r.json()["error"]
    assert "pattern" not in e["message"] and "dictionary" not in e["message"] and "^" not in e["message"]
    return e


@pytest.mark.parametrize("query, says", [("   ", "query: empty or only whitespace"),
                                         ("\t\n\u3000", "query: empty or only whitespace"),
                                         ("", "query: empty"),
                                         ("a\x00b", "query: contains a NUL character")])
@pytest.mark.parametrize("path", ["/v1/search", "/v1/rewrite", "/v1/answer"])
def test_a_bad_query_is_named_in_plain_words(client: TestClient, path: str, query: str, says: str) -> None:
    e = error_of(client.post(path, json={"query": query}))
    assert (e["field"], e["message"]) == ("query", says)


JSON_OBJECT = "body: expected a JSON object, sent with Content-Type: application/json"


@pytest.mark.parametrize("kw, says", [
    ({"content": b'{"query": "AnySearch"}'}, JSON_OBJECT),                                   # no Content-Type
    ({"content": b'{"query": "AnySearch"}', "headers": {"Content-Type": "text/plain"}}, JSON_OBJECT),
    ({"json": ["AnySearch"]}, JSON_OBJECT),                                                  # not an object
    ({}, "body: missing: " + JSON_OBJECT.removeprefix("body: ")),                           # no body at all
    ({"content": b'{"query": ', "headers": {"Content-Type": "application/json"}}, "body: not valid JSON"),
], ids=["no-content-type", "text-plain", "array", "no-body", "broken-json"])
def test_a_body_that_is_no_json_object_says_what_to_send(client: TestClient, kw: dict[str, Any], says: str) -> None:
    e = error_of(client.post("/v1/search", **kw))
    assert (e["field"], e["message"]) == ("body", says)


def test_mcp_tool_errors_use_the_same_words() -> None:
    from pydantic import TypeAdapter, ValidationError

    from convsearch.server import models as m
    from convsearch.server.mcp import _tool_error

    with pytest.raises(ValidationError) as info:
        TypeAdapter(m.Query).validate_python("  ")
    assert str(_tool_error(info.value)).endswith(": empty or only whitespace")
