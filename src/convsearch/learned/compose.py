"""Put the terms the learned selector chose into the question, through the language pack's composer.

In order, the first that places the most probable term (``chosen[0]``) fluently:

1. **slot swap**: the question is a fragment of the previous user question ("那番禺呢？" after
   "深圳最近三天适合露营吗？") and the term sits in that frame: the frame with the fragment in its slot
   (``Analysis.fragment``, the pack's ``FRAME_STEPS``);
2. **the pack's rewrite steps with the term as the focus** (``Language.composer`` / ``Language.rewrite``: the
   rules' own composer, with the learned choice standing in for the rules' focus): a pronoun or demonstrative
   replaced by it (**substitution**), or the term put where the language puts a subject or owner ("X 的价格",
   "… of X", "What happened to X in 1990?": **insertion**). Kept only when the output holds the term;
3. **appended as plain terms** after the question (before its final mark) when neither found a place.

In English a pronoun the steps left alone (they test agreement with the rules' own focus) is tried once more with
``rewrite.compose.replace_pronoun`` and the term, before appending. A second chosen term that shares no content word
with what the output holds is appended as a plain term after that (``How`` stays the first placement's; the reason
names both); the resolver passes a second term only when it is probable enough (``Resolver.second_min``).
The guard (``rewrite.guard``) is applied by the rewriter, not here.

>>> from convsearch.types import Message as M
>>> from convsearch.learned.features import analyse, candidates_of
>>> a, _ = analyse([M("user", "AnySearch 是什么？"), M("assistant", "一个搜索服务。")], "它支持私有化部署吗？")
>>> compose_terms(a, "它支持私有化部署吗？", [c for c in candidates_of(a) if c.text == "AnySearch"])[:2]
('AnySearch 支持私有化部署吗', <How.SUBSTITUTION: 'substitution'>)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import Enum

from ..lang import reading
from ..lang.base import Mention
from ..resolve.analysis import Analysis, Candidate
from ..resolve.compose import replace_pronoun
from ..resolve.entities import mentions
from ..resolve.language import FALLBACK, language
from ..resolve.turn import Turn
from ..text import TRAIL_MARKS, is_cjk
from .policy import trained
from .tokens import content_words


class How(str, Enum):
    """How the selected terms went into the question (the trace says which)."""

    SUBSTITUTION = "substitution"  # a pronoun or demonstrative replaced by the term
    SLOT_SWAP = "slot swap"  # the question is a fragment: it takes its slot in the previous question's frame
    INSERTION = "insertion"  # the term put where the language puts a subject / owner ("X 的价格", "... of X")
    APPENDED = "appended"  # no fluent place found: the terms after the question as plain words
    UNCHANGED = "unchanged"  # the gate said standalone, or nothing was selected, or no place was safe


def mention_of(c: Candidate, a: Analysis) -> Mention:
    """The ``Mention`` a candidate was read from (its turn's or the topic's), or one built from its facts."""
    source = a.topic if c.role == "topic" else (a.history[c.turn].content if 0 <= c.turn < len(a.history) else "")
    if source:
        for m in mentions(source, a.lang):
            if m.text == c.text:
                return m
    head = c.text.split()[-1].lower() if not is_cjk(c.text[-1:]) else c.text[-2:]
    return Mention(c.text, c.proper, c.cls, head)


def _holds(text: str, term: str) -> bool:
    return term.lower() in text.lower()


def append_terms(query: str, terms: Sequence[str]) -> str:
    """``query`` with ``terms`` after its last word, its final marks kept at the end."""
    core = query.rstrip().rstrip(TRAIL_MARKS)
    tail = query.rstrip()[len(core):]
    out = core
    for t in terms:
        sep = "" if (out and is_cjk(out[-1]) and is_cjk(t[:1])) else " "
        out = f"{out}{sep}{t}" if out else t
    return out + tail


def compose_terms(a: Analysis, question: str, chosen: Sequence[Candidate]) -> tuple[str, How, str]:
    """(the rewrite of ``a.query``, how the first term went in, a reason for the trace). ``chosen``: the selected
    candidates, most probable first (none of them in the question). ``question`` is what was typed, used only when
    it has no Analysis form."""
    q = a.query or question
    if not chosen:
        return q, How.UNCHANGED, "nothing selected"
    top = chosen[0]
    out: str | None = None
    how = How.APPENDED
    why = ""
    frag = a.fragment()
    if frag is not None and top.in_frame and _holds(frag[0], top.text):
        out, how, why = frag[0], How.SLOT_SWAP, f"slot swap ({frag[1]})"
    if out is None:
        lang = a.language
        focus = replace(a.topic_focus, entity=mention_of(top, a))
        try:
            got, op = lang.composer(Turn(a, query=q, focus=focus), lang.rewrite or language(FALLBACK).rewrite)
        except (IndexError, ValueError):  # a step reading a frame or focus the learned choice does not fit
            got, op = None, "no step placed it"
        if got and got.strip() and got.strip() != q.strip() and _holds(got, top.text):
            out = got
            low = op.lower()
            how = (How.SUBSTITUTION if ("pronoun" in low or "→" in op) else
                   How.SLOT_SWAP if ("swap" in low or "frame" in low and "completion" not in low) else How.INSERTION)
            why = f"{how.value} ({op})"
    if out is None and trained(a.lang).pronoun_step and reading(a.lang).has_pronoun(q):
        got, op = replace_pronoun(q, mention_of(top, a))  # the pronoun step's agreement test, without its focus
        if got and _holds(got, top.text):
            out, how, why = got, How.SUBSTITUTION, f"substitution ({op})"
    if out is None:
        out, how, why = append_terms(q, [top.text]), How.APPENDED, f"appended {top.text!r} (no fluent place)"
    have = set(content_words(out))
    rest = []
    for c in chosen[1:]:
        words = content_words(c.text)
        if words and not have & set(words):  # a variant of a placed term ("Electoral College") adds nothing
            rest.append(c.text)
            have.update(words)
    if rest:
        out = append_terms(out, rest)
        why += f"; appended {', '.join(repr(t) for t in rest)}"
    return out, how, why


__all__ = ["How", "append_terms", "compose_terms", "mention_of"]
