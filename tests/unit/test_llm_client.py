"""The LLM client's pure parts: Secret, settings, request payloads, reply parsing, the scripted double."""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import pytest
from pydantic import BaseModel, ConfigDict

from convsearch.config import Settings
from convsearch.errors import BackendError, ConfigError
from convsearch.llm import (
    LLM,
    Deadline,
    LLMBadOutput,
    LLMConfig,
    LLMSettings,
    LLMTimeout,
    ScriptedLLM,
    Secret,
    assistant_message,
    llm_config,
    llm_configured,
    parse_structured,
    request_payload,
    strip_fences,
    to_completion,
    tool_message,
    wire_message,
)
from convsearch.types import Completion, Message, ToolCall, Usage


class Pick(BaseModel):
    model_config = ConfigDict(extra="forbid")
    variants: list[str]


# --- Secret -----------------------------------------------------------------------------------------
def test_secret_prints_only_the_variable_name():
    s = Secret.from_env_var("CONVSEARCH_LLM_API_KEY", env={"CONVSEARCH_LLM_API_KEY": "sk-live-abc123"})
    assert s is not None and s.reveal() == "sk-live-abc123"
    for text in (repr(s), str(s), f"{s}", repr([s]), repr({"k": s})):
        assert "sk-live" not in text
    assert repr(s) == "Secret(env='CONVSEARCH_LLM_API_KEY')"
    assert repr(Secret.from_token("sk-x")) == "Secret(<token>)"


def test_secret_takes_the_first_variable_set_and_skips_blanks():
    env = {"A": "  ", "B": "sk-b"}
    s = Secret.from_env_var("A", "B", env=env)
    assert s is not None and s.env_var == "B" and s.reveal() == "sk-b"
    assert Secret.from_env_var("C", env=env) is None


def test_secret_scrubs_its_value_and_survives_pickling():
    s = Secret.from_token("sk-zzz")
    assert s.scrub("bad key sk-zzz given") == "bad key *** given"
    assert pickle.loads(pickle.dumps(s)).reveal() == "sk-zzz"


# --- settings -----------------------------------------------------------------------------------------
def test_settings_read_llm_variables_with_openai_fallbacks():
    s = Settings.from_env({"CONVSEARCH_LLM_MODEL": "qwen2.5", "OPENAI_BASE_URL": "http://localhost:11434/v1",
                           "OPENAI_API_KEY": "sk-from-openai", "CONVSEARCH_LLM_TIMEOUT_S": "1.5"})
    c = LLMSettings.of(s)
    assert c.base_url == "http://localhost:11434/v1"
    assert c.api_key is not None and c.api_key.env_var == "OPENAI_API_KEY"
    assert c.timeout_s == 1.5 and llm_configured(s) and llm_configured(c)
    assert "sk-from-openai" not in repr(s)
    cfg = llm_config(s)
    assert cfg.model == "qwen2.5" and cfg.timeout_s == 1.5 and "sk-from-openai" not in repr(cfg)


def test_convsearch_variables_win_over_openai_ones():
    s = Settings.from_env({"CONVSEARCH_LLM_API_KEY": "sk-ours", "OPENAI_API_KEY": "sk-theirs",
                           "CONVSEARCH_LLM_BASE_URL": "http://a/v1", "OPENAI_BASE_URL": "http://b/v1"})
    c = LLMSettings.of(s)
    assert c.api_key.reveal() == "sk-ours" and c.base_url == "http://a/v1"


def test_settings_defaults_and_validation():
    s = Settings()
    c = LLMSettings.of(s)
    assert s.rewriter == "auto" and c.timeout_s == 3.0 and not llm_configured(s)
    assert c.max_zh_chars == 30 and c.max_en_words == 20
    with pytest.raises(ConfigError, match="CONVSEARCH_LLM_MODEL"):
        llm_config(s)
    for env in ({"CONVSEARCH_LLM_TIMEOUT_S": "0"}, {"CONVSEARCH_LLM_STRUCTURED": "xml"},
                {"CONVSEARCH_LLM_TIMEOUT_S": "soon"}):
        with pytest.raises(ConfigError):
            Settings.from_env(env)
    blocked = LLMSettings.of(Settings.from_env({"CONVSEARCH_LLM_BLOCKED_WORDS": "竞品, competitor ,"})).blocked
    assert blocked == ("竞品", "competitor")


