"""The LLM rewriter, LLM query variants, hypothetical answers (HyDE) and conversation summaries.

Every step here fails open: a timeout, an error, empty, overlong, unfaithful or otherwise bad output gives
back ``None`` / ``[]`` / the original query with the reason, never an exception on the turn's path.

**Rewriter** (``LLMRewriter``): the rule gate runs first (a turn it judges standalone costs no call; an
uncertain one may still ask when ``uncertain_below`` says so). The LLM sees our system prompt (zh or en, by the
query's language), the last ``window`` messages as real chat turns, then the query as the last user turn.
Its output is cleaned (fences, labels, quotes), then checked by ``guard.output_problem``: empty, too long (a
too-long answer is re-asked once, within the same budget), blocked words, another language, unfaithful.
Accepted rewrites are cached by (turns, query, topic, model, prompt), in a ``TTLCache`` namespace (``cache_ns``:
``rewrite``, ``variants``, ``hyde`` by default; a server gives each tenant its own, e.g. ``acme:rewrite``).

Every LLM call is recorded as an ``LLMCall`` (step, model, tokens, time, error): a rewrite carries its calls in
``RewriteResult.llm_calls``; variants, HyDE and summaries append theirs to a ``calls`` list when given one.

Example::

    rw = LLMRewriter(open_llm(Settings.from_env()))
    rw.rewrite([Message("user", "AnySearch 支持哪些检索方式？")], "价格呢？").rewritten   # 'AnySearch 的价格'
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..infra.cache import MemoryCache, NullCache, TTLCache, cache_key
from ..infra.deadline import Deadline
from ..lang import reading
from ..lang.base import LLMTexts
from ..llm import LLM, LLMError
from ..resolve.gate import needs_rewrite
from ..resolve.guard import (
    MAX_EN_WORDS,
    MAX_ZH_CHARS,
    blocked_words_found,
    content_words,
    language_problem,
    length_problem,
    output_problem,
)
from ..text import detect_lang, words
from ..types import Completion, Decision, LLMCall, Message, RewriteResult
from ..window import history_window

log = logging.getLogger("convsearch.llm")

# Each history message the LLM sees is cut to this many characters: long assistant answers cost tokens and
# latency, and what a follow-up leans on is near their start.
MAX_TURN_CHARS = 1500

# --- prompts: each language pack's (``LLMTexts`` in lang/<code>/texts.py; a pack without them speaks English) ---
def texts(lang: str) -> LLMTexts:
    """The LLM stages' texts in ``lang``."""
    own = reading(lang).llm
    return own if own is not None else reading("en").llm  # type: ignore[return-value]


REWRITE_PROMPTS = {code: texts(code).rewrite for code in ("en", "zh")}  # the shipped languages' (to read or extend)


def fill(template: str, **values: Any) -> str:
    """Put values into ``{name}`` placeholders; other braces (a JSON example in a custom prompt) stay."""
    for k, v in values.items():
        template = template.replace("{" + k + "}", str(v))
    return template.replace("{{", "{").replace("}}", "}")


# --- output cleaning (pure) -------------------------------------------------------------------------
_LABEL_RE = re.compile(
    r"^\s*(?:\*\*)?(?:standalone\s+(?:search\s+)?(?:query|question)|rewritten\s+(?:search\s+)?(?:query|question)|"
    r"rewrite|search\s+query|query|answer|output|改写(?:后的)?(?:查询|问题|结果)?|独立(?:查询|问题)|搜索查询|查询|输出)"
    r"\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*", re.IGNORECASE)
_QUOTES = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("「", "」"), ("『", "』"), ("`", "`"))
_JSON_KEYS = ("query", "rewrite", "rewritten", "standalone_query", "question")
# reasoning models (DeepSeek-R1, Qwen3 in thinking mode) put their thoughts in the content; an unclosed block
# (cut by max_tokens) leaves nothing usable
_THINK_RE = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)


def strip_thinking(text: str) -> str:
    return _THINK_RE.sub("", text or "")


