"""The agent's prompts and the texts it shows the model, in the question's language: each is its language pack's
(``AgentTexts``: ``lang/zh/texts.py``, ``lang/en/texts.py``; a pack without texts of its own speaks English).

Search results reach the model only inside a fenced block introduced as data; the rules say that text inside
results is never an instruction. The tool schema, the search budget and the citation check live in code, so
nothing a result says can change them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..lang import reading
from ..lang.base import AgentTexts
from .types import Source


def texts(lang: str) -> AgentTexts:
    """The agent's texts in ``lang`` (English for a language whose pack has none)."""
    own = reading(lang).agent
    return own if own is not None else reading("en").agent  # type: ignore[return-value]


def system_prompt(lang: str, *, today: str, max_searches: int, max_chars: int) -> str:
    return texts(lang).system.format(today=today, max_searches=max_searches, max_chars=max_chars,
                                     max_words=max(1, max_chars * 2 // 3))


def no_tool_note(lang: str) -> str:
    """Said with the question when no search is needed (greetings, arithmetic)."""
    return texts(lang).no_tool


def source_block(sources: Sequence[Source]) -> str:
    """Numbered results as the model sees them: ``[n] title (domain, date)`` then the snippet."""
    lines = []
    for s in sources:
        meta = ", ".join(x for x in (s.domain, s.date or "") if x)
        lines.append(f"[{s.n}] {s.title}" + (f" ({meta})" if meta else ""))
        if s.snippet:
            lines.append(s.snippet)
    return "\n".join(lines)


def tool_result(lang: str, query: str, searched: str, sources: Sequence[Source], notes: Sequence[str] = ()) -> str:
    """The tool message for one search: what was searched and the results, fenced as data."""
    t = texts(lang)
    head = t.searched.format(searched=searched)
    if searched != query:
        head += t.your_query.format(query=query)
    body = t.no_results if not sources else "<results>\n" + source_block(sources) + "\n</results>"
    extra = "".join(f"\n{n}" for n in notes)
    return f"{head}\n{body}{extra}"


def repeat_refusal(lang: str, query: str, nums: Sequence[int]) -> str:
    t = texts(lang)
    refs = " ".join(f"[{n}]" for n in nums) or t.none
    return t.repeat_refusal.format(query=query, refs=refs)


def budget_refusal(lang: str, used: int) -> str:
    return texts(lang).budget_refusal.format(used=used)


def deadline_refusal(lang: str) -> str:
    return texts(lang).deadline_refusal


def final_instruction(lang: str, reason: str) -> str:
    """The user-side nudge of the last call (no tool offered): answer now from what is there."""
    return texts(lang).final_instruction.format(reason=reason)


def stop_reason(lang: str, reason: str) -> str:
    """Why the loop stops searching (``deadline``, ``budget`` or ``steps``), in words for the last call."""
    t = texts(lang)
    return {"deadline": t.stop_deadline, "budget": t.stop_budget, "steps": t.stop_steps}[reason]


def research_so_far(lang: str, lines: Sequence[str], kept: Sequence[Source]) -> str:
    """Earlier rounds, compressed: one conclusion line per round, plus the results already cited in full."""
    t = texts(lang)
    out = [t.research_head]
    out.extend(f"- {x}" for x in lines)
    if kept:
        out.append(t.cited_head)
        out.append("<results>\n" + source_block(kept) + "\n</results>")
    return "\n".join(out)


def memory_block(lang: str, sources: Sequence[Source], summary: str | None) -> str:
    """What the session remembers: the summary and the results cited in earlier answers (citable as [n])."""
    t = texts(lang)
    out: list[str] = []
    if summary:
        out.append(t.memory_summary.format(summary=summary))
    if sources:
        out.append(t.memory_cited)
        out.append("<results>\n" + source_block(sources) + "\n</results>")
    return "\n".join(out)


def repair_instruction(lang: str, problems: str, shown: Sequence[int]) -> str:
    nums = " ".join(f"[{n}]" for n in shown)
    return texts(lang).repair.format(problems=problems, nums=nums)


def degraded_note(lang: str) -> str:
    return texts(lang).degraded


def no_llm_note(lang: str, *, found: bool = True) -> str:
    """The first line of the answer when no LLM is configured (the sources follow when ``found``)."""
    t = texts(lang)
    return t.no_llm if found else t.no_llm_nothing


def no_results_note(lang: str) -> str:
    return texts(lang).no_results_note


__all__ = ["budget_refusal", "deadline_refusal", "degraded_note", "final_instruction", "memory_block",
           "no_llm_note", "no_results_note", "no_tool_note", "repair_instruction", "repeat_refusal", "research_so_far",
           "source_block", "stop_reason", "system_prompt", "texts", "tool_result"]
