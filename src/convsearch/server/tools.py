"""Tool schemas for OpenAI-style function calling, generated from the API's own pydantic models.

``web_search`` takes two of ``SearchRequest``'s fields, ``query`` (its description rewritten for a model that
writes the query itself: 3-8 keywords) and ``recency``; ``web_search_request(args)`` turns a model's call back
into a ``SearchRequest``, so the tool and the API cannot drift apart.

>>> openai_tools()[0]["function"]["name"]
'web_search'
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.fields import FieldInfo

from .models import SearchRequest

WEB_SEARCH_DESCRIPTION = (
    "Search the web / knowledge base. Write a standalone query: resolve pronouns and follow-ups from the "
    "conversation ('it', '那番禺呢', 'what about the price') into the names they refer to. Results come back "
    "numbered [n] with title, domain, date and snippet; cite them as [n].")
QUERY_DESCRIPTION = ("3-8 keywords, standalone: names instead of pronouns, no filler words; in the user's "
                     "language (Chinese or English). Example: 'AnySearch 价格 专业版' or 'SpaceX first launch year'.")
RECENCY_DESCRIPTION = ("How recent the results must be: day, week, month, year, or no_limit (default). Use a "
                       "window only when the user asks about recent events or the latest information.")
TOOL_FIELDS = {"query": QUERY_DESCRIPTION, "recency": RECENCY_DESCRIPTION}


def _field(name: str, description: str) -> tuple[Any, FieldInfo]:
    f = SearchRequest.model_fields[name]
    return f.annotation, FieldInfo.merge_field_infos(f, description=description)


WebSearchArgs: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "web_search", __config__=ConfigDict(extra="forbid"),
    **{name: _field(name, desc) for name, desc in TOOL_FIELDS.items()})
WebSearchArgs.__doc__ = WEB_SEARCH_DESCRIPTION


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def web_search_parameters() -> dict[str, Any]:
    """The JSON Schema of ``web_search``'s arguments (what OpenAI's ``parameters`` holds)."""
    schema = _strip_titles(WebSearchArgs.model_json_schema())
    schema.pop("description", None)
    schema["additionalProperties"] = False
    return schema


def openai_tools(*, strict: bool = False) -> list[dict[str, Any]]:
    """``tools=[...]`` for the Chat Completions API. ``strict=True`` gives the Structured Outputs form (every
    property required, no defaults)."""
    params = web_search_parameters()
    if strict:
        params = copy.deepcopy(params)
        params["required"] = list(params["properties"])
        for p in params["properties"].values():
            for k in ("default", "minLength", "maxLength"):  # not accepted by strict mode
                p.pop(k, None)
    fn: dict[str, Any] = {"name": "web_search", "description": WEB_SEARCH_DESCRIPTION, "parameters": params}
    if strict:
        fn["strict"] = True
    return [{"type": "function", "function": fn}]


def web_search_request(arguments: str | dict[str, Any], **extra: Any) -> SearchRequest:
    """A model's ``web_search`` call (its JSON ``arguments``) as a SearchRequest; ``extra`` adds fields such as
    ``session_id`` or ``top_k``. Raises pydantic's ValidationError on bad arguments."""
    args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
    valid = WebSearchArgs.model_validate(args)
    return SearchRequest(**valid.model_dump(), **extra)


__all__ = ["WebSearchArgs", "openai_tools", "web_search_parameters", "web_search_request"]