def clean_output(text: str) -> str:
    """The query inside a model's reply: no code fences, no 'Rewritten query:' label, no wrapping quotes,
    first non-empty line only, whitespace collapsed. A JSON object with a query-like key gives that value."""
    from ..llm import strip_fences

    t = strip_fences(strip_thinking(text).strip()).strip()
    if t.startswith("{"):
        try:
            obj = json.loads(t)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            for k in _JSON_KEYS:
                if isinstance(obj.get(k), str):
                    t = obj[k]
                    break
    lines = [ln.strip() for ln in t.splitlines() if ln.strip()]
    while len(lines) > 1 and lines[0].rstrip("*").endswith((":", "：")):
        lines = lines[1:]  # "Sure, here is the rewritten query:" / "Query:" on a line of its own
    t = lines[0] if lines else ""
    t = _LABEL_RE.sub("", t, count=1).strip()
    for _ in range(2):
        for a, b in _QUOTES:
            if len(t) >= 2 and t.startswith(a) and t.endswith(b):
                t = t[len(a):-len(b)].strip()
    return " ".join(t.split())


SUMMARY_NAME = "summary"  # history.memory: the stored summary comes first, as a user message of this name


def split_summary(history: Sequence[Message]) -> tuple[str | None, list[Message]]:
    """A leading stored summary (a message named ``summary``) apart from the real turns: the LLM gets it in
    the system prompt, not as something the user said."""
    msgs = list(history)
    if msgs and msgs[0].name == SUMMARY_NAME and msgs[0].content.strip():
        return msgs[0].content.strip(), msgs[1:]
    return None, msgs


def _turns(history: Sequence[Message], window: int) -> list[tuple[str, str]]:
    kept = history_window(history, window)
    return [(m.role, m.content if len(m.content) <= MAX_TURN_CHARS else m.content[:MAX_TURN_CHARS] + "…")
            for m in kept]


# --- the rewriter -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GuardLimits:
    """What an LLM rewrite may look like (defaults: 30 Chinese characters / 20 English words)."""

    max_zh_chars: int = MAX_ZH_CHARS
    max_en_words: int = MAX_EN_WORDS
    blocked: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Attempt:
    """One LLM rewrite attempt: the accepted text (None on any failure) and why."""

    text: str | None
    reason: str
    calls: int = 0
    cached: bool = False
    ms: float = 0.0
    llm_calls: tuple[LLMCall, ...] = ()


@dataclass(frozen=True, slots=True)
class _Plan:
    lang: str
    system: str
    turns: tuple[tuple[str, str], ...]
    query: str
    topic: str | None
    key: str
    summary: str | None = None

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system},
                *({"role": r, "content": c} for r, c in self.turns),
                {"role": "user", "content": self.query}]


Driver = Generator[list[dict[str, str]], "Completion | LLMError", Attempt]


def llm_call(llm: LLM, step: str, t0: float, out: Completion | LLMError) -> LLMCall:
    """The trace's record of one call that started at ``t0`` and gave ``out``."""
    ms = round((time.perf_counter() - t0) * 1000, 3)
    if isinstance(out, LLMError):
        return LLMCall(step, getattr(llm, "model", "?"), out.usage, ms, out.reason)
    return LLMCall(step, out.model or getattr(llm, "model", "?"), out.usage, ms)


