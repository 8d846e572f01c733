"""The OpenAI function-calling export: ``web_search`` generated from the API's own models."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic")
from pydantic import ValidationError  # noqa: E402

from convsearch.server.models import SearchRequest  # noqa: E402
from convsearch.server.tools import openai_tools, web_search_request  # noqa: E402


def test_web_search_tool_shape() -> None:
    (tool,) = openai_tools()
    assert tool["type"] == "function"
    fn = tool["function"]
    assert fn["name"] == "web_search" and "standalone" in fn["description"]
    params = fn["parameters"]
    assert params["type"] == "object" and params["additionalProperties"] is False
    assert set(params["properties"]) == {"query", "recency"} and params["required"] == ["query"]
    assert "3-8 keywords" in params["properties"]["query"]["description"]
    assert params["properties"]["recency"]["enum"] == ["day", "week", "month", "year", "no_limit"]
    assert params["properties"]["recency"]["default"] == "no_limit"
    assert "title" not in str(params)


def test_generated_from_the_request_model() -> None:
    api = SearchRequest.model_json_schema()["properties"]
    params = openai_tools()[0]["function"]["parameters"]["properties"]
    assert params["recency"]["enum"] == api["recency"]["enum"]
    assert params["query"]["maxLength"] == api["query"]["maxLength"]


def test_strict_form_requires_everything() -> None:
    fn = openai_tools(strict=True)[0]["function"]
    assert fn["strict"] is True
    assert fn["parameters"]["required"] == ["query", "recency"]
    assert all("default" not in p for p in fn["parameters"]["properties"].values())


def test_a_model_call_becomes_a_search_request() -> None:
    req = web_search_request('{"query": "SpaceX first launch year", "recency": "year"}', session_id="s", top_k=3)
    assert (req.query, req.recency, req.session_id, req.top_k) == ("SpaceX first launch year", "year", "s", 3)
    assert web_search_request({"query": "AnySearch 价格"}).recency == "no_limit"
    with pytest.raises(ValidationError):
        web_search_request({"query": "x", "recency": "hour"})
    with pytest.raises(ValidationError):
        web_search_request({"query": "x", "site": "example.com"})
