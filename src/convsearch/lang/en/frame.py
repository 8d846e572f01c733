"""How an English fragment fills the frame of the previous question (``FRAME``, read by ``rewrite.frame``): model
names in a frame, two things a question joins, "which one …" over the user's last two questions, an attribute
fragment ("And its price?") and the frame shape that says which words are the attribute."""

from __future__ import annotations

import re

from ...text import TRAIL_MARKS
from ..base import FrameForms
from .mentions import mentions

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


FRAME = FrameForms(
    model_names=_model_names,
    pair_join=re.compile(r"\s+(?:and|or|vs\.?|versus)\s+(?:the\s+|a\s+|an\s+)?", re.IGNORECASE),
    which=_EN_WHICH_RE,
    which_of=_which_of,
    possessive=re.compile(r"^(?:its|their|the)\s+", re.IGNORECASE),
    attribute_frame=re.compile(r"^\W*(what(?:'s|’s|\s+is|\s+are|\s+was|\s+were)\s+the\s+)([a-z][a-z -]*?)"
                               r"(\s+of\s+\S.*)$", re.IGNORECASE),
)
