"""Chinese: the language pack (``PACK``), its mentions (``mentions``), its follow-up markers (``markers``) and its
rule steps (``steps``, above the rule primitives: not imported here)."""

from __future__ import annotations

from ... import lexicon as lx
from ...text import detect_lang, words
from ..base import Pack
from .focus import FOCUS
from .frame import FRAME
from .markers import COURTESY, INTRODUCED, has_pronoun
from .mentions import mentions
from .ordinal import ORDINAL
from .stated import STATED
from .texts import AGENT, LLM


def _claims(text: str) -> float:
    # enough CJK ideographs, or a Chinese frame around a Latin name ("Rocky Linux 呢"): text.detect_lang's rule
    return 1.0 if detect_lang(text) == "zh" else 0.0


PACK = Pack("zh", "Chinese", claims=_claims, words=words, mentions=mentions, has_pronoun=has_pronoun,
            agent=AGENT, stated=STATED, llm=LLM, courtesy=COURTESY, ordinal=ORDINAL,
            introduced=INTRODUCED, focus=FOCUS, frame=FRAME,
            unspaced=True, mark_asks=False, stopwords=lx.STOP_ZH, term_lexicon="data/terms_zh_en.txt")
