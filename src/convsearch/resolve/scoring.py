"""The rule half of the decision: ordered named steps over the turn's ``Analysis`` (the ``RuleScorer``'s steps).

After the gate decided that a turn needs a rewrite, a language's ``RULE_STEPS`` (``lang/<code>/steps.py``) are run
in order on a ``Turn``: a step either decides (returns a ``Resolution``: the rewrite, or None to leave the query
alone, with the reason and the operation) or passes (returns None), possibly after annotating the turn's focus for
the steps after it (the focus of a digression's root, the subject the conversation opened on, the resolved previous
question, what the latest answer introduced). When no step decides, the language's own rewrite steps run
(``rewrite.steps.RESOLVE``). The rewriter then carries the Resolution out through the guard (``rewrite.rules``).

The steps every language shares are here; a language's list mixes them with its own (``lang.zh.steps.work_reference``,
``reply``) and gives the shared ones its data (``ordinal(tidy)``, ``introduced_focus(person, plural, …)``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from ..types import Decision, DecisionKind
from .compose import answer_alias, join_script, replace_pronoun, restated_head_cut
from .entities import mentions, name_like, partial_name_span, topic_entity
from .focus import Focus, opening_subject, opening_turn
from .introduced import introduced_entity, person_shaped
from .language import FALLBACK, language
from .passage_name import passage_focus
from .stated import carry_constraints
from .turn import Turn

if TYPE_CHECKING:  # the analysis is built above the steps that read it
    from .analysis import Analysis

# the gate's standalone verdicts a stated constraint may still be added to (not a social turn or an empty context)
CARRY_KINDS = frozenset({DecisionKind.NAMED, DecisionKind.STANDALONE, DecisionKind.ANTECEDENT_INSIDE})


@dataclass(frozen=True, slots=True)
class Resolution:
    """What the rule steps decided: ``out`` the rewrite (None: leave the query as typed), ``reason`` for people,
    ``operation`` the step that decided, as data; ``checked``: the guard reads it (a query left alone needs none);
    ``carry``: what the user stated about themselves may still be added (off when the step added it already)."""

    out: str | None
    reason: str
    operation: str
    checked: bool = True
    carry: bool = True


Step = Callable[[Turn], "Resolution | None"]


def not_needed(t: Turn) -> Resolution | None:
    """The gate said standalone: the query stays as typed, unless the user stated a constraint about themselves
    that a request naming all it asks still lacks ("怎么把 PDF 转成 Word" after "我用的是 Mac …")."""
    d = t.decision
    if d.needed:
        return None
    carried = carry_constraints(t.query, t.query, t.history, t.lang) if d.kind in CARRY_KINDS else None
    if carried is not None:
        return Resolution(carried[0], f"gate: {d.reason}; {carried[1]}", "carry", carry=False)
    return Resolution(None, f"gate: {d.reason}", "keep", checked=False)


def ordinal(tidy: Callable[[str], str] = lambda out: out) -> Step:
    """A step: a positional reference takes the item of the latest answer's list ("the third step", "第二种");
    ``tidy`` is the language's last touch on the result."""
    def positional(t: Turn) -> Resolution | None:
        """A positional reference takes the item of the latest answer's list."""
        found = t.a.ordinal(t.query)
        if found is None:
            return None
        start, end, items = found
        out = tidy(join_script(join_script(t.query[:start], items), t.query[end:]))  # "Obsidian 支持离线吗"
        return Resolution(out, t.why(f"ordinal: {t.query[start:end]} → {items}"), "ordinal")
    positional.__name__ = "ordinal"
    return positional


def offer(t: Turn) -> Resolution | None:
    """A yes to the latest answer's offer of information takes what was offered; its pronoun ("their location")
    points at what that same answer named first."""
    offered = t.a.offer(t.query)
    if offered is None:
        return None
    named = next((m for m in mentions(t.history[-1].content, t.lang) if m.proper), None) or t.focus.entity
    if named is not None:
        offered = replace_pronoun(offered, named, named)[0] or offered
    return Resolution(f"{t.query.rstrip()} {offered}", t.why(f"offer accepted: {offered}"), "offer")


def root_focus(t: Turn) -> None:
    """(Annotates.) A question that names nothing after a closed digression goes back to the digression's root
    ("旺季是指哪几个月？" digressed; "进去一般逛多久？" is about 拙政园 again)."""
    f = t.focus
    if f.root is not None and t.decision.kind in (DecisionKind.SHORT, DecisionKind.SUBJECT):
        t.focus = replace(f, entity=f.root, subject=f.root, frame=f.root_frame, frame_mentions=f.root_mentions)


