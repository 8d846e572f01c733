"""POST /v1/chat/completions and GET /v1/models in process: the OpenAI shape (JSON and every streamed chunk),
citations in [n] order, sessions by X-Session-Id, profiles, max_tokens, the errors (OpenAI-shaped, 4xx / 503)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from convsearch.agent.testing import last_tool_numbers, search_call, search_calls  # noqa: E402
from convsearch.config import Settings  # noqa: E402
from convsearch.history import InMemoryStore  # noqa: E402
from convsearch.llm import ScriptedLLM  # noqa: E402
from convsearch.server.app import create_app  # noqa: E402
from convsearch.testing.chat_stream import StreamError, read_stream  # noqa: E402
from convsearch.types import Usage  # noqa: E402

A = {"Authorization": "Bearer key-acme"}
B = {"Authorization": "Bearer key-beta"}
URL = "/v1/chat/completions"


def make_client(index: Any, **settings: Any) -> TestClient:
    s = Settings.from_env({}, **({"api_keys": "acme:key-acme,beta:key-beta", "dense": "off", "rate_limit": 0}
                                 | settings))
    return TestClient(create_app(s, backend=index, store=InMemoryStore(), mcp=False), raise_server_exceptions=False)


@pytest.fixture
def client(bm25_index) -> Iterator[TestClient]:
    with make_client(bm25_index, chat_profiles="support-bot") as c:
        yield c


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def cite_all(msgs: list[dict[str, Any]], tools: Any) -> str:
    return " ".join(f"Fact {n} [{n}]." for n in last_tool_numbers(msgs)) or "Nothing found."


def stream(client: TestClient, body: dict[str, Any], headers: dict[str, str] = A) -> Any:
    with client.stream("POST", URL, json=body | {"stream": True}, headers=headers) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        return read_stream(r.iter_lines())


def test_json_answer_in_openai_shape_with_citations_in_n_order(client: TestClient) -> None:
    llm = ScriptedLLM([search_calls(["SpaceX founded", "Falcon 1 first launch"]),
                       "SpaceX was founded in 2002 [1] and first launched in 2006 [2]."], usage=None)
    client.app.state.answer_llm = llm
    r = client.post(URL, headers=A, json={
        "model": "convsearch", "messages": [{"role": "system", "content": "SYSTEM-SECRET"},
                                            {"role": "developer", "content": "DEV-NOTE"},
                                            user("When was SpaceX founded and when did it first launch?")],
        "temperature": 0.7, "user": "u-1", "top_p": 0.5, "some_future_field": {"x": 1}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "chat.completion" and body["model"] == "convsearch" and body["id"].startswith("chatcmpl-")
    (choice,) = body["choices"]
    assert choice["message"] == {"role": "assistant", "content":
                                 "SpaceX was founded in 2002 [1] and first launched in 2006 [2].", "refusal": None}
    assert choice["finish_reason"] == "stop"
    # citations[n - 1] is [n]'s URL, and search_results agree
    results = {x["n"]: x for x in body["search_results"]}
    assert [x["n"] for x in body["search_results"]] == list(range(1, len(body["citations"]) + 1))
    assert all(body["citations"][n - 1] == x["url"] for n, x in results.items())
    assert "history.example" in {results[1]["domain"], results[2]["domain"]}
    assert {"title", "url", "date", "domain", "snippet"} <= set(results[1])
    assert [s["query"] for s in body["searches"]] == ["SpaceX founded", "Falcon 1 first launch"]
    # usage: the upstream's tokens for the whole task (both calls)
    spent = [c for c in llm.calls]
    assert len(spent) == 2 and body["usage"]["total_tokens"] == llm.stats.prompt_tokens + llm.stats.completion_tokens
    assert body["usage"]["total_tokens"] > 0
    assert body["convsearch"]["flags"]["degraded"] is False and body["convsearch"]["replaced"] is False
    assert body["convsearch"]["cited"] == [1, 2]
    # the client's system and developer messages never reach the agent's prompt
    sent = json.dumps([c.messages for c in llm.calls], ensure_ascii=False)
    assert "SYSTEM-SECRET" not in sent and "DEV-NOTE" not in sent


def test_stream_is_well_formed_and_says_what_the_json_says(client: TestClient) -> None:
    step = replace(search_calls(["深圳 露营 天气", "番禺 露营 天气"]), usage=Usage(30, 7))
    client.app.state.answer_llm = ScriptedLLM([step, cite_all], usage=Usage(40, 9))
    s = stream(client, {"model": "convsearch", "messages": [user("深圳和番禺最近适合露营吗？")],
                        "stream_options": {"include_usage": True}})
    assert len(s.chunks) > 4  # role, several text pieces, the finish, the usage
    assert s.chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    final = s.final
    # the two searches run at once: which one's results are numbered first varies
    assert final["choices"][0]["finish_reason"] == "stop" and {"Fact 1 [1].", "Fact 2 [2]."} <= set(
        re.findall(r"Fact \d+ \[\d+\]\.", s.content))
    assert s.usage == {"prompt_tokens": 70, "completion_tokens": 16, "total_tokens": 86}  # both calls
    assert {x["url"] for x in final["search_results"]} >= {"https://weather.example/shenzhen",
                                                           "https://weather.example/panyu"}
    assert len(final["searches"]) == 2 and final["convsearch"]["replaced"] is False
    # without include_usage: no usage chunk
    client.app.state.answer_llm = ScriptedLLM([search_call("AnySearch 价格"), "专业版每月 99 元 [1]。"])
    s2 = stream(client, {"messages": [user("AnySearch 专业版多少钱？")]})
    assert s2.usage is None and s2.content == "专业版每月 99 元 [1]。"
    assert s2.final["citations"][0] == "https://www.anysearch.example/pricing"


def test_the_stream_reader_refuses_a_broken_stream() -> None:
    good = ['data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": '
            '[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}',
            'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": '
            '[{"index": 0, "delta": {}, "finish_reason": "stop"}]}', "data: [DONE]"]
    assert read_stream(good).done
    for broken in (good[:2], [good[0], good[2]], [good[1].replace('"id": "c"', '"id": "d"'), *good],
                   [good[0], good[1], good[1], good[2]], [good[0], "event: x", *good[1:]],
                   [good[0], 'data: {"error": {"message": "boom"}}', *good[1:]]):
        with pytest.raises(StreamError):
            read_stream(broken)


def test_a_follow_up_by_x_session_id_and_tenant_isolation(client: TestClient) -> None:
    client.app.state.answer_llm = ScriptedLLM([search_call("AnySearch 价格"), "专业版每月 99 元 [1]。"])
    h = A | {"X-Session-Id": "s-chat-1"}
    first = client.post(URL, headers=h, json={"messages": [user("AnySearch 专业版多少钱？")]})
    assert first.status_code == 200 and first.json()["convsearch"]["session_id"] == "s-chat-1"
    seen: list[str] = []

    def record(msgs: list[dict[str, Any]], tools: Any) -> Any:
        seen.append(json.dumps(msgs, ensure_ascii=False))
        return search_call("免费版呢") if tools else "免费版每月 1000 次 [1]。"

    client.app.state.answer_llm = ScriptedLLM([record, record])
    second = client.post(URL, headers=h, json={"messages": [user("免费版呢？")]})  # only the last message
    assert second.status_code == 200, second.text
    assert "AnySearch 专业版多少钱" in seen[0] and "99 元" in seen[0]  # the stored turn is the context
    step = second.json()["searches"][0]
    assert "AnySearch" in step["searched"]  # the leaning tool query was rewritten from the session
    msgs = client.get("/v1/sessions/s-chat-1/messages", headers=A).json()["messages"]
    assert [x["role"] for x in msgs] == ["user", "assistant", "user", "assistant"]
    # the other tenant's session of the same id is empty, and its agent never sees acme's turns
    seen.clear()
    client.app.state.answer_llm = ScriptedLLM([record, record])
    client.post(URL, headers=B | {"X-Session-Id": "s-chat-1"}, json={"messages": [user("免费版呢？")]})
    assert "99 元" not in seen[0]
    assert client.get("/v1/sessions/s-chat-1/messages", headers=B).json()["messages"][:2] != msgs[:2]


def test_full_history_resolves_a_follow_up_without_a_session(client: TestClient) -> None:
    seen: list[str] = []

    def record(msgs: list[dict[str, Any]], tools: Any) -> Any:
        seen.append(json.dumps(msgs, ensure_ascii=False))
        return search_call("When did it first launch a rocket?") if tools else "In 2006 [1]."

    client.app.state.answer_llm = ScriptedLLM([record, record])
    r = client.post(URL, headers=A, json={"messages": [
        user("Who founded SpaceX?"), {"role": "assistant", "content": "Elon Musk, in 2002 [1]."},
        {"role": "tool", "content": "TOOL-OUTPUT", "tool_call_id": "x"},
        user("When did it first launch a rocket?")]})
    assert r.status_code == 200, r.text
    step = r.json()["searches"][0]
    assert step["searched"] == "When did SpaceX first launch a rocket?"
    assert "Elon Musk, in 2002" in seen[0] and "TOOL-OUTPUT" not in seen[0]


def test_profiles_are_models_and_scope_their_sessions(client: TestClient) -> None:
    models = client.get("/v1/models", headers=A).json()
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["convsearch", "convsearch/support-bot"]
    assert client.get("/v1/models/convsearch/support-bot", headers=A).json()["id"] == "convsearch/support-bot"
    missing = client.get("/v1/models/gpt-4o", headers=A)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "model_not_found"
    client.app.state.answer_llm = ScriptedLLM(["你好！"])
    r = client.post(URL, headers=A | {"X-Session-Id": "p1"},
                    json={"model": "convsearch/support-bot", "messages": [user("你好")]})
    assert r.status_code == 200 and r.json()["model"] == "convsearch/support-bot"
    assert r.json()["convsearch"]["flags"]["no_search_needed"] and r.json()["citations"] == []
    stored = client.get("/v1/sessions/p1/messages?agent=support-bot", headers=A).json()["messages"]
    assert len(stored) == 2 and client.get("/v1/sessions/p1/messages", headers=A).json()["messages"] == []
    assert client.get("/v1/models", headers={}).status_code == 401


def test_max_tokens_cuts_the_content_with_finish_reason_length(client: TestClient) -> None:
    answer = "SpaceX was founded by Elon Musk in 2002 in California [1]."
    client.app.state.answer_llm = ScriptedLLM([search_call("SpaceX founded"), answer])
    r = client.post(URL, headers=A, json={"messages": [user("Who founded SpaceX?")], "max_tokens": 3})
    choice = r.json()["choices"][0]
    assert choice["finish_reason"] == "length" and choice["message"]["content"] == "SpaceX was founded"
    client.app.state.answer_llm = ScriptedLLM([search_call("SpaceX founded"), answer])
    s = stream(client, {"messages": [user("Who founded SpaceX?")], "max_completion_tokens": 3})
    assert s.final["choices"][0]["finish_reason"] == "length" and s.content.split() == ["SpaceX", "was", "founded"]


def test_text_the_stream_cannot_take_back_is_followed_by_the_answer(client: TestClient) -> None:
    pre = "Let me look that up."
    script = [search_call("SpaceX founded", text=pre), "SpaceX was founded in 2002 [1]."]
    client.app.state.answer_llm = ScriptedLLM(list(script))
    s = stream(client, {"messages": [user("When was SpaceX founded?")]})
    assert s.content == pre + "\n\nSpaceX was founded in 2002 [1]." and s.final["convsearch"]["replaced"] is True
    client.app.state.answer_llm = ScriptedLLM(list(script))
    r = client.post(URL, headers=A, json={"messages": [user("When was SpaceX founded?")]})
    assert r.json()["choices"][0]["message"]["content"] == "SpaceX was founded in 2002 [1]."


def test_a_deadline_gives_a_partial_flagged_answer(bm25_index) -> None:
    with make_client(bm25_index, agent_deadline_s=1.0, agent_answer_reserve_s=0.9) as c:
        # step 1 searches (0.15 s): then less than the reserve is left, so no step 2: the final call answers
        c.app.state.answer_llm = ScriptedLLM([search_call("SpaceX founded"), "Founded in 2002 [1]."], delay_s=0.15)
        r = c.post(URL, headers=A, json={"messages": [user("When was SpaceX founded?")]})
    body = r.json()
    assert r.status_code == 200 and body["convsearch"]["flags"]["partial"] is True
    assert body["choices"][0]["message"]["content"] == "Founded in 2002 [1]." and len(body["searches"]) == 1


@pytest.mark.parametrize("payload, param", [
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "system", "content": "be brief"}]}, "messages"),
    ({"messages": [user("hi"), {"role": "assistant", "content": "hello"}]}, "messages"),
    ({"messages": [user("   ")]}, "messages.0.content"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                                {"type": "image_url", "image_url": {"url": "x"}}]}]},
     "messages.0.content.1"),
    ({"messages": [{"role": "robot", "content": "x"}]}, "messages.0.role"),
    ({"messages": [user("x")], "n": 2}, "n"),
    ({"messages": [user("x")], "max_tokens": 0}, "max_tokens"),
    ({"messages": [user("x")], "stream": "yes please"}, "stream"),
    ({"messages": "hello"}, "messages"),
    ({"model": "", "messages": [user("x")]}, "model"),
])
def test_bad_requests_get_an_openai_shaped_400(client: TestClient, payload: dict[str, Any], param: str) -> None:
    client.app.state.answer_llm = ScriptedLLM(["never"])
    r = client.post(URL, headers=A, json=payload)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error" and err["param"] == param and err["message"]
    assert "Traceback" not in r.text


def test_other_errors_are_openai_shaped(client: TestClient, bm25_index) -> None:
    client.app.state.answer_llm = ScriptedLLM(["never"])
    bad_json = client.post(URL, headers=A | {"Content-Type": "application/json"}, content=b'{"messages": [')
    assert bad_json.status_code == 400 and bad_json.json()["error"]["type"] == "invalid_request_error"
    no_key = client.post(URL, json={"messages": [user("x")]})
    assert no_key.status_code == 401 and no_key.json()["error"]["type"] == "authentication_error"
    unknown = client.post(URL, headers=A, json={"model": "gpt-4o", "messages": [user("x")]})
    assert unknown.status_code == 404 and unknown.json()["error"]["param"] == "model"
    session = client.post(URL, headers=A | {"X-Session-Id": " "}, json={"messages": [user("x")]})
    assert session.status_code == 400 and session.json()["error"]["param"] == "X-Session-Id"
    big = client.post(URL, headers=A, json={"messages": [user("x" * 2_000_000)]})
    assert big.status_code == 413 and big.json()["error"]["type"] == "invalid_request_error"
    # the rest of the API keeps its own error shape
    assert "type" not in client.post("/v1/search", headers=A, json={"query": ""}).json()["error"]
    with make_client(bm25_index, rate_limit=0.001, rate_burst=1) as c:
        c.app.state.answer_llm = ScriptedLLM(["你好！", "你好！"])
        assert c.post(URL, headers=A, json={"messages": [user("你好")]}).status_code == 200
        limited = c.post(URL, headers=A, json={"messages": [user("你好")]})
        assert limited.status_code == 429 and limited.json()["error"]["type"] == "rate_limit_error"
        assert int(limited.headers["Retry-After"]) >= 1


def test_without_an_upstream_llm_the_endpoint_says_so_with_503(client: TestClient) -> None:
    r = client.post(URL, headers=A, json={"messages": [user("AnySearch 专业版多少钱？")]})
    assert r.status_code == 503
    err = r.json()["error"]
    assert err["type"] == "server_error" and "CONVSEARCH_LLM_MODEL" in err["message"] and "Traceback" not in r.text
    with client.stream("POST", URL, headers=A, json={"messages": [user("x")], "stream": True}) as s:
        assert s.status_code == 503  # refused before any chunk, not a made-up answer


def test_metrics_count_chat_completions(client: TestClient) -> None:
    client.app.state.answer_llm = ScriptedLLM([search_call("SpaceX founded"), "Founded in 2002 [1]."],
                                              usage=Usage(10, 5))
    assert client.post(URL, headers=A, json={"messages": [user("When was SpaceX founded?")]}).status_code == 200
    text = client.get("/metrics").text
    assert 'convsearch_chat_completions_total{outcome="ok",stream="false"} 1.0' in text
    assert 'convsearch_chat_upstream_tokens_total{kind="prompt"} 10.0' in text  # the answer call's (the search
    # call's Completion reports none)
    assert 'convsearch_http_requests_total{method="POST",route="/v1/chat/completions",status="200"} 1.0' in text


def test_a_failure_inside_the_task_is_an_openai_error_never_a_traceback(client: TestClient,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from convsearch.agent.loop import Agent

    async def broken(*a: Any, **kw: Any) -> None:
        raise RuntimeError("the store fell over at /secret/path")

    monkeypatch.setattr(Agent, "_remember", broken)
    client.app.state.answer_llm = ScriptedLLM(["你好！"], default="你好！")
    h = A | {"X-Session-Id": "broken-1"}
    r = client.post(URL, headers=h, json={"messages": [user("你好")]})
    assert r.status_code == 500 and r.json()["error"]["type"] == "server_error"
    assert "/secret/path" not in r.text and "Traceback" not in r.text and r.json()["error"]["request_id"]
    with client.stream("POST", URL, headers=h, json={"messages": [user("你好")], "stream": True}) as s:
        lines = [x for x in s.iter_lines() if x]
    assert s.status_code == 200 and lines[-1] == "data: [DONE]"
    err = json.loads(lines[-2][6:])["error"]
    assert err["type"] == "server_error" and "/secret/path" not in "\n".join(lines) and "Traceback" not in lines[-2]
    with pytest.raises(StreamError, match="an error event"):
        read_stream(lines)
    text = client.get("/metrics").text
    assert 'convsearch_chat_completions_total{outcome="error",stream="true"} 1.0' in text
    assert 'convsearch_chat_completions_total{outcome="error",stream="false"} 1.0' in text


def test_a_profile_searches_only_its_backends(corpus) -> None:
    from convsearch.backends.fanout import FanOut
    from convsearch.testing.backends import ScriptedBackend
    from convsearch.types import Document

    kb = ScriptedBackend("kb", corpus)
    web = ScriptedBackend("web", [Document("w1", "SpaceX founded in 2002, a web page says.", title="Web: SpaceX",
                                           url="https://web.example/spacex")], paid=True)
    with make_client(FanOut([kb, web]), backends="kb,web", chat_profiles="kb-only=kb,everything") as c:
        def ask(model: str) -> dict[str, Any]:
            c.app.state.answer_llm = ScriptedLLM([search_call("SpaceX founded"), "Founded in 2002 [1]."])
            r = c.post(URL, headers=A, json={"model": model, "messages": [user("When was SpaceX founded?")]})
            assert r.status_code == 200, r.text
            return r.json()

        narrow = ask("convsearch/kb-only")
        assert {x["domain"] for x in narrow["search_results"]} == {"history.example"} and not web.calls
        wide = ask("convsearch/everything")
        assert "web.example" in {x["domain"] for x in wide["search_results"]} and web.calls
        assert [m["id"] for m in c.get("/v1/models", headers=A).json()["data"]] == [
            "convsearch", "convsearch/kb-only", "convsearch/everything"]


@pytest.mark.parametrize("spec", ["a=", "a=x y", "a,a", "-a", "a=b+", "a/b"])
def test_bad_profiles_are_one_line_config_errors(spec: str) -> None:
    from convsearch.errors import ConfigError

    with pytest.raises(ConfigError, match="CONVSEARCH_CHAT_PROFILES"):
        Settings.from_env({"CONVSEARCH_CHAT_PROFILES": spec})


def test_a_profile_naming_an_unknown_backend_stops_the_app(bm25_index) -> None:
    from convsearch.errors import ConfigError

    with pytest.raises(ConfigError, match="'web' names tavily, not among CONVSEARCH_BACKENDS"):
        make_client(bm25_index, chat_profiles="web=tavily")


@pytest.mark.parametrize("field, value", [("n", True), ("stream", 1), ("max_tokens", "5"), ("temperature", "0.2")])
def test_known_fields_take_their_json_type_only(client: TestClient, field: str, value: Any) -> None:
    client.app.state.answer_llm = ScriptedLLM(["never"])
    r = client.post(URL, headers=A, json={"messages": [user("x")], field: value})
    assert r.status_code == 400 and r.json()["error"]["param"] == field
