"""English: the language pack (``PACK``), its mentions (``mentions``), its reference markers (``markers``) and
its rule steps (``steps``, above the rule primitives: not imported here)."""

from __future__ import annotations

from ... import lexicon as lx
from ...text import words
from ..base import Pack
from .focus import FOCUS
from .frame import FRAME
from .markers import COURTESY, INTRODUCED, has_pronoun
from .mentions import mentions
from .ordinal import ORDINAL
from .stated import STATED
from .texts import AGENT, LLM


def _claims(text: str) -> float:
    return 0.5  # the fallback: any text no other pack claims more surely is read as English


PACK = Pack("en", "English", claims=_claims, words=words, mentions=mentions, has_pronoun=has_pronoun,
            agent=AGENT, stated=STATED, llm=LLM, courtesy=COURTESY, ordinal=ORDINAL,
            introduced=INTRODUCED, focus=FOCUS, frame=FRAME,
            stopwords=lx.STOP_EN)
