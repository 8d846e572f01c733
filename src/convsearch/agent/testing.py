"""Test helpers for the agent: scripted tool-call replies for ``convsearch.llm.ScriptedLLM`` (the one scripted
LLM) and a backend with a fixed delay per search.

``search_call`` / ``search_calls`` / ``raw_call`` build the Completions a tool-calling model sends;
``ScriptedLLM(..., usage=None, delay_s=0.15)`` fills in BPE-like token counts (``estimate_tokens``) and waits per
call like a server; ``last_tool_numbers`` reads the result numbers a scripted answer may cite.

>>> from convsearch.llm import ScriptedLLM
>>> llm = ScriptedLLM([search_call("深圳 天气 三天"), "多云 [1]。"], usage=None)
>>> call = search_call("深圳 天气 三天").tool_calls[0]
>>> call.name, call.arguments
('web_search', '{"query": "深圳 天气 三天"}')
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..backends.base import Capabilities, Filters, InMemoryBackend, Recency
from ..llm import estimate_prompt_tokens as prompt_tokens
from ..llm import estimate_tokens
from ..types import Completion, Document, Hit, ToolCall


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


__all__ = ["DelayedBackend", "estimate_tokens", "last_tool_numbers", "prompt_tokens", "raw_call",
           "search_call", "search_calls"]
