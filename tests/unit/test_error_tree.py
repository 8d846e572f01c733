"""One exception tree (issue 27 item 6): LLM and web upstream failures are one family, ``UpstreamError`` in
convsearch.errors, drawn in its docstring, and each is mapped once at the edges: HTTP status and body
(server/errors.py, MCP the same), exit code and one line (cli.main)."""

from __future__ import annotations

import re

import pytest

import convsearch.errors as E
from convsearch.types import Usage

LLM_KINDS = (E.LLMTimeout, E.LLMRateLimited, E.LLMUnavailable, E.LLMRequestRejected, E.LLMBadOutput)
WEB_KINDS = (E.UpstreamRateLimited, E.UpstreamUnavailable, E.UpstreamMalformed, E.UpstreamRejected, E.BreakerOpen)


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def test_the_modules_raise_the_classes_of_the_one_tree() -> None:
    import convsearch.backends.web._http as web
    import convsearch.infra.ratelimit as rl
    import convsearch.llm as llm

    for name in ("LLMError", "LLMTimeout", "LLMRateLimited", "LLMUnavailable", "LLMRequestRejected", "LLMBadOutput"):
        assert getattr(llm, name) is getattr(E, name)
    for name in ("WebError", "UpstreamRateLimited", "UpstreamUnavailable", "UpstreamMalformed", "UpstreamRejected",
                 "BreakerOpen"):
        assert getattr(web, name) is getattr(E, name)
    assert rl.QueueTimeout is E.QueueTimeout
    for cls in (*LLM_KINDS, *WEB_KINDS, E.QueueTimeout):
        assert issubclass(cls, E.UpstreamError) and issubclass(cls, E.BackendError)


def test_every_class_of_the_family_is_drawn_in_the_docstring() -> None:
    doc = E.__doc__ or ""
    drawn = set(re.findall(r"[├└]── (\w+)", doc))
    family = {c.__name__ for c in _all_subclasses(E.UpstreamError) if c.__module__ == "convsearch.errors"}
    assert family and family | {"UpstreamError"} <= drawn
    assert {c.__name__ for c in _all_subclasses(E.ConvsearchError) if c.__module__ == "convsearch.errors"} <= drawn


def test_one_shape_of_attributes_for_llm_and_web_failures() -> None:
    llm = E.LLMRateLimited("rate limited (HTTP 429)", retry_after=2.0, usage=Usage(3, 0))
    web = E.UpstreamRateLimited("tavily", "HTTP 429", status=429, retry_after=5.0)
    queue = E.QueueTimeout("brave: every key is at its rate limit", 1.5, provider="brave")
    assert (llm.service, llm.reason, str(llm), llm.retry_after, llm.retryable) == \
        ("llm", "rate limited (HTTP 429)", "rate limited (HTTP 429)", 2.0, True)
    assert llm.usage.prompt_tokens == 3 and web.usage.total_tokens == 0
    assert (web.service, web.provider, web.reason, str(web), web.status) == \
        ("tavily", "tavily", "HTTP 429", "tavily: HTTP 429", 429)
    assert (queue.service, queue.wait_s, queue.retry_after) == ("brave", 1.5, 1.5)
    assert llm.what == "the LLM endpoint" and web.what == "the web provider tavily"


@pytest.mark.parametrize("exc, status, code", [
    (E.LLMTimeout("timed out (budget 3.00 s)"), 504, 6),
    (E.LLMRateLimited("rate limited (HTTP 429)"), 502, 5),  # an upstream's 429 is not the client's rate limit
    (E.LLMRequestRejected("request rejected (HTTP 401)"), 502, 5),
    (E.UpstreamRejected("tavily", "HTTP 401: bad key"), 502, 5),
    (E.UpstreamRateLimited("brave", "HTTP 429"), 502, 5),
    (E.BreakerOpen("serpapi", "open after 5 failures"), 502, 5),
    (E.QueueTimeout("brave: every key is at its rate limit", 3.0, provider="brave"), 502, 5),
])
def test_each_is_mapped_once_at_the_http_and_cli_edges(exc: E.UpstreamError, status: int, code: int,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("fastapi")
    import json

    from convsearch.cli import main
    from convsearch.server.errors import error_response
    from convsearch.server.mcp import _tool_error

    r = error_response(exc, "rid-1")
    body = json.loads(bytes(r.body))["error"]
    assert r.status_code == status and body["message"] == f"{exc.what} failed" and body["request_id"] == "rid-1"
    assert exc.reason not in body["message"]  # a 5xx says which service, not what it answered
    assert str(_tool_error(exc)).endswith(f": {exc.what} failed")

    def boom(*a: object, **kw: object) -> None:
        raise exc

    monkeypatch.setattr("convsearch.backends.registry.open_backend", boom)
    with pytest.raises(SystemExit) as info:
        main(["search", "AnySearch 价格"])
    assert info.value.code == code
    assert capsys.readouterr().err == f"error: {exc.what} failed: {exc.reason}\n"
