"""The offline rule rewriter (zh + en).

Given the windowed history, it finds the conversation's focus (``entities.find_focus``) and applies the
first operation that fits the query:

1. **entity swap** — an ellipsis whose new entity has the same kind as one in the previous question's frame
   puts it there ("深圳最近三天适合露营吗？" + "那番禺呢？" → "番禺最近三天适合露营吗"; "what about NovaDB?");
2. **ellipsis completion** — otherwise the ellipsis is attached to the focus ("价格呢？" → "AnySearch 的价格");
3. **pronoun → entity** — the first pronoun or demonstrative standing for the focus is replaced
   (possessives get "'s" in English);
4. **frame completion** — a query that names nothing gets the focus as its subject
   ("那审批需要多久？" after 入职流程 → "入职流程的审批需要多久").

The operations are ordered lists of small named steps per language (``lang.zh.steps.REWRITE_STEPS``,
``lang.en.steps.REWRITE_STEPS``, gathered in ``rewrite.steps``), run by ``compose.first``: the first step
returning an ``Outcome`` ends the rewrite. This module is the runner; what the steps write with is ``compose``.

The gate runs first: a standalone query comes back exactly as typed. The output may only add words found
in the history, the query or the topic; if not, the original is returned with ``fell_back=True``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..gate import needs_rewrite
from .analysis import Analysis
from .shapes import asked_form, with_courtesy
from ..lang import detect
from ..types import Decision, DecisionKind, Message, RewriteResult
from .compose import (_TRAIL_PUNCT, Outcome, Step, _first, _join_script, _replace_pronoun, _request_asked,
                      _restated_head_cut, _work_reference, answer_alias)
from ..lang.zh.markers import _ZH_NE_RE
from .entities import mentions, name_like, partial_name_span, topic_entity
from .focus import Focus, opening_subject, opening_turn
from .guard import fluency_problem, fluency_repair, unfaithful_words
from .introduced import introduced_entity, person_shaped
from .passage_name import passage_focus
from .stated import carry_constraints
from .steps import FALLBACK, RESOLVE, REWRITE_STEPS
from ..lang.en.steps import Turn as EnTurn
from ..lang.zh.steps import Turn as ZhTurn

__all__ = ["Outcome", "RuleRewriter"]

_EN_PERSON_PRON_RE = re.compile(r"\b(?:he|she|him|his|her)\b", re.IGNORECASE)
_ZH_PERSON_PRON_RE = re.compile(r"他|她")
_EN_PLURAL_PRON_RE = re.compile(r"\b(?:they|them|their|these|those)\b", re.IGNORECASE)
_ZH_PLURAL_PRON_RE = re.compile(r"们|这些|那些")
# the gate's standalone verdicts a stated constraint may still be added to (not a social turn or an empty context)
_CARRY_KINDS = frozenset({DecisionKind.NAMED, DecisionKind.STANDALONE, DecisionKind.ANTECEDENT_INSIDE})


class RuleRewriter:
    """Offline rewriter for Chinese and English follow-ups; pure and cheap (no I/O; the embedder is asked only to
    break a tie the lexicons leave, see ``rewrite.similar``)."""

    name = "rules"
    uncertain_below = 0.0  # the gate decides alone: a standalone verdict is never second-guessed

    def close(self) -> None:
        """Nothing to release."""

    def rewrite(self, history: Sequence[Message], query: str, *, topic: str | None = None,
                decision: Decision | None = None) -> RewriteResult:
        lang = detect(query).code
        asked = asked_form(query, lang)
        if asked == query:
            return self._rewrite(history, query, topic, decision, lang)
        # "and on Windows" is read as "and on Windows?", "请问那广州呢" as "那广州呢"; the result keeps what was typed
        done = self._rewrite(history, asked, topic, decision, lang)
        out = query if done.rewritten == asked else with_courtesy(query, done.rewritten, lang)
        return replace(done, original=query, rewritten=out)

    def _rewrite(self, history: Sequence[Message], query: str, topic: str | None, decision: Decision | None,
                 lang: str) -> RewriteResult:
        decision = decision or needs_rewrite(history, query, topic=topic, lang=lang)
        a = decision.analysis
        if a is None or not a.matches(tuple(history), query, topic):  # a Decision of another turn: read this one
            a = Analysis(tuple(history), query, topic, lang)
        if not decision.needed:
            carried = carry_constraints(query, query, history, lang) if decision.kind in _CARRY_KINDS else None
            if carried is not None:  # "怎么把 PDF 转成 Word" after "我用的是 Mac …": names all it asks, not the platform
                return self._checked(query, carried[0], history, topic, f"gate: {decision.reason}; {carried[1]}",
                                     carry=False)
            return RewriteResult(query, query, "rules", f"gate: {decision.reason}", False)
        ordinal = a.ordinal(query)
        if ordinal is not None:
            start, end, items = ordinal
            out = _join_script(_join_script(query[:start], items), query[end:])  # "Obsidian 支持离线吗"
            if lang == "zh":
                out = _ZH_NE_RE.sub("", out).rstrip(_TRAIL_PUNCT) or out  # "第二种呢？" → "向量检索"
            return self._checked(query, out, history, topic, f"gate: {decision.reason}; ordinal: {query[start:end]} → {items}")
        work = _work_reference(query, history) if lang == "zh" else None
        if work is not None:
            return self._checked(query, work[0], history, topic, f"gate: {decision.reason}; {work[1]}")
        echo = (a.echo(query) or a.wh(query)) if lang == "zh" else None
        if echo is not None:  # "会" after "你会游泳吗？" → "会游泳"; "二环" after "在哪里上班？" → "在二环上班"
            out, how = echo
            asked = _request_asked(history, topic)
            if asked is not None and asked.text not in out:
                # "帮我订酒店" → "你要住几晚？" → "两晚": the answer to the assistant's clarifying question goes
                # with the thing requested ("酒店 要住两晚")
                out, how = f"{asked.text} {out}", f"{how}; with the request's {asked.text}"
            return self._checked(query, out, history, topic, f"gate: {decision.reason}; {how}")
        focus = a.topic_focus
        offer = a.offer(query)
        if offer is not None:
            # "their location": the offer's pronoun points at what that same answer named first
            named = next((m for m in mentions(history[-1].content, lang) if m.proper), None) or focus.entity
            if named is not None:
                offer = _replace_pronoun(offer, named, named)[0] or offer
            return self._checked(query, f"{query.rstrip()} {offer}", history, topic,
                                 f"gate: {decision.reason}; offer accepted: {offer}")
        if focus.root is not None and decision.kind in (DecisionKind.SHORT, DecisionKind.SUBJECT):
            # "旺季是指哪几个月？" digressed; "进去一般逛多久？" names nothing and goes back to 拙政园
            focus = replace(focus, entity=focus.root, subject=focus.root, frame=focus.root_frame,
                            frame_mentions=focus.root_mentions)
        if decision.kind is DecisionKind.OPENING and (opening := opening_subject(history)) is not None:
            # "山顶扎营…" → "武功山山顶扎营…": the subject the conversation opened on (the gate checked it still is)
            first = opening_turn(history) or ""
            opening = _restated_head_cut(opening, query)
            focus = replace(focus, entity=opening, subject=opening, frame=first, frame_mentions=mentions(first))
        if focus.frame and decision.is_frame:
            focus = self._resolve_frame(history, focus, topic)
        if decision.kind is DecisionKind.PRONOUN:
            # "Which airline …?" → "KLM …" → "its baggage allowance": the pronoun takes what the answer introduced
            person = bool((_EN_PERSON_PRON_RE if lang == "en" else _ZH_PERSON_PRON_RE).search(query))
            plural = bool((_EN_PLURAL_PRON_RE if lang == "en" else _ZH_PLURAL_PRON_RE).search(query))
            intro = introduced_entity(history, lang) if not person and not plural else None
            if person and not plural and lang == "en" and (focus.person is None or not person_shaped(focus.person)):
                # "Which team won …?" → "… and Nikola Jokić was named MVP." → "How old is he?": the one person named
                intro = introduced_entity(history, lang, person=True)
            if intro is not None and intro.text.lower() not in query.lower():
                focus = replace(focus, entity=intro, person=intro if person else focus.person, subject=intro)
        if focus.frame:
            done = a.fragment(focus.frame, query) or a.compared(query)
            if done is not None:
                return self._checked(query, done[0], history, topic, f"gate: {decision.reason}; {done[1]}")
        name = topic_entity(topic) if topic else ""
        span = partial_name_span(query, name) if name and name_like(name) else None
        if span is not None:
            out = query[: span[0]] + name + query[span[1]:]
            return self._checked(query, out, history, topic,
                                 f"gate: {decision.reason}; alias: {query[span[0]:span[1]]} → {name}")
        focus = passage_focus(focus, history)  # a passage's glued heading → its name
        alias = answer_alias(focus.entity, history)
        if alias is not None:
            focus = replace(focus, entity=alias, subject=alias if focus.subject == focus.entity else focus.subject)
        resolve = RESOLVE.get(lang) or RESOLVE[FALLBACK]
        out, op = resolve(query, focus, history, topic, REWRITE_STEPS.get(lang) or REWRITE_STEPS[FALLBACK])
        if out is None or not out.strip():
            return RewriteResult(query, query, "rules", f"gate: {decision.reason}; {op}", False)
        return self._checked(query, out, history, topic, f"gate: {decision.reason}; {op}")

    @staticmethod
    def _checked(query: str, out: str, history: Sequence[Message], topic: str | None, how: str, *,
                 carry: bool = True) -> RewriteResult:
        """The rewrite (with what the user stated about themselves and it lacks, unless ``carry`` is off: it was
        added already) if it only adds words found in the history, the query or the topic; else the query."""
        if carry and (carried := carry_constraints(query, out, history, detect(query).code)):
            out, how = carried[0], f"{how}; {carried[1]}"
        bad = unfaithful_words(out, query, history, topic)
        if bad:
            return RewriteResult(query, query, "rules", f"unfaithful rewrite rejected ({', '.join(sorted(bad))})", True)
        out = fluency_repair(out, query)
        why = fluency_problem(out, query)
        if why:
            return RewriteResult(query, query, "rules", f"{how}; not fluent, rejected: {why}", True)
        return RewriteResult(query, out, "rules", how, False)


    def _resolve_frame(self, history: Sequence[Message], focus: Focus, topic: str | None) -> Focus:
        """Use the previous question as it was meant: "那么杭州呢？" after "那番禺呢？" fills the frame
        "番禺最近三天适合露营吗", not "那番禺呢". One level deep (that rewrite sees its own resolved frame)."""
        idx = max((i for i, m in enumerate(history) if m.role == "user" and m.content == focus.frame), default=None)
        if idx is None or idx == 0:
            return focus
        prev = history[idx]
        resolved = self.rewrite(history[:idx], prev.content, topic=topic)
        if not resolved.changed or resolved.fell_back:
            return focus
        return replace(focus, frame=resolved.rewritten,
                       frame_mentions=tuple(mentions(resolved.rewritten)))


# --- Chinese ---------------------------------------------------------------------------------------


def _rewrite_zh(query: str, focus: Focus, history: Sequence[Message] = (),
                steps: Sequence[Step] | None = None) -> tuple[str | None, str]:
    """The first answer of the Chinese rewrite steps (``lang.zh.REWRITE_STEPS``, or ``steps``)."""
    return _first(REWRITE_STEPS["zh"] if steps is None else steps, ZhTurn(query, focus, history))


def _rewrite_en(query: str, focus: Focus, history: Sequence[Message] = (), section: str = "",
                steps: Sequence[Step] | None = None) -> tuple[str | None, str]:
    """The first answer of the English rewrite steps (``lang.en.REWRITE_STEPS``, or ``steps``)."""
    return _first(REWRITE_STEPS["en"] if steps is None else steps, EnTurn(query, focus, history, section))