class LLMRewriter:
    """``Rewriter`` backed by an ``LLM``; see the module docstring. ``system_prompt`` replaces our prompts
    (one string for both languages, or ``{"zh": ..., "en": ...}``); ``{max_zh_chars}``, ``{max_en_words}``,
    ``{topic_clause}`` and ``{topic_line}`` are filled in when present."""

    name = "llm"
    cost = "io"  # (the Rewriter contract) batch runners may call it from several threads

    def __init__(self, llm: LLM, *, system_prompt: str | dict[str, str] | None = None, window: int = 6,
                 limits: GuardLimits = GuardLimits(), cache: TTLCache | None = None, gate: bool = True,
                 uncertain_below: float = 0.0, budget_s: float | None = None, reask: bool = True,
                 max_tokens: int = 96, cache_ns: str = "rewrite") -> None:
        self.llm = llm
        if isinstance(system_prompt, str):
            self.prompts = {"zh": system_prompt, "en": system_prompt}
        else:
            self.prompts = dict(system_prompt or {})  # the languages given their own; the rest: the pack's
        self.window = window
        self.limits = limits
        self.cache: TTLCache = cache if cache is not None else MemoryCache(1024)
        self.cache_ns = cache_ns
        self.gate = gate
        self.uncertain_below = uncertain_below
        self.budget_s = budget_s if budget_s is not None else getattr(getattr(llm, "config", None), "timeout_s", 3.0)
        self.reask = reask
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"LLMRewriter(llm={self.llm!r}, window={self.window})"

    # --- pure parts ---
    def plan(self, history: Sequence[Message], query: str, topic: str | None = None) -> _Plan:
        """What would be sent: system prompt, windowed turns, the query; plus the cache key."""
        lang = detect_lang(query)
        t = texts(lang)
        clause, line = t.topic_clause, t.topic_line
        system = fill(self.prompts.get(lang) or t.rewrite, max_zh_chars=self.limits.max_zh_chars,
                      max_en_words=self.limits.max_en_words, topic_clause=clause if topic else "",
                      topic_line=fill(line, topic=topic) if topic else "")
        summary, rest = split_summary(history)
        if summary:
            system += fill(t.summary_line, summary=summary[:MAX_TURN_CHARS])
        turns = tuple(_turns(rest, self.window))
        key = cache_key("rewrite", model=getattr(self.llm, "model", "?"), prompt=system, turns=turns, query=query,
                        topic=topic)
        return _Plan(lang, system, turns, query.strip(), topic, key, summary)

    def messages(self, history: Sequence[Message], query: str, topic: str | None = None) -> list[dict[str, str]]:
        """The chat messages the LLM gets for this turn."""
        return self.plan(history, query, topic).messages()

    def judge(self, text: str, plan: _Plan) -> str | None:
        """Why an (already cleaned) output must be rejected, or None."""
        seen = [Message(r, c) for r, c in plan.turns]
        if plan.summary:
            seen.insert(0, Message("user", plan.summary))
        return output_problem(text, plan.query, seen, plan.topic, max_zh_chars=self.limits.max_zh_chars,
                              max_en_words=self.limits.max_en_words, blocked=self.limits.blocked)

    def _dialogue(self, plan: _Plan, deadline: Deadline) -> Driver:
        """The conversation with the LLM as a generator: yields messages to send, receives the reply (or the
        LLMError), returns the Attempt. Shared by the sync and async drivers."""
        msgs = plan.messages()
        calls = 0
        for round_ in (0, 1):
            reply = yield msgs
            calls += 1
            if isinstance(reply, LLMError):
                return Attempt(None, reply.reason, calls)
            text = clean_output(reply.text)
            problem = self.judge(text, plan)
            if problem is None:
                self.cache.set(self.cache_ns, plan.key, text)
                how = "kept as is" if text == plan.query else "rewrote"
                return Attempt(text, how + (" after a re-ask" if round_ else ""), calls)
            if round_ == 0 and self.reask and problem.startswith("too long") and not deadline.expired():
                cap = re.search(r"> (\d+)", problem)
                ask = fill(texts(plan.lang).reask, why=problem, cap=cap.group(1) if cap else "")
                msgs = [*msgs, {"role": "assistant", "content": text}, {"role": "user", "content": ask}]
                continue
            return Attempt(None, f"rejected: {problem}" + (" (after a re-ask)" if round_ else ""), calls)
        raise AssertionError("unreachable")  # pragma: no cover

    def _cached(self, plan: _Plan) -> Attempt | None:
        hit = self.cache.get(self.cache_ns, plan.key)
        return Attempt(hit, "cache hit", 0, True) if hit is not None else None

    # --- drivers ---
    def attempt(self, history: Sequence[Message], query: str, topic: str | None = None) -> Attempt:
        """Ask the LLM (no gate); never raises for an LLM failure."""
        t0 = time.perf_counter()
        plan = self.plan(history, query, topic)
        got = self._cached(plan)
        if got is not None:
            return got
        deadline = Deadline(self.budget_s)
        gen = self._dialogue(plan, deadline)
        records: list[LLMCall] = []
        try:
            msgs = next(gen)
            while True:
                t1 = time.perf_counter()
                try:
                    reply: Completion | LLMError = self.llm.complete(msgs, budget_s=deadline.remaining(),
                                                                     max_tokens=self.max_tokens)
                except LLMError as exc:
                    reply = exc
                records.append(llm_call(self.llm, "rewrite", t1, reply))
                msgs = gen.send(reply)
        except StopIteration as stop:
            return _timed(replace(stop.value, llm_calls=tuple(records)), t0)

    async def aattempt(self, history: Sequence[Message], query: str, topic: str | None = None) -> Attempt:
        t0 = time.perf_counter()
        plan = self.plan(history, query, topic)
        got = self._cached(plan)
        if got is not None:
            return got
        deadline = Deadline(self.budget_s)
        gen = self._dialogue(plan, deadline)
        records: list[LLMCall] = []
        try:
            msgs = next(gen)
            while True:
                t1 = time.perf_counter()
                try:
                    reply: Completion | LLMError = await self.llm.acomplete(msgs, budget_s=deadline.remaining(),
                                                                            max_tokens=self.max_tokens)
                except LLMError as exc:
                    reply = exc
                records.append(llm_call(self.llm, "rewrite", t1, reply))
                msgs = gen.send(reply)
        except StopIteration as stop:
            return _timed(replace(stop.value, llm_calls=tuple(records)), t0)

    def _gated(self, history: Sequence[Message], query: str, topic: str | None,
               decision: Decision | None = None) -> RewriteResult | None:
        if not self.gate:
            return None
        d = decision or needs_rewrite(history, query, topic=topic)
        if d.needed or d.confidence < self.uncertain_below:
            return None
        return RewriteResult(query, query, "gate", f"standalone: {d.reason}", False)

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None) -> RewriteResult:
        gated = self._gated(history, query, topic, decision)
        return gated if gated is not None else to_result(query, self.attempt(history, query, topic))

    async def arewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                       decision: Decision | None = None) -> RewriteResult:
        gated = self._gated(history, query, topic, decision)
        return gated if gated is not None else to_result(query, await self.aattempt(history, query, topic))

    def close(self) -> None:
        close = getattr(self.llm, "close", None)
        if close:
            close()


