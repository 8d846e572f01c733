"""Spanish for convsearch: the pack, the gate's checks and one rewrite step, registered as one ``Language``."""

from __future__ import annotations

import re

from convsearch.lang.base import Mention, Pack
from convsearch.resolve import checks
from convsearch.resolve.analysis import Analysis
from convsearch.resolve.compose import Outcome
from convsearch.resolve.language import Language
from convsearch.resolve.turn import Turn
from convsearch.types import Decision, DecisionKind

_WORD_RE = re.compile(r"[\wáéíóúñü]+", re.IGNORECASE)
_STOP = frozenset({"el", "la", "los", "las", "de", "del", "en", "y", "que", "qué", "es", "un", "una", "hace", "a"})
_PRONOUNS = frozenset({"él", "ella", "eso", "esto", "allí"})
_NAME_RE = re.compile(r"(?<![¿¡\w])(?<!^)[A-ZÁÉÍÓÚÑ][a-záéíóúñ]+")
_AND_IN_RE = re.compile(r"^¿\s*[Yy]\s+en\s+([A-ZÁÉÍÓÚÑ][\wáéíóúñ]*)\s*\?$")
_PLACE_RE = re.compile(r"\ben\s+([A-ZÁÉÍÓÚÑ][\wáéíóúñ]*)")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


def _claims(text: str) -> float:
    return 0.9 if "¿" in text or "ñ" in text else 0.0  # a question opened the Spanish way


def _mentions(text: str) -> tuple[Mention, ...]:
    return tuple(Mention(m, True, "proper", m.lower()) for m in _NAME_RE.findall(text))


def and_in(a: Analysis) -> Decision | None:
    """"¿Y en Madrid?": an ellipsis that swaps the place of the previous question."""
    if a.history and _AND_IN_RE.match(a.q):
        return Decision(True, "elipsis: '¿Y en X?'", 0.9, DecisionKind.ELLIPSIS)
    return None


def place_swap(t: Turn) -> Outcome | None:
    """The previous question with its place ("en Sevilla") swapped for the new one."""
    m = _AND_IN_RE.match(t.q)
    frame = next((x.content for x in reversed(t.history) if x.role == "user"), "")
    old = _PLACE_RE.search(frame)
    if m is None or old is None:
        return None
    return Outcome(frame[:old.start(1)] + m.group(1) + frame[old.end(1):], f"lugar: {old.group(1)} → {m.group(1)}")


PACK = Pack("es", "Spanish", claims=_claims, words=_words, mentions=_mentions,
            has_pronoun=lambda t: any(w in _PRONOUNS for w in _words(t)), stopwords=_STOP)
LANGUAGE = Language(PACK, gate=(checks.no_context, checks.social, and_in, checks.named, checks.standalone),
                    rewrite=(place_swap,))


def register(r):  # type: ignore[no-untyped-def]
    """convsearch's plugin hook (the ``convsearch.plugins`` entry point names this module)."""
    r.language("convsearch_es:LANGUAGE", code="es")
