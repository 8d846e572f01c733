"""Memory layers, as pure functions over plain data.

- **short-term**: the stored window (the spine's filter rules) cut to a token budget, newest kept first;
- **summary**: the rolling summary of everything older, shown to the rewriter as one leading message;
- **task stack**: the results the assistant actually cited (``[n]`` in its reply) in the last few rounds;
- **profile** (opt-in): facts the user stated about themselves (a budget, where they live), kept across
  sessions and injected only when a turn asks for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..text import count_tokens, truncate_tokens
from ..types import Message
from .base import CitedResult, Fact, Summary

SUMMARY_NAME = "summary"


def fit_tokens(messages: Sequence[Message], budget: int | None) -> tuple[Message, ...]:
    """The newest messages whose tokens add up to at most ``budget``; the newest one is always kept (cut
    to the budget when it alone is longer). ``None`` or 0 means no budget."""
    if not budget or budget <= 0:
        return tuple(messages)
    out: list[Message] = []
    used = 0
    for m in reversed(messages):
        n = count_tokens(m.content)
        if used + n > budget:
            if not out:
                out.append(Message(m.role, truncate_tokens(m.content, budget), m.kind, m.partial, m.name))
            break
        out.append(m)
        used += n
    return tuple(reversed(out))


def summary_message(summary: Summary) -> Message:
    """The summary as the oldest message the rewriter sees: a user turn (it lists what the user talked
    and asked about), named ``summary`` so an LLM prompt or a UI can tell it apart."""
    return Message("user", summary.text, name=SUMMARY_NAME)


_REF_RE = re.compile(r"[\[［【]\s*(\d{1,3})\s*[\]］】]")


def cited_refs(text: str) -> list[int]:
    """The citation numbers a reply uses: "[1]", "［2］", "【3】" → [1, 2, 3] (in order, unique)."""
    return list(dict.fromkeys(int(m.group(1)) for m in _REF_RE.finditer(text)))


# --- user-stated facts (the opt-in profile) ---------------------------------------------------------

_AMOUNT_ZH = r"([0-9０-９][0-9０-９,，.]*\s*(?:万|千|百|k|K)?\s*(?:元|块钱|块|人民币|美元|美金|刀)?(?:以内|左右|以下|上下)?)"
_AMOUNT_EN = r"([$€£¥]\s?\d[\d,.]*\s*(?:k|K)?|\d[\d,.]*\s*(?:k|K)?\s*(?:dollars|usd|USD|euros?|EUR|yuan|RMB|pounds)?)"
_FACT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("budget", re.compile(r"预算\s*(?:是|为|大概|大约|在|有|只有|差不多|：|:)?\s*" + _AMOUNT_ZH)),
    ("budget", re.compile(r"\bbudget\s+(?:is|of|around|about|under|below|up to|is about|is around|is under)\s+"
                          r"(?:about |around |roughly |under |below |up to )?" + _AMOUNT_EN, re.IGNORECASE)),
    ("location", re.compile(r"(?:我住在|我来自|我人在|坐标)\s*([\u4e00-\u9fffA-Za-z]{2,12}?)(?=[，。！？,.!?；;\s]|$|工作|上班|生活|读书)")),
    ("location", re.compile(r"\bI(?: am|'m|’m)? (?:live|living|based|located|am based|am located) in "
                            r"([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,3})")),
    ("location", re.compile(r"\bI(?: am|'m|’m) in ([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,3})")),
)


def extract_facts(text: str, *, source: str | None = None) -> list[Fact]:
    """Facts the user states about themselves, by small zh/en patterns (the last statement of a key wins):
    "我的预算是 5000 元" → budget = "5000 元"; "I live in Shenzhen" → location = "Shenzhen"."""
    found: dict[str, str] = {}
    for key, pat in _FACT_PATTERNS:
        for m in pat.finditer(text):
            value = m.group(1).strip().rstrip(".,，。")
            if value:
                found[key] = value
    return [Fact(k, v, source) for k, v in found.items()]


# --- the assembled memory of one turn ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Memory:
    """What a turn knows about its conversation, layer by layer."""

    window: tuple[Message, ...]
    summary: Summary | None = None
    tasks: tuple[CitedResult, ...] = ()
    profile: tuple[Fact, ...] = ()

    def history(self) -> tuple[Message, ...]:
        """The messages the rewriter sees: the summary (when there is one) and then the window."""
        return ((summary_message(self.summary),) if self.summary else ()) + self.window

    def render(self) -> str:
        """The layers as text for an agent's prompt (empty when there is nothing to say)."""
        lines: list[str] = []
        if self.summary:
            lines.append(f"Earlier in this conversation: {self.summary.text}")
        if self.tasks:
            lines.append("Results cited earlier:")
            lines.extend(f"- {r.title or r.id}" + (f" ({r.url})" if r.url else "") for r in self.tasks)
        if self.profile:
            lines.append("What the user told us: " + "; ".join(f"{f.key} = {f.value}" for f in self.profile))
        return "\n".join(lines)


def dedupe_tasks(tasks: Iterable[CitedResult]) -> tuple[CitedResult, ...]:
    """One entry per document, the most recent round's first."""
    seen: set[str] = set()
    out: list[CitedResult] = []
    for r in tasks:
        if r.id not in seen:
            seen.add(r.id)
            out.append(r)
    return tuple(out)


__all__ = ["Memory", "SUMMARY_NAME", "cited_refs", "dedupe_tasks", "extract_facts", "fit_tokens", "summary_message"]