def _timed(a: Attempt, t0: float) -> Attempt:
    ms = (time.perf_counter() - t0) * 1000
    reason = f"{a.reason} ({a.calls} call{'s' if a.calls != 1 else ''}, {ms:.0f} ms)"
    out = Attempt(a.text, reason, a.calls, a.cached, ms, a.llm_calls)
    if a.text is None:
        log.info("llm rewrite fell back: %s", reason)
    return out


def to_result(query: str, a: Attempt) -> RewriteResult:
    """An Attempt as a RewriteResult: the LLM's text, or the original with ``fell_back``."""
    if a.text is not None:
        return RewriteResult(query, a.text, "llm", f"llm: {a.reason}", False, a.llm_calls)
    return RewriteResult(query, query, "llm", f"llm fell back: {a.reason}", True, a.llm_calls)


# --- variants ---------------------------------------------------------------------------------------
class VariantList(BaseModel):
    """Alternative phrasings of one search query."""

    model_config = ConfigDict(extra="forbid")
    variants: list[str]


def variant_key(text: str) -> str:
    """Two variants are the same when their words are (case, spacing and punctuation aside)."""
    return " ".join(words(text))


def merge_variants(query: str, *lists: Sequence[str], cap: int = 3) -> list[str]:
    """Variants from several sources, in order, without duplicates (of each other or of the query), capped.

    >>> merge_variants("AnySearch 价格", ["AnySearch 收费", "anysearch 价格"], ["AnySearch 收费!", "AnySearch 费用"])
    ['AnySearch 收费', 'AnySearch 费用']
    """
    seen = {variant_key(query)}
    out: list[str] = []
    for lst in lists:
        for v in lst:
            v = " ".join(v.split())
            k = variant_key(v)
            if not k or k in seen:
                continue
            seen.add(k)
            out.append(v)
            if len(out) >= cap:
                return out
    return out