def opening_focus(t: Turn) -> None:
    """(Annotates.) The gate found the question going on about what the conversation opened on: that subject
    ("山顶扎营…" → "武功山山顶扎营…")."""
    if t.decision.kind is DecisionKind.OPENING and (opening := opening_subject(t.history)) is not None:
        first = opening_turn(t.history) or ""
        opening = restated_head_cut(opening, t.query)
        t.focus = replace(t.focus, entity=opening, subject=opening, frame=first, frame_mentions=mentions(first))


def frame_focus(t: Turn) -> None:
    """(Annotates.) An ellipsis completes the previous question as it was meant: "那么杭州呢？" after "那番禺呢？"
    fills "番禺最近三天适合露营吗", not "那番禺呢"."""
    if t.focus.frame and t.decision.is_frame:
        t.focus = t.resolve_frame(t.focus)


def introduced_focus(person: re.Pattern[str], plural: re.Pattern[str], *, person_by_name: bool) -> Step:
    """A step (annotates): a pronoun takes what the latest answer introduced ("Which airline …?" → "KLM …" →
    "its baggage allowance"); ``person`` / ``plural`` find the language's personal and plural pronouns; with
    ``person_by_name`` a personal pronoun takes the one person the answer named when the focus is no person."""
    def introduced(t: Turn) -> None:
        """(Annotates.) A pronoun takes what the latest answer introduced."""
        if t.decision.kind is not DecisionKind.PRONOUN:
            return None
        q, f = t.query, t.focus
        is_person = bool(person.search(q))
        is_plural = bool(plural.search(q))
        intro = introduced_entity(t.history, t.lang) if not is_person and not is_plural else None
        if is_person and not is_plural and person_by_name and (f.person is None or not person_shaped(f.person)):
            # "Which team won …?" → "… and Nikola Jokić was named MVP." → "How old is he?": the one person named
            intro = introduced_entity(t.history, t.lang, person=True)
        if intro is not None and intro.text.lower() not in q.lower():
            t.focus = replace(f, entity=intro, person=intro if is_person else f.person, subject=intro)
        return None
    introduced.__name__ = "introduced_focus"
    return introduced


def fragment(t: Turn) -> Resolution | None:
    """A fragment fills a slot of the focus's frame, or asks which of the two things the user named."""
    if not t.focus.frame:
        return None
    done = t.a.fragment(t.focus.frame, t.query) or t.a.compared(t.query)
    return Resolution(done[0], t.why(done[1]), "fragment") if done is not None else None


def topic_alias(t: Turn) -> Resolution | None:
    """A partial name of the session topic takes the whole name ("Divac" → "Vlade Divac")."""
    name = topic_entity(t.topic) if t.topic else ""
    span = partial_name_span(t.query, name) if name and name_like(name) else None
    if span is None:
        return None
    out = t.query[: span[0]] + name + t.query[span[1]:]
    return Resolution(out, t.why(f"alias: {t.query[span[0]:span[1]]} → {name}"), "alias")


def passage_names(t: Turn) -> None:
    """(Annotates.) A passage's glued heading gives way to its name, and a name the answer gave a short form in
    brackets to that form."""
    f = passage_focus(t.focus, t.history)
    alias = answer_alias(f.entity, t.history)
    if alias is not None:
        f = replace(f, entity=alias, subject=alias if f.subject == f.entity else f.subject)
    t.focus = f


# what a language without a list of its own runs (a language pack added from outside)
DEFAULT_STEPS: tuple[Step, ...] = (not_needed, ordinal(), offer, root_focus, opening_focus, frame_focus, fragment,
                                   topic_alias, passage_names)


class Scorer(Protocol):
    """The second half of the decision, after the gate: what to do with a turn that may need a rewrite. The rule
    scorer (``RuleScorer``) and the learned resolver (``learned.resolver``) implement it; the rewriter carries the
    Resolution out (composition, the guard, the ``RewriteResult``: ``resolve.rules``)."""

    def decide(self, a: Analysis, decision: Decision) -> Resolution: ...


class RuleScorer:
    """The rule half of the decision: the language's rule steps in order (``Language.rules``, else
    ``DEFAULT_STEPS``; the first that decides wins, some annotate the focus for the later ones), then its rewrite
    steps run by its composer. ``frames`` resolves the previous question of a frame ellipsis (the rule rewriter
    hands its own)."""

    def __init__(self, frames: Callable[[Analysis, Focus], Focus] | None = None) -> None:
        self.frames = frames

    def decide(self, a: Analysis, decision: Decision) -> Resolution:
        t = Turn(a, decision, frames=self.frames)
        lang = a.language
        for step in DEFAULT_STEPS if lang.rules is None else lang.rules:
            done = step(t)
            if done is not None:
                return done
        steps = lang.rewrite or language(FALLBACK).rewrite
        out, op = lang.composer(t, steps)
        if out is None or not out.strip():
            return Resolution(None, t.why(op), "keep", checked=False)
        return Resolution(out, t.why(op), "steps")
