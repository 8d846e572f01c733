"""The agent's live tokens with the in-process ``ScriptedLLM`` (it has ``astream``): the tool-less final call
streams, a step call's answer comes in pieces after its call, a citation repair sends ``replace``."""

from __future__ import annotations

from datetime import date
from typing import Any

from convsearch import InMemoryBackend, Settings
from convsearch.agent import Agent
from convsearch.llm import ScriptedLLM
from convsearch.types import ToolCall


def search(query: str) -> ToolCall:
    import json

    return ToolCall("c1", "web_search", json.dumps({"query": query}, ensure_ascii=False))


class Recording(ScriptedLLM):
    """Counts the calls that went through ``astream``."""

    streamed = 0

    async def astream(self, *args: Any, **kw: Any) -> Any:
        type(self).streamed += 1
        async for ev in super().astream(*args, **kw):
            yield ev


def run(corpus: Any, replies: list[Any], question: str = "When was SpaceX founded?",
        **settings: Any) -> tuple[list[Any], Recording]:
    Recording.streamed = 0
    llm = Recording(replies)
    today = date(2024, 11, 30)
    agent = Agent(InMemoryBackend(corpus, today=today), llm, Settings(**({"agent_max_searches": 1} | settings)),
                  today=today)
    return list(agent.stream(question)), llm


def test_the_final_call_streams_and_the_tokens_are_the_answer(corpus) -> None:
    replies = [search("深圳 露营 天气"), "深圳最近三天多云转晴，适合露营 [1]。"]
    events, _ = run(corpus, replies, "深圳最近三天适合露营吗？")
    tokens = [e.data for e in events if e.kind == "token"]
    assert Recording.streamed == 1 and len(tokens) > 2 and "".join(tokens) == events[-1].data.text
    assert [e.kind for e in events][-2:] == ["citations", "done"] and "replace" not in [e.kind for e in events]


def test_a_step_call_answer_is_not_streamed_live_but_still_sent(corpus) -> None:
    events, _ = run(corpus, ["深圳最近三天多云转晴，适合露营。"], "深圳最近三天适合露营吗？", agent_max_searches=3,
                    agent_no_search_check="off")
    assert Recording.streamed == 0  # the tool was offered: its text could have come before tool calls
    assert "".join(e.data for e in events if e.kind == "token") == events[-1].data.text


def test_a_repair_after_streaming_sends_replace(corpus) -> None:
    replies = [search("SpaceX founded"), "SpaceX was founded in 2002 [9].", "SpaceX was founded in 2002 [1]."]
    events, _ = run(corpus, replies, agent_strict="on")
    kinds = [e.kind for e in events]
    done = events[-1].data
    assert "".join(e.data for e in events if e.kind == "token") == "SpaceX was founded in 2002 [9]."
    assert kinds[-3:] == ["replace", "citations", "done"] and events[-3].data == done.text
    assert done.text == "SpaceX was founded in 2002 [1]." and done.flags.repaired