class LLMVariants:
    """Query variants from the LLM as structured output (``{"variants": [...]}``), each checked: cleaned, the
    query's language, within the length cap, no blocked word, sharing a content word with the query."""

    def __init__(self, llm: LLM, *, limits: GuardLimits = GuardLimits(), cache: TTLCache | None = None,
                 budget_s: float | None = None, prompts: dict[str, str] | None = None, max_tokens: int = 200,
                 cache_ns: str = "variants") -> None:
        self.llm = llm
        self.limits = limits
        self.cache: TTLCache = cache if cache is not None else MemoryCache(1024)
        self.cache_ns = cache_ns
        self.budget_s = budget_s if budget_s is not None else getattr(getattr(llm, "config", None), "timeout_s", 3.0)
        self.prompts = dict(prompts or {})  # the languages given their own; the rest: the pack's
        self.max_tokens = max_tokens

    def _plan(self, query: str, n: int) -> tuple[list[dict[str, str]], str]:
        lang = detect_lang(query)
        system = fill(self.prompts.get(lang) or texts(lang).variants, n=n, max_zh_chars=self.limits.max_zh_chars,
                      max_en_words=self.limits.max_en_words)
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": query}]
        return msgs, cache_key("variants", model=getattr(self.llm, "model", "?"), prompt=system, turns=(),
                               query=query, extra=n)

    def keep(self, query: str, candidates: Sequence[str], n: int) -> list[str]:
        qwords = content_words(query)
        lang = detect_lang(query)
        ok = []
        for c in candidates:
            v = clean_output(c)
            if not v or length_problem(v, query, lang, max_zh_chars=self.limits.max_zh_chars,
                                       max_en_words=self.limits.max_en_words):
                continue
            if language_problem(v, query) or blocked_words_found(v, self.limits.blocked):
                continue
            if qwords and not (content_words(v) & qwords):
                continue  # shares nothing with the query: a different question
            ok.append(v)
        return merge_variants(query, ok, cap=n)

    def generate(self, query: str, n: int = 3, *, calls: list[LLMCall] | None = None) -> tuple[list[str], str]:
        """(variants, reason); ``[]`` with the reason on any failure. The call, if one is made, is appended to
        ``calls``."""
        if n <= 0 or not query.strip():
            return [], "nothing to vary"
        msgs, key = self._plan(query, n)
        hit = self.cache.get(self.cache_ns, key)
        if hit is not None:
            return list(hit), "cache hit"
        t0 = time.perf_counter()
        try:
            out = self.llm.complete(msgs, schema=VariantList, budget_s=self.budget_s, max_tokens=self.max_tokens)
        except LLMError as exc:
            if calls is not None:
                calls.append(llm_call(self.llm, "variants", t0, exc))
            log.info("llm variants fell back: %s", exc.reason)
            return [], f"llm variants fell back: {exc.reason}"
        if calls is not None:
            calls.append(llm_call(self.llm, "variants", t0, out))
        got: list[str] = out.parsed.variants
        kept = self.keep(query, got, n)
        self.cache.set(self.cache_ns, key, tuple(kept))
        return kept, f"llm variants: {len(kept)} of {len(got)} kept"

    def __call__(self, query: str, *, max_variants: int = 3, calls: list[LLMCall] | None = None) -> list[str]:
        return self.generate(query, max_variants, calls=calls)[0]

    def close(self) -> None:
        close = getattr(self.llm, "close", None)  # close() is in the LLM contract; a bare callable has none
        if close:
            close()


class HybridVariants:
    """LLM variants first, then the heuristic table's, deduplicated and capped: a drop-in for
    ``variants.make_variants`` (``HybridVariants(LLMVariants(llm))("AnySearch 的价格", max_variants=3)``)."""

    def __init__(self, llm_variants: Callable[..., list[str]],
                 heuristic: Callable[..., list[str]] | None = None) -> None:
        from ..variants import make_variants

        self.llm_variants = llm_variants
        self.heuristic = heuristic or make_variants

    def close(self) -> None:
        """Close the LLM side (the heuristic table holds nothing)."""
        close = getattr(self.llm_variants, "close", None)  # any callable may be the LLM side
        if close:
            close()

    def __call__(self, query: str, *, max_variants: int = 3, calls: list[LLMCall] | None = None) -> list[str]:
        """The merged variants; the LLM's call is appended to ``calls`` when given (the turn's trace)."""
        if max_variants <= 0:
            return []
        kw: dict[str, Any] = {} if calls is None else {"calls": calls}
        return merge_variants(query, self.llm_variants(query, max_variants=max_variants, **kw),
                              self.heuristic(query, max_variants=max_variants), cap=max_variants)


