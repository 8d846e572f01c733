"""How an English fragment fills the frame of the previous question (``FRAME``, read by ``rewrite.frame``): model
names in a frame, two things a question joins, "which one …" over the user's last two questions, an attribute
fragment ("And its price?") and the frame shape that says which words are the attribute."""

from __future__ import annotations

import re

from ...text import TRAIL_MARKS
from ..base import FrameForms
from .mentions import mentions

_ARTICLE_END_RE = re.compile(r"\b(?:a|an|the)\s+$", re.IGNORECASE)
_THE_END_RE = re.compile(r"\bthe\s+$", re.IGNORECASE)

EN_PREPS = ("in", "on", "for", "by", "at", "from", "to", "with", "during", "under", "over", "via", "using")
EN_AFTER_PREP_RE = re.compile(r"\b(?:" + "|".join(EN_PREPS) + r")\s+$", re.IGNORECASE)
EN_ARTICLE_RE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_EN_WHICH_RE = re.compile(r"^\W*(?:so\s+|and\s+)?which(?:\s+one)?\s+(?:is|has|was|gets|offers|lasts|costs|would be|"
                          r"should i)\b", re.IGNORECASE)


def _model_names(frame: str) -> list[str]:
    """The names of a frame holding a number ("RTX 4090", "Galaxy S24 Ultra")."""
    return [m.text for m in mentions(frame) if m.proper and any(c.isdigit() for c in m.text)]


def _which_of(q: str, names: list[str]) -> tuple[str, str] | None:
    """"Which is cheaper without ads?" after questions on Netflix and on Disney+ → "…, Netflix or Disney+?"."""
    if not _EN_WHICH_RE.match(q) or any(n.lower() in q.lower() for n in names):
        return None
    core = q.strip().rstrip(TRAIL_MARKS)
    return f"{core}, {names[0]} or {names[1]}?", f"comparison between {names[0]} and {names[1]}"


def _after_prep(prep: str, before: str) -> bool:
    """Does ``before`` end with the preposition ``prep`` (and an article): "… supported by (the) "?"""
    return re.search(rf"\b{prep}\s+(?:the\s+|a\s+|an\s+)?$", before, re.IGNORECASE) is not None


def _place(x: str, bare: str, frame: str, s: int, kind: str) -> tuple[int, str]:
    """Where a fragment goes in place of the frame's span at ``s``, and in what words: "on a Mac" replaces "on
    Windows 11" (after a preposition the fragment's article comes with it, and takes the place of the frame's own:
    "on a Chromebook" + "On an iPad?"); "in the UK" + "Canada?" → "in Canada" (the article belonged to the old
    name)."""
    rep = x if EN_AFTER_PREP_RE.search(frame[:s]) else bare
    if x != bare and (art := _ARTICLE_END_RE.search(frame[:s])):
        s, rep = art.start(), x
    if kind == "place" and rep == bare and (the := _THE_END_RE.search(frame[:s])) \
            and not bare.isupper() and not bare.lower().startswith("the ") and not bare.endswith("s"):
        s = the.start()
    return s, rep


def _prep_slot(prep: str, frame: str) -> re.Match[str] | None:
    """"And by TensorFlow 2.15?": the last phrase following the same preposition in the frame (group 1), up to the
    next preposition, conjunction or mark."""
    after = rf"\b{prep}\s+((?:the\s+|a\s+|an\s+)?[^,?.!;]+?)(?=\s+(?:{'|'.join(EN_PREPS)}|and|or)\b|[,?.!;]|$)"
    found = list(re.finditer(after, frame, re.IGNORECASE))
    return found[-1] if found else None


FRAME = FrameForms(
    model_names=_model_names,
    pair_join=re.compile(r"\s+(?:and|or|vs\.?|versus)\s+(?:the\s+|a\s+|an\s+)?", re.IGNORECASE),
    which=_EN_WHICH_RE,
    which_of=_which_of,
    possessive=re.compile(r"^(?:its|their|the)\s+", re.IGNORECASE),
    article=EN_ARTICLE_RE,
    after_prep=_after_prep,
    place=_place,
    prep_slot=_prep_slot,
    attribute_frame=re.compile(r"^\W*(what(?:'s|’s|\s+is|\s+are|\s+was|\s+were)\s+the\s+)([a-z][a-z -]*?)"
                               r"(\s+of\s+\S.*)$", re.IGNORECASE),
)
