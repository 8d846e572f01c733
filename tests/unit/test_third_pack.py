"""A third language, added from outside the package: a small Spanish pack (its detection, words, mentions and
pronouns) and its rule steps (a gate that knows "¿Y en X?" and a step that swaps the place of the previous
question), registered from this file alone, resolve a follow-up through ``Pipeline``. Nothing of the package is
edited for it; unregistering leaves the shipped languages as they were."""

from __future__ import annotations

import re

import pytest

from convsearch import InMemoryBackend, Pipeline, lang
from convsearch.lang.base import Mention, Pack
from convsearch.resolve import checks
from convsearch.resolve.compose import Outcome
from convsearch.resolve.steps import register_steps, unregister_steps
from convsearch.types import Decision, DecisionKind, Document, Message

_WORD_RE = re.compile(r"[\wáéíóúñü]+", re.IGNORECASE)
_STOP = frozenset({"el", "la", "los", "las", "de", "del", "en", "y", "que", "qué", "es", "un", "una", "hace", "a"})
_PRONOUNS = frozenset({"él", "ella", "eso", "esto", "allí"})
_NAME_RE = re.compile(r"(?<![¿¡\w])(?<!^)[A-ZÁÉÍÓÚÑ][a-záéíóúñ]+")
_AND_IN_RE = re.compile(r"^¿\s*[Yy]\s+en\s+([A-ZÁÉÍÓÚÑ][\wáéíóúñ]*)\s*\?$")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


def _claims(text: str) -> float:
    return 0.9 if "¿" in text or "ñ" in text else 0.0  # a question opened the Spanish way


def _mentions(text: str) -> tuple[Mention, ...]:
    return tuple(Mention(m, True, "proper", m.lower()) for m in _NAME_RE.findall(text))


SPANISH = Pack("es", "Spanish", claims=_claims, words=_words, mentions=_mentions,
               has_pronoun=lambda t: any(w in _PRONOUNS for w in _words(t)), stopwords=_STOP)


def and_in(a) -> Decision | None:
    """"¿Y en Madrid?": an ellipsis that swaps the place of the previous question."""
    if a.history and _AND_IN_RE.match(a.q):
        return Decision(True, "elipsis: '¿Y en X?'", 0.9, DecisionKind.ELLIPSIS)
    return None


def place_swap(t) -> Outcome | None:
    """The previous question with its place ("en Sevilla") swapped for the new one."""
    m = _AND_IN_RE.match(t.q)
    frame = next((x.content for x in reversed(t.history) if x.role == "user"), "")
    old = re.search(r"\ben\s+([A-ZÁÉÍÓÚÑ][\wáéíóúñ]*)", frame)
    if m is None or old is None:
        return None
    return Outcome(frame[:old.start(1)] + m.group(1) + frame[old.end(1):], f"lugar: {old.group(1)} → {m.group(1)}")


@pytest.fixture
def spanish():
    lang.register(SPANISH)
    register_steps("es", gate=(checks.no_context, checks.social, and_in, checks.named, checks.standalone),
                   rewrite=(place_swap,))
    yield SPANISH
    unregister_steps("es")
    lang.unregister("es")


HISTORY = [Message("user", "¿Qué tiempo hace en Sevilla?"), Message("assistant", "Soleado, 25 grados.")]
DOCS = [Document(id="mad", title="Tiempo en Madrid", text="¿Qué tiempo hace en Madrid? Nublado.", lang="es"),
        Document(id="sev", title="Tiempo en Sevilla", text="¿Qué tiempo hace en Sevilla? Soleado.", lang="es")]


def test_a_registered_pack_is_detected_and_resolves_a_follow_up_through_the_pipeline(spanish) -> None:
    assert lang.detect("¿Y en Madrid?") is spanish and lang.detect("What about Madrid?").code == "en"
    with Pipeline(InMemoryBackend(DOCS)) as p:
        plan = p.plan("¿Y en Madrid?", HISTORY)
        assert plan.decision.reason == "elipsis: '¿Y en X?'" and plan.decision.analysis.lang == "es"
        assert plan.rewrite.rewritten == "¿Qué tiempo hace en Madrid?"
        assert plan.rewrite.reason == "gate: elipsis: '¿Y en X?'; lugar: Sevilla → Madrid"
        r = p.search("¿Y en Madrid?", HISTORY)
    assert r.citations[0].id == "mad"


def test_its_gate_leaves_a_standalone_question_alone(spanish) -> None:
    with Pipeline(InMemoryBackend(DOCS)) as p:
        plan = p.plan("¿Qué tiempo hace en Madrid?", HISTORY)
    assert not plan.rewrite.changed and plan.decision.kind is DecisionKind.NAMED


def test_unregistered_the_shipped_languages_are_as_before(spanish) -> None:
    lang.unregister("es")
    unregister_steps("es")
    assert lang.codes() == ("zh", "en") and lang.detect("¿Y en Madrid?").code == "en"
    lang.unregister("zh")  # a shipped language cannot be taken away
    assert lang.get("zh").name == "Chinese"
    with pytest.raises(KeyError, match="no language pack 'es'"):
        lang.get("es")