def test_a_key_passed_as_an_override_becomes_a_secret():
    s = Settings.from_env({}, llm_api_key="sk-override")
    key = LLMSettings.of(s).api_key
    assert isinstance(key, Secret) and "sk-override" not in repr(s) and "sk-override" not in repr(LLMSettings.of(s))


def test_llm_config_rejects_nonsense():
    with pytest.raises(ConfigError):
        LLMConfig(model="")
    with pytest.raises(ConfigError):
        LLMConfig(model="m", structured="yaml")
    with pytest.raises(ConfigError):
        LLMConfig(model="m", max_concurrency=0)


# --- payloads ---------------------------------------------------------------------------------------
MSGS = [{"role": "system", "content": "rewrite"}, {"role": "user", "content": "价格呢？"}]


def test_plain_payload_has_no_response_format():
    p = request_payload(LLMConfig(model="m"), MSGS, None, 96)
    assert p == {"model": "m", "messages": MSGS, "temperature": 0.0, "max_tokens": 96}


def test_json_schema_payload_is_strict_and_named():
    p = request_payload(LLMConfig(model="m"), MSGS, Pick, None)
    rf = p["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "Pick" and rf["json_schema"]["strict"]
    assert rf["json_schema"]["schema"]["additionalProperties"] is False
    assert "max_tokens" not in p


def test_tools_payload_forces_the_function():
    p = request_payload(LLMConfig(model="m", structured="tools"), MSGS, Pick, None)
    assert p["tools"][0]["function"]["name"] == "Pick"
    assert p["tool_choice"] == {"type": "function", "function": {"name": "Pick"}}
    assert "response_format" not in p


@pytest.mark.parametrize("mode", ["json_object", "prompt"])
def test_json_object_and_prompt_modes_put_the_schema_in_the_system_message(mode):
    p = request_payload(LLMConfig(model="m", structured=mode), MSGS, Pick, None)
    assert "JSON Schema" in p["messages"][0]["content"] and p["messages"][-1] == MSGS[-1]
    assert ("response_format" in p) == (mode == "json_object")
    assert MSGS[0]["content"] == "rewrite"  # the caller's messages are not mutated


WEB_SEARCH = {"type": "function", "function": {"name": "web_search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}


def test_tools_go_into_the_payload_and_messages_keep_their_tool_fields():
    call = ToolCall("call_7", "web_search", '{"query": "AnySearch 价格"}')
    msgs = [Message("system", "你是搜索助手"), {"role": "user", "content": "AnySearch 多少钱？"},
            assistant_message(Completion(tool_calls=(call,))), tool_message(call, "[1] 专业版每月 99 元")]
    p = request_payload(LLMConfig(model="m"), msgs, None, None, tools=[WEB_SEARCH])
    assert p["tools"] == [WEB_SEARCH] and "tool_choice" not in p
    assert p["messages"][0] == {"role": "system", "content": "你是搜索助手"}
    assert p["messages"][2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_7", "type": "function", "function": {"name": "web_search", "arguments": call.arguments}}]}
    assert p["messages"][3] == {"role": "tool", "tool_call_id": "call_7", "content": "[1] 专业版每月 99 元"}
    assert wire_message(Message("user", "hi", name="alice")) == {"role": "user", "content": "hi", "name": "alice"}
    with pytest.raises(ValueError, match="cannot be combined"):
        request_payload(LLMConfig(model="m", structured="tools"), msgs, Pick, None, tools=[WEB_SEARCH])


# --- parsing ----------------------------------------------------------------------------------------
def _resp(content=None, tool_args=None, choices=True, *, tools=(), usage=None, finish="stop"):
    calls = [SimpleNamespace(id=f"c{i}", function=SimpleNamespace(arguments=a, name=n))
             for i, (n, a) in enumerate(tools)]
    if tool_args:
        calls.append(SimpleNamespace(id="c9", function=SimpleNamespace(arguments=tool_args, name="Pick")))
    msg = SimpleNamespace(content=content, tool_calls=calls or None)
    return SimpleNamespace(choices=[SimpleNamespace(message=msg, finish_reason=finish)] if choices else [],
                           usage=usage, model="m-1")


def test_strip_fences():
    assert strip_fences('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert strip_fences("plain") == "plain"


def test_parse_structured_accepts_fences_and_prose_around_the_object():
    assert parse_structured('```json\n{"variants": ["a"]}\n```', Pick).variants == ["a"]
    assert parse_structured('Sure! {"variants": ["b"]} Hope this helps.', Pick).variants == ["b"]


@pytest.mark.parametrize("raw", ["", "not json", '{"variants": "a"}', '{"variants": [], "extra": 1}'])
def test_parse_structured_rejects_bad_output(raw):
    with pytest.raises(LLMBadOutput):
        parse_structured(raw, Pick)


def test_to_completion_text_tool_calls_and_failures():
    c = to_completion(_resp("AnySearch 的价格", usage=SimpleNamespace(prompt_tokens=30, completion_tokens=5)))
    assert (c.text, c.tool_calls, c.usage, c.model, c.finish_reason) == ("AnySearch 的价格", (), Usage(30, 5), "m-1",
                                                                          "stop")
    assert to_completion(_resp(None, tool_args='{"variants": ["x"]}'), schema=Pick).parsed.variants == ["x"]
    assert to_completion(_resp('{"variants": ["y"]}'), schema=Pick).parsed.variants == ["y"]
    with pytest.raises(LLMBadOutput, match="empty content") as info:
        to_completion(_resp("  ", usage=SimpleNamespace(prompt_tokens=9, completion_tokens=1)))
    assert info.value.usage == Usage(9, 1)  # a rejected reply still cost its tokens
    with pytest.raises(LLMBadOutput, match="tool call instead of text"):
        to_completion(_resp(None, tool_args="{}"))
    with pytest.raises(LLMBadOutput, match="no choices"):
        to_completion(_resp(choices=False))


def test_to_completion_with_tools_keeps_every_call_and_raw_arguments():
    r = _resp(None, tools=[("web_search", '{"query": "深圳 天气"}'), ("web_search", '{"query": "weather'), ("x", "")],
              finish="tool_calls")
    c = to_completion(r, tools=True)
    assert [t.name for t in c.tool_calls] == ["web_search", "web_search", "x"] and c.text == ""
    assert c.tool_calls[1].arguments == '{"query": "weather' and c.finish_reason == "tool_calls"
    assert c.usage == Usage() and len({t.id for t in c.tool_calls}) == 3
    with pytest.raises(LLMBadOutput, match="empty content"):
        to_completion(_resp(""), tools=True)
    assert to_completion(_resp("done"), tools=True).text == "done"
    # with tools and a schema, a tool call is an answer too (the final answer is the one validated)
    assert to_completion(r, schema=Pick, tools=True).parsed is None


def test_llm_errors_are_backend_errors_with_a_reason():
    e = LLMTimeout("timed out (budget 3.00 s)")
    assert isinstance(e, BackendError) and e.reason == str(e) and e.http_status == 504


def test_deadline():
    d = Deadline(10.0)
    assert 9.0 < d.remaining() <= 10.0 and not d.expired()
    assert Deadline(0.0).expired()


def test_stream_reply_falls_back_for_clients_without_astream():
    import asyncio

    from convsearch.llm import stream_reply

    class SyncOnly:  # the older contract: complete only
        model = "sync"

        def complete(self, messages, **kw):
            return Completion(text="专业版每月 99 元 [1]。", usage=Usage(3, 4))

    class AsyncOnly(SyncOnly):
        async def acomplete(self, messages, **kw):
            return Completion(text="Founded in 2002 [1].", tool_calls=(ToolCall("c", "web_search", "{}"),))

    async def collect(llm, tools=None):
        return [ev async for ev in stream_reply(llm, MSGS, tools=tools, budget_s=1.0)]

    for llm, text in ((SyncOnly(), "专业版每月 99 元 [1]。"), (AsyncOnly(), "Founded in 2002 [1].")):
        events = asyncio.run(collect(llm))
        assert len(events) == 1 and events[0].completion is not None and events[0].completion.text == text
        assert events[0].text == "" and not events[0].tool_call  # no deltas: the caller chunks the text
    tool = [{"type": "function", "function": {"name": "web_search"}}]
    streamed = asyncio.run(collect(ScriptedLLM([(ToolCall("c", "web_search", "{}"),)]), tools=tool))
    assert [e.tool_call for e in streamed] == [True, False] and streamed[-1].completion is not None


def test_scripted_llm_as_a_tool_calling_model():
    import asyncio
    import time

    from convsearch.llm import estimate_tokens

    seen = []

    def reply(msgs, tools):  # two parameters: called with the tools offered (None when none)
        seen.append(tools)
        return "多云 [1]。" if tools is None else (ToolCall("c1", "web_search", '{"query": "深圳 天气"}'),)

    tool = [{"type": "function", "function": {"name": "web_search"}}]
    llm = ScriptedLLM(default=reply, usage=None, delay_s=0.1)

    async def both():
        return await asyncio.gather(llm.acomplete(MSGS, tools=tool), llm.acomplete(MSGS))

    t0 = time.perf_counter()
    called, answered = asyncio.run(both())
    assert time.perf_counter() - t0 < 0.19  # the two waits overlapped
    assert seen == [tool, None] and called.tool_calls[0].name == "web_search" and answered.text == "多云 [1]。"
    assert answered.usage.completion_tokens == estimate_tokens("多云 [1]。") > 0
    assert called.usage.prompt_tokens > answered.usage.prompt_tokens > 0  # the schema is counted when offered
    assert llm.calls[0].tools == tuple(tool) and llm.calls[1].tools == ()
    assert ScriptedLLM([lambda m: 42]).complete(MSGS) == 42  # garbage stays garbage: the caller must cope


# --- the scripted double ------------------------------------------------------------------------------
def test_scripted_llm_follows_its_script_and_records_calls():
    llm = ScriptedLLM(["a", LLMTimeout("slow"), '{"variants": ["v"]}', lambda msgs: msgs[-1]["content"].upper()],
                      default="dflt", usage=Usage(10, 2))
    assert isinstance(llm, LLM)
    first = llm.complete(MSGS)
    assert isinstance(first, Completion) and first.text == "a" and first.usage == Usage(10, 2)
    with pytest.raises(LLMTimeout):
        llm.complete(MSGS)
    assert llm.complete(MSGS, schema=Pick).parsed.variants == ["v"]
    assert llm.complete([{"role": "user", "content": "abc"}]).text == "ABC"
    assert llm.complete(MSGS, budget_s=1.0).text == "dflt"
    assert len(llm.calls) == 5 and llm.calls[-1].budget_s == 1.0 and llm.calls[2].schema is Pick
    assert llm.stats.prompt_tokens == 40 and llm.stats.completion_tokens == 8  # four answers, the timeout none


def test_scripted_llm_scripts_tool_calls_and_usage():
    call = ToolCall("c1", "web_search", '{"query": "AnySearch"}')
    both = Completion(text="先查一下", tool_calls=(call, ToolCall("c2", "web_search", "{bad")), usage=Usage(50, 7))
    llm = ScriptedLLM([call, both, Completion(tool_calls=(call,))], model="s")
    c = llm.complete(MSGS, tools=[WEB_SEARCH])
    assert c.tool_calls == (call,) and c.model == "s" and llm.calls[0].tools == (WEB_SEARCH,)
    c = llm.complete(MSGS, tools=[WEB_SEARCH])
    assert c.usage == Usage(50, 7) and c.tool_calls[1].arguments == "{bad" and c.text == "先查一下"
    with pytest.raises(LLMBadOutput, match="tool call instead of text"):
        llm.complete(MSGS)  # no tools offered: a tool call is not an answer


def test_public_names_are_locked():
    import convsearch.llm as llm_mod
    import convsearch.rewrite.enhance as enhance_mod
    import convsearch.rewrite.llm as rewrite_llm_mod

    assert sorted(llm_mod.__all__) == [
        "LLM", "LLMBadOutput", "LLMConfig", "LLMError", "LLMRateLimited", "LLMRequestRejected", "LLMSettings",
        "LLMStats",
        "LLMTimeout", "LLMUnavailable", "MessageLike", "NOT_CONFIGURED", "NoLLM", "OpenAILLM", "STRUCTURED_MODES",
        "ScriptedCall", "ScriptedLLM", "Secret", "SharedLLM", "Slots", "StreamEvent", "Structured", "assistant_message",
        "endpoint_slots", "estimate_prompt_tokens", "estimate_tokens", "llm_config", "llm_configured",
        "open_llm",
        "parse_structured", "request_payload", "shared_llm", "stream_reply", "strip_fences",
        "to_completion", "tool_message", "wire_message"]
    assert sorted(enhance_mod.__all__) == [
        "Chain", "Composed", "EnhanceRequest", "Enhanced", "Enhancer", "EnhancerRewriter", "Gated", "HyDE", "LLM",
        "Logged", "Named", "Passthrough", "RULES_SURE", "Rules", "RulesWhenSure", "SkipFilterOnly", "auto_rewriter",
        "enhance_with", "from_rewrite", "hyde_search"]
    for mod in (llm_mod, enhance_mod, rewrite_llm_mod):
        for name in mod.__all__:
            assert hasattr(mod, name), name