# --- HyDE -------------------------------------------------------------------------------------------
def hypothetical_answer(llm: LLM, query: str, *, max_chars: int = 400, budget_s: float | None = None,
                        prompts: dict[str, str] | None = None, cache: TTLCache | None = None,
                        blocked: Sequence[str] = (), calls: list[LLMCall] | None = None,
                        cache_ns: str = "hyde") -> tuple[str | None, str]:
    """(a short passage that would answer ``query``, reason); ``None`` on any failure (HyDE, Gao et al. 2022:
    "Precise Zero-Shot Dense Retrieval without Relevance Labels" — embed the answer, not the question). The
    call, if one is made, is appended to ``calls``."""
    lang = detect_lang(query)
    system = fill((prompts or {}).get(lang) or texts(lang).hyde, max_chars=max_chars)
    msgs = [{"role": "system", "content": system}, {"role": "user", "content": query}]
    key = cache_key("hyde", model=getattr(llm, "model", "?"), prompt=system, turns=(), query=query)
    cache = cache if cache is not None else NullCache()
    hit = cache.get(cache_ns, key)
    if hit is not None:
        return hit, "hyde: cache hit"
    t0 = time.perf_counter()
    try:
        out = llm.complete(msgs, budget_s=budget_s, max_tokens=max(64, max_chars // 2))
    except LLMError as exc:
        if calls is not None:
            calls.append(llm_call(llm, "hyde", t0, exc))
        return None, f"hyde fell back: {exc.reason}"
    if calls is not None:
        calls.append(llm_call(llm, "hyde", t0, out))
    text = " ".join(_strip_preamble(out.text).split())
    if not text or language_problem(text, query) or blocked_words_found(text, blocked):
        return None, "hyde fell back: empty, off-language or blocked output"
    text = cut(text, max_chars)
    cache.set(cache_ns, key, text)
    return text, f"hyde: {len(text)} characters"


def _strip_preamble(text: str) -> str:
    from ..llm import strip_fences

    return _LABEL_RE.sub("", strip_fences(strip_thinking(text).strip()).strip(), count=1)


_SENTENCE_END_RE = re.compile(r"[。！？!?.；;](?=\s|$)|[。！？；]")


def cut(text: str, max_chars: int) -> str:
    """``text`` within ``max_chars``: at the last sentence end that fits, else hard with '…'."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    ends = [m.end() for m in _SENTENCE_END_RE.finditer(head)]
    if ends and ends[-1] >= max_chars // 2:
        return head[:ends[-1]].strip()
    return head[: max_chars - 1].rstrip() + "…"


# --- summaries --------------------------------------------------------------------------------------
@dataclass
class LLMSummarizer:
    """``summarize(messages) -> str | None``: a summary of at most ``max_chars`` characters, or None on any
    failure (``history.summary`` then falls back to its extractive summary). Tool messages and partial
    messages are dropped first, like the rewriter's window; a leading message named ``summary`` (the previous
    summary) goes into the prompt to be updated, the way ``history.summary`` refreshes incrementally."""

    name = "llm"

    llm: LLM
    max_chars: int = 300
    budget_s: float | None = None
    window: int = 40
    prompts: dict[str, str] = field(default_factory=dict)
    blocked: tuple[str, ...] = ()

    def messages(self, messages: Sequence[Message | dict[str, Any]]) -> list[dict[str, str]] | None:
        from ..window import to_messages

        previous, rest = split_summary(to_messages(messages, strict_roles=False))
        turns = _turns(rest, self.window)
        if not turns:
            return None
        lang = detect_lang(" ".join(c for r, c in turns if r == "user") or turns[-1][1])
        t = texts(lang)
        system = fill(self.prompts.get(lang) or t.summary, max_chars=self.max_chars)
        if previous:
            system += fill(t.previous_summary, summary=previous)
        return [{"role": "system", "content": system}, *({"role": r, "content": c} for r, c in turns),
                {"role": "user", "content": t.summary_ask}]

    def summarize(self, messages: Sequence[Message | dict[str, Any]], *,
                  calls: list[LLMCall] | None = None) -> str | None:
        msgs = self.messages(messages)
        if msgs is None:
            return None
        t0 = time.perf_counter()
        try:
            out = self.llm.complete(msgs, budget_s=self.budget_s, max_tokens=max(64, self.max_chars))
        except LLMError as exc:
            if calls is not None:
                calls.append(llm_call(self.llm, "summary", t0, exc))
            log.info("llm summary fell back: %s", exc.reason)
            return None
        if calls is not None:
            calls.append(llm_call(self.llm, "summary", t0, out))
        text = " ".join(_strip_preamble(out.text).split())
        if not text or not any(ch.isalnum() for ch in text) or blocked_words_found(text, self.blocked):
            return None
        return cut(text, self.max_chars)


__all__ = [
    "Attempt", "GuardLimits", "HybridVariants", "LLMRewriter", "LLMSummarizer", "LLMVariants", "REWRITE_PROMPTS",
    "VariantList", "clean_output", "cut", "fill", "hypothetical_answer", "llm_call", "merge_variants", "to_result",
]
