"""The agent's live tokens with the in-process ``ScriptedLLM`` (it has ``astream``): every step and final call
streams, text a step wrote before its tool call is retracted (``replace`` ""), a citation repair sends
``replace``, and a client of ``complete`` / ``acomplete`` only still gets the answer in pieces."""

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
    agent = Agent(InMemoryBackend(corpus, today=today), llm,
                  Settings.from_env({}, **({"agent_max_searches": 1} | settings)), today=today)
    return list(agent.stream(question)), llm


def test_the_final_call_streams_and_the_tokens_are_the_answer(corpus) -> None:
    replies = [search("深圳 露营 天气"), "深圳最近三天多云转晴，适合露营 [1]。"]
    events, _ = run(corpus, replies, "深圳最近三天适合露营吗？")
    tokens = [e.data for e in events if e.kind == "token"]
    assert Recording.streamed == 2 and len(tokens) > 2 and "".join(tokens) == events[-1].data.text
    assert [e.kind for e in events][-2:] == ["citations", "done"] and "replace" not in [e.kind for e in events]


def test_a_step_call_answer_streams_live(corpus) -> None:
    events, _ = run(corpus, ["深圳最近三天多云转晴，适合露营。"], "深圳最近三天适合露营吗？", agent_max_searches=3,
                    agent_no_search_check="off")
    assert Recording.streamed == 1  # the tool was offered and not called: its text was the answer, streamed
    tokens = [e.data for e in events if e.kind == "token"]
    assert len(tokens) > 2 and "".join(tokens) == events[-1].data.text and "replace" not in [e.kind for e in events]


def standing(events: list[Any]) -> str:
    """The text a client shows: tokens appended, ``replace`` starting over with its text."""
    text = ""
    for e in events:
        if e.kind == "token":
            text += e.data
        elif e.kind == "replace":
            text = e.data
    return text


def test_text_before_a_tool_call_is_retracted(corpus) -> None:
    from convsearch.types import Completion

    step = Completion(text="Let me look that up first.", tool_calls=(search("SpaceX founded"),),
                      finish_reason="tool_calls")
    events, _ = run(corpus, [step, "SpaceX was founded in 2002 [1]."], agent_max_searches=2)
    kinds = [e.kind for e in events]
    done = events[-1].data
    first_replace = kinds.index("replace")
    assert "token" in kinds[:first_replace] and events[first_replace].data == ""
    assert kinds.index("search") > first_replace and kinds.count("replace") == 1
    assert standing(events) == done.text == "SpaceX was founded in 2002 [1]." and "look that up" not in done.text


def test_a_client_without_astream_gets_the_answer_in_pieces(corpus) -> None:
    class Plain:  # the older contract: acomplete only
        model = "plain"

        def __init__(self, replies: list[Any]) -> None:
            self.inner = ScriptedLLM(replies)

        async def acomplete(self, messages: Any, **kw: Any) -> Any:
            return await self.inner.acomplete(messages, **kw)

    import asyncio

    today = date(2024, 11, 30)
    agent = Agent(InMemoryBackend(corpus, today=today), Plain([search("SpaceX founded"),
                                                                "SpaceX was founded in 2002 [1]."]),
                  Settings.from_env({}, agent_max_searches=1), today=today)

    async def collect() -> list[Any]:
        return [ev async for ev in agent.astream("When was SpaceX founded?")]

    events = asyncio.run(collect())
    tokens = [e.data for e in events if e.kind == "token"]
    assert len(tokens) > 1 and "".join(tokens) == events[-1].data.text == "SpaceX was founded in 2002 [1]."
    assert "replace" not in [e.kind for e in events]


def test_a_repair_after_streaming_sends_replace(corpus) -> None:
    replies = [search("SpaceX founded"), "SpaceX was founded in 2002 [9].", "SpaceX was founded in 2002 [1]."]
    events, _ = run(corpus, replies, agent_strict="on")
    kinds = [e.kind for e in events]
    done = events[-1].data
    assert "".join(e.data for e in events if e.kind == "token") == "SpaceX was founded in 2002 [9]."
    assert kinds[-3:] == ["replace", "citations", "done"] and events[-3].data == done.text
    assert done.text == "SpaceX was founded in 2002 [1]." and done.flags.repaired


class Term:
    """A stand-in terminal: what was written, in order, and ``isatty()`` as told."""

    def __init__(self, tty: bool) -> None:
        self.tty, self.parts = tty, []

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> None:
        self.parts.append(s)

    def flush(self) -> None:
        pass

    def __str__(self) -> str:
        return "".join(self.parts)


def test_cli_printer_on_a_terminal_says_the_dropped_text_and_a_pipe_gets_only_the_answer() -> None:
    from convsearch.agent.cli import AnswerPrinter

    def play(tty: bool, events: list[tuple[str, str]]) -> tuple[str, str, str]:
        out, err = Term(tty), Term(tty)
        p = AnswerPrinter(out, err)
        for kind, data in events:
            getattr(p, kind)(data)
        p.finish()
        return str(out), str(err), p.text

    retract = [("token", "我先查"), ("token", "一下。"), ("replace", ""), ("token", "多云 [1]"), ("token", "。")]
    out, err, text = play(True, retract)
    assert out == "我先查一下。\n多云 [1]。\n" and "dropped" in err and text == "多云 [1]。"
    out, err, text = play(False, retract)
    assert out == "多云 [1]。\n" and err == "" and text == "多云 [1]。"
    repaired = [("token", "Founded in 2002 [9]."), ("replace", "Founded in 2002 [1].")]
    assert play(True, repaired)[0] == "Founded in 2002 [9].\n\nFounded in 2002 [1].\n"
    assert play(False, repaired)[0] == "Founded in 2002 [1].\n"
    assert play(True, [("replace", ""), ("token", "Hi.")]) == ("Hi.\n", "", "Hi.")  # nothing shown, nothing said
