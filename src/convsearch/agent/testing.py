"""Test doubles for the agent: a scripted tool-calling LLM and a backend with a fixed delay per search.

``ScriptedToolLLM`` answers each call from a script: a ``Completion``, a string (the answer text), an
``LLMError`` (raised), or a callable ``(messages, tools) -> Completion | str``; it can wait ``delay_s`` per call
(asynchronously: concurrent tasks overlap as they would against a server) and, when a Completion carries no
usage, fills in realistic token counts (``estimate_tokens``). ``calls`` records what every call was sent.

>>> llm = ScriptedToolLLM([search_call("深圳 天气 三天"), "多云 [1]。"])
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..backends.base import Capabilities, Filters, InMemoryBackend, Recency
from ..llm import LLMBadOutput, LLMError
from ..types import Completion, Document, Hit, ToolCall, Usage

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z0-9_]+")
_PUNCT = re.compile(r"[^\sA-Za-z0-9_\u3400-\u9fff]")


def estimate_tokens(text: str) -> int:
    """BPE-like token count (what an OpenAI-style tokenizer gives, roughly): a Chinese character ≈ 0.7 token,
    a Latin word ≈ 1.3, punctuation 1 per 2."""
    return int(round(0.7 * len(_CJK.findall(text)) + 1.3 * len(_LATIN.findall(text)) + 0.5 * len(_PUNCT.findall(text))))


def prompt_tokens(messages: Sequence[Any], tools: Sequence[dict[str, Any]] | None) -> int:
    n = 3
    for m in messages:
        n += 4 + estimate_tokens(str(m.get("content") or ""))
        for c in m.get("tool_calls") or ():
            n += 10 + estimate_tokens(c["function"]["arguments"])
    if tools:
        n += estimate_tokens(json.dumps(tools, ensure_ascii=False))
    return n


def search_call(query: str, recency: str | None = None, *, id: str | None = None, text: str = "") -> Completion:
    """A Completion with one ``web_search`` call."""
    return search_calls([(query, recency)], text=text, ids=[id] if id else None)


def search_calls(calls: Sequence[tuple[str, str | None] | str], *, text: str = "",
                 ids: Sequence[str] | None = None) -> Completion:
    """A Completion with several ``web_search`` calls in one step (run concurrently by the agent)."""
    out = []
    for i, c in enumerate(calls):
        q, rec = (c, None) if isinstance(c, str) else c
        args = {"query": q} | ({"recency": rec} if rec else {})
        out.append(ToolCall(ids[i] if ids else f"call_{i}_{abs(hash(q)) % 10_000}", "web_search",
                            json.dumps(args, ensure_ascii=False)))
    return Completion(text=text, tool_calls=tuple(out), finish_reason="tool_calls")


def raw_call(arguments: str, name: str = "web_search") -> Completion:
    """A Completion with one tool call whose arguments are given raw (malformed-argument tests)."""
    return Completion(tool_calls=(ToolCall("call_raw", name, arguments),), finish_reason="tool_calls")


Item = Any  # Completion | str | LLMError | Callable[[list[dict], list | None], Completion | str]


class ScriptedToolLLM:
    """The LLM contract (``complete`` / ``acomplete`` with ``tools``) answered from a script, then ``default``."""

    def __init__(self, script: Sequence[Item] = (), *, default: Item | None = None, delay_s: float = 0.0,
                 model: str = "scripted-tools") -> None:
        self.script = list(script)
        self.default = default
        self.delay_s = delay_s
        self.model = model
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def _reply(self, messages: Sequence[Any], tools: Sequence[dict[str, Any]] | None,
               budget_s: float | None) -> Any:
        msgs = [dict(m) for m in messages]
        with self._lock:
            self.calls.append({"messages": msgs, "tools": tools, "budget_s": budget_s})
            item = self.script.pop(0) if self.script else self.default
        if item is None:
            raise LLMBadOutput("no scripted reply left")
        if isinstance(item, LLMError):
            raise item
        if callable(item) and not isinstance(item, (str, Completion)):
            item = item(msgs, tools)
        if isinstance(item, str):
            item = Completion(text=item, finish_reason="stop")
        if not isinstance(item, Completion):
            return item  # garbage stays garbage: the agent must cope
        if not item.usage.total_tokens:
            out = item.text + "".join(c.arguments for c in item.tool_calls)
            item = replace(item, usage=Usage(prompt_tokens(msgs, tools), max(1, estimate_tokens(out))))
        return item

    def complete(self, messages: Sequence[Any], *, tools: Sequence[dict[str, Any]] | None = None,
                 schema: type | None = None, budget_s: float | None = None,
                 max_tokens: int | None = None) -> Completion:
        if self.delay_s:
            time.sleep(self.delay_s)
        return self._reply(messages, tools, budget_s)

    async def acomplete(self, messages: Sequence[Any], *, tools: Sequence[dict[str, Any]] | None = None,
                        schema: type | None = None, budget_s: float | None = None,
                        max_tokens: int | None = None) -> Completion:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return self._reply(messages, tools, budget_s)

    def close(self) -> None:
        pass


@dataclass
class DelayedBackend:
    """A term-overlap backend (InMemoryBackend's ranking, each document's words computed once) whose every
    search waits ``delay_s`` (asynchronously in ``asearch``): a stand-in for a web provider's round trip.
    ``queries`` records what was searched, ``in_flight_max`` the overlap seen."""

    inner: InMemoryBackend
    delay_s: float = 0.08
    name: str = "delayed"

    def __post_init__(self) -> None:
        from ..text import words

        self.capabilities: Capabilities = self.inner.capabilities
        self.queries: list[str] = []
        self.in_flight = 0
        self.in_flight_max = 0
        self._words = words
        self._terms = {d.id: frozenset(words(f"{d.title} {d.text}")) for d in self.inner.docs.values()}

    @classmethod
    def of(cls, docs: Sequence[Document], delay_s: float = 0.08, **kw: Any) -> DelayedBackend:
        return cls(InMemoryBackend(docs, **kw), delay_s)

    def _rank(self, query: str, top_k: int, filters: Filters | None, recency: Recency | None) -> list[Hit]:
        from datetime import date as _date

        from ..backends.base import _doc_hit, hit_date

        q = frozenset(self._words(query))
        f = Filters.of(filters)
        oldest = Recency.parse(recency).since(self.inner.today or _date.today()) if recency else None
        scored = []
        for doc_id, terms in self._terms.items():
            n = len(q & terms)
            if not n:
                continue
            h = _doc_hit(self.inner.docs[doc_id], float(n), self.name)
            if f is not None and not f.matches(h):
                continue
            if oldest is not None and ((d := hit_date(h)) is None or d < oldest):
                continue
            scored.append((n, doc_id, h))
        scored.sort(key=lambda p: (-p[0], p[1]))
        return [replace(h, rank=r) for r, (_, _, h) in enumerate(scored[:top_k], start=1)]

    def search(self, query: str, *, top_k: int = 10, filters: Filters | None = None, recency: Recency | None = None,
               dense_query: str | None = None) -> list[Hit]:
        self.queries.append(query)
        time.sleep(self.delay_s)
        return self._rank(query, top_k, filters, recency)

    async def asearch(self, query: str, *, top_k: int = 10, filters: Filters | None = None,
                      recency: Recency | None = None, dense_query: str | None = None) -> list[Hit]:
        self.queries.append(query)
        self.in_flight += 1
        self.in_flight_max = max(self.in_flight_max, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight -= 1
        return self._rank(query, top_k, filters, recency)

    def close(self) -> None:
        pass


def last_tool_numbers(messages: Sequence[dict[str, Any]]) -> list[int]:
    """The result numbers in the prompt's tool messages and memory blocks (what a scripted model may cite)."""
    nums: list[int] = []
    for m in messages:
        if m.get("role") in ("tool", "assistant", "system"):
            nums.extend(int(x) for x in re.findall(r"^\[(\d+)\] ", str(m.get("content") or ""), re.MULTILINE))
    return list(dict.fromkeys(nums))


__all__ = ["DelayedBackend", "ScriptedToolLLM", "estimate_tokens", "last_tool_numbers", "prompt_tokens", "raw_call",
           "search_call", "search_calls"]
