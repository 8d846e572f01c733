"""The agent's decisions that need no I/O, as pure functions: skip the tool, how many results, is a tool call
well-formed, is its query fit to send, what one round concluded.

>>> no_search_reason("谢谢！")
'thanks'
>>> result_count("compare A, B and C on battery and camera", simple=5, compare=8)
10
>>> parse_tool_call('{"query": "深圳 天气 三天", "recency": "week"}').query
'深圳 天气 三天'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..backends.base import Recency
from ..lang import detect, reading
from ..resolve.guard import blocked_words_found, content_words, query_length
from ..text import CJK_RE, words

# --- the no-search pre-check ------------------------------------------------------------------------
_GREETING_RE = re.compile(
    r"^\s*(?:(?:hi|hello|hey|good (?:morning|afternoon|evening)|howdy)(?: there)?|你好|您好|嗨|哈喽|早上好|"
    r"晚上好|下午好|早安|晚安|在吗)\s*[!！.。,，~～?？]*\s*$", re.IGNORECASE)
_THANKS_RE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|great|perfect|cool)[,，!！.。\s]*)?(?:thanks?(?: you)?(?: (?:so|very) much)?(?: a lot)?|"
    r"thx|cheers|谢谢(?:你|您)?|多谢|感谢(?:你|您)?|好的?[,，]?谢谢|辛苦了|bye|goodbye|再见|拜拜)"
    r"\s*[!！.。,，~～]*\s*$", re.IGNORECASE)
_ARITH_CORE = r"[-+]?\d+(?:\.\d+)?(?:\s*[-+*/×÷^x]\s*[-+]?\(?\d+(?:\.\d+)?\)?)+"
_ARITH_RE = re.compile(
    rf"^\s*(?:what(?:'s| is)\s+|calculate\s+|compute\s+|计算\s*|算一下\s*|请问\s*)?\(?{_ARITH_CORE}\)?\s*"
    r"(?:=\s*\??|等于(?:多少|几)?|是多少|得多少|[?？])?\s*[?？]?\s*$", re.IGNORECASE)


def no_search_reason(question: str) -> str | None:
    """Why ``question`` obviously needs no search (``greeting``, ``thanks``, ``arithmetic``), or None.

    Only the obvious cases: anything else is left to the model, whose prompt says when not to search."""
    q = question.strip()
    if _THANKS_RE.match(q):
        return "thanks"
    if _GREETING_RE.match(q):
        return "greeting"
    if _ARITH_RE.match(q):
        return "arithmetic"
    return None


# --- dynamic result count ---------------------------------------------------------------------------
_COMPARE_RE = re.compile(
    r"\b(?:compare[ds]?|comparison|vs\.?|versus|difference(?:s)? between|differ|better|pros and cons|which (?:one|is)"
    r")\b|对比|比较|区别|差别|差异|哪个(?:好|更)|优缺点|相比|还是|vs", re.IGNORECASE)
_LIST_SEP_RE = re.compile(r"[、,，/]|\band\b|\bor\b|和|与|跟|及", re.IGNORECASE)


def entity_count(question: str) -> int:
    """How many things the question names in a list ("A、B 和 C", "A, B and C"): separators + 1, from 1."""
    seps = _LIST_SEP_RE.findall(question)
    return 1 + len(seps) if seps else 1


def is_comparison(question: str) -> bool:
    return bool(_COMPARE_RE.search(question)) or entity_count(question) >= 3


def result_count(question: str, *, simple: int, compare: int) -> int:
    """Results per search: ``simple`` for a simple question, ``compare`` for a comparison or a question naming
    several things, two more (at most 10, never fewer than ``compare``) for three or more."""
    if not is_comparison(question):
        return simple
    return max(compare, min(10, compare + 2)) if entity_count(question) >= 3 else compare


# --- tool calls ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ToolArgs:
    """A parsed ``web_search`` call, or ``error``: the message the model gets back instead of results."""

    query: str = ""
    recency: Recency = Recency.NO_LIMIT
    error: str | None = None
    recency_given: bool = False  # False: the pipeline may pick a window (a time-sensitive question on the web)


RECENCY_VALUES = ", ".join(r.value for r in Recency)


def parse_tool_call(arguments: str, name: str = "web_search") -> ToolArgs:
    """A model's call as ToolArgs; junk (not JSON, no query, unknown recency, another tool) becomes an error
    message for the model, never an exception."""
    if name != "web_search":
        return ToolArgs(error=f"error: unknown tool {name!r}; the only tool is web_search(query, recency)")
    try:
        args = json.loads(arguments) if arguments and arguments.strip() else {}
    except (json.JSONDecodeError, TypeError, ValueError):
        return ToolArgs(error="error: the arguments are not valid JSON; call web_search with "
                              '{"query": "3-8 keywords", "recency": "no_limit"}')
    if not isinstance(args, dict):
        return ToolArgs(error="error: the arguments must be a JSON object with a 'query' string")
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        return ToolArgs(error="error: 'query' is missing or empty; give 3-8 keywords")
    raw = args.get("recency")
    if raw is None or raw == "":
        recency = Recency.NO_LIMIT
    else:
        try:
            recency = Recency(str(raw).strip().lower())
        except ValueError:
            return ToolArgs(query=query.strip(),
                            error=f"error: unknown recency {raw!r}; use one of {RECENCY_VALUES}")
    extra = sorted(set(args) - {"query", "recency"})
    if extra:
        return ToolArgs(query=query.strip(), error=f"error: unknown argument(s) {', '.join(extra)}; "
                                                   "web_search takes query and recency only")
    return ToolArgs(query=" ".join(query.split()), recency=recency, recency_given=raw not in (None, ""))


def call_key(query: str, recency: Recency) -> tuple[str, str]:
    """What makes two calls identical: the same words in any order and spacing, the same window."""
    return " ".join(sorted(words(query))), recency.value


@dataclass(frozen=True, slots=True)
class Guarded:
    """A query after the guardrails: ``query`` to send (maybe shortened), ``error`` when refused, ``note``."""

    query: str
    error: str | None = None
    note: str | None = None


def guard_query(query: str, *, max_zh_chars: int, max_en_words: int, blocked: tuple[str, ...] = ()) -> Guarded:
    """Length cap (a whole sentence becomes its content words, cut to the cap) and blocked words (refused)."""
    bad = blocked_words_found(query, blocked)
    if bad:
        return Guarded(query, error="error: the query contains a blocked word; search something else")
    lang = detect(query).code
    limit = max_zh_chars if reading(lang).unspaced else max_en_words
    if query_length(query, lang) <= limit:
        return Guarded(query)
    keep = set(content_words(query))
    kept: list[str] = []
    for w in words(query, lower=False):
        if w.lower() in keep and w not in kept:
            kept.append(w)
            if query_length(_join(kept, lang), lang) > limit:
                kept.pop()
                break
    short = _join(kept, lang) or query[:limit]
    return Guarded(short, note=f"query shortened to keywords ({query_length(query, lang)} > {limit})")


def _join(parts: list[str], lang: str) -> str:
    if not reading(lang).unspaced:
        return " ".join(parts)
    out = ""
    for p in parts:  # no space between Chinese words, one around Latin ones
        if out and (not CJK_RE.match(p[0]) or not CJK_RE.match(out[-1])):
            out += " "
        out += p
    return out


# --- context hygiene ------------------------------------------------------------------------------------
_SENT_END_RE = re.compile(r"(?<=[。！？!?；;])|(?<=[.])\s")


def conclusion_line(query: str, first_snippet: str, first_n: int | None, *, min_chars: int = 30,
                    max_chars: int = 50) -> str:
    """One line (30–50 characters) saying what a round found: the query and the top result's first sentence,
    cited. Extractive: no LLM call."""
    if first_n is None:
        return f"{query}: no results"[:max_chars]
    first = _SENT_END_RE.split(" ".join(first_snippet.split()), maxsplit=1)[0].strip()
    body = f"{query}: {first}"
    tail = f" [{first_n}]"
    room = max_chars - len(tail)
    if len(body) > room:
        body = body[:room - 1].rstrip() + "…"
    line = body + tail
    return line if len(line) >= min_chars or len(first_snippet) <= len(first) else line


_INJECTION_RE = re.compile(
    r"ignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|rules|prompts?)|"
    r"disregard (?:all |the )?(?:previous|prior|above) |you are now |new instructions:|system prompt|"
    r"忽略(?:之前|以上|上面|前面|先前)(?:的)?(?:所有)?(?:指令|指示|规则|提示)|无视(?:之前|以上)(?:的)?(?:指令|规则)",
    re.IGNORECASE)


def looks_like_injection(text: str) -> bool:
    """A result that talks to the model ("ignore previous instructions and …"): it is shown as data all the
    same, and the trace notes it."""
    return bool(_INJECTION_RE.search(text))


__all__ = ["Guarded", "RECENCY_VALUES", "ToolArgs", "call_key", "conclusion_line", "entity_count", "guard_query",
           "is_comparison", "looks_like_injection", "no_search_reason", "parse_tool_call", "result_count"]
