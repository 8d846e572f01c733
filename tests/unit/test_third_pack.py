"""A third language, added from outside the package: a small Spanish language (its pack: detection, words,
mentions and pronouns; its rule steps: a gate that knows "¿Y en X?" and a step that swaps the place of the previous
question) in an installed distribution of its own, registered through its ``convsearch.plugins`` entry point (the
path the shipped zh and en take too), resolves a follow-up through ``Pipeline``. Nothing of the package is edited
for it; once it is gone the shipped languages are as they were."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from convsearch import InMemoryBackend, Pipeline, lang, plugins
from convsearch.resolve.language import Language, detect, language
from convsearch.types import DecisionKind, Document, Message

SPANISH_PACKAGE = """
    import re

    from convsearch.lang.base import Mention, Pack
    from convsearch.resolve import checks
    from convsearch.resolve.compose import Outcome
    from convsearch.resolve.language import Language
    from convsearch.types import Decision, DecisionKind

    _WORD_RE = re.compile(r"[\\wáéíóúñü]+", re.IGNORECASE)
    _STOP = frozenset({"el", "la", "los", "las", "de", "del", "en", "y", "que", "qué", "es", "un", "una", "hace", "a"})
    _PRONOUNS = frozenset({"él", "ella", "eso", "esto", "allí"})
    _NAME_RE = re.compile(r"(?<![¿¡\\w])(?<!^)[A-ZÁÉÍÓÚÑ][a-záéíóúñ]+")
    _AND_IN_RE = re.compile(r"^¿\\s*[Yy]\\s+en\\s+([A-ZÁÉÍÓÚÑ][\\wáéíóúñ]*)\\s*\\?$")


    def _words(text):
        return [w.lower() for w in _WORD_RE.findall(text)]


    def _claims(text):
        return 0.9 if "¿" in text or "ñ" in text else 0.0  # a question opened the Spanish way


    def _mentions(text):
        return tuple(Mention(m, True, "proper", m.lower()) for m in _NAME_RE.findall(text))


    def and_in(a):
        \"\"\"¿Y en Madrid?: an ellipsis that swaps the place of the previous question.\"\"\"
        if a.history and _AND_IN_RE.match(a.q):
            return Decision(True, "elipsis: '¿Y en X?'", 0.9, DecisionKind.ELLIPSIS)
        return None


    def place_swap(t):
        \"\"\"The previous question with its place ("en Sevilla") swapped for the new one.\"\"\"
        m = _AND_IN_RE.match(t.q)
        frame = next((x.content for x in reversed(t.history) if x.role == "user"), "")
        old = re.search(r"\\ben\\s+([A-ZÁÉÍÓÚÑ][\\wáéíóúñ]*)", frame)
        if m is None or old is None:
            return None
        return Outcome(frame[:old.start(1)] + m.group(1) + frame[old.end(1):], f"lugar: {old.group(1)} → {m.group(1)}")


    PACK = Pack("es", "Spanish", claims=_claims, words=_words, mentions=_mentions,
                has_pronoun=lambda t: any(w in _PRONOUNS for w in _words(t)), stopwords=_STOP)
    LANGUAGE = Language(PACK, gate=(checks.no_context, checks.social, and_in, checks.named, checks.standalone),
                        rewrite=(place_swap,))


    def register(r):
        r.language("convsearch_es:LANGUAGE", code="es")
"""


@pytest.fixture
def spanish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The Spanish language installed as a distribution of its own on sys.path, its entry point read."""
    (tmp_path / "convsearch_es.py").write_text(textwrap.dedent(SPANISH_PACKAGE), encoding="utf-8")
    dist = tmp_path / "convsearch_es-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: convsearch-es\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[convsearch.plugins]\nes = convsearch_es\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.reload()
    yield language("es")
    monkeypatch.undo()
    sys.modules.pop("convsearch_es", None)
    plugins.reset()


HISTORY = [Message("user", "¿Qué tiempo hace en Sevilla?"), Message("assistant", "Soleado, 25 grados.")]
DOCS = [Document(id="mad", title="Tiempo en Madrid", text="¿Qué tiempo hace en Madrid? Nublado.", lang="es"),
        Document(id="sev", title="Tiempo en Sevilla", text="¿Qué tiempo hace en Sevilla? Soleado.", lang="es")]


def test_a_registered_pack_is_detected_and_resolves_a_follow_up_through_the_pipeline(spanish) -> None:
    assert isinstance(spanish, Language) and spanish.code == "es" and plugins.table("language")["es"].plugin == "es"
    assert lang.detect("¿Y en Madrid?") is spanish.pack and detect("¿Y en Madrid?") is spanish
    assert lang.detect("What about Madrid?").code == "en"
    with Pipeline(InMemoryBackend(DOCS)) as p:
        plan = p.plan("¿Y en Madrid?", HISTORY)
        assert plan.decision.reason == "elipsis: '¿Y en X?'" and plan.facts.lang == "es"
        assert plan.rewrite.rewritten == "¿Qué tiempo hace en Madrid?"
        assert plan.rewrite.reason == "gate: elipsis: '¿Y en X?'; lugar: Sevilla → Madrid"
        r = p.search("¿Y en Madrid?", HISTORY)
    assert r.citations[0].id == "mad"


def test_its_gate_leaves_a_standalone_question_alone(spanish) -> None:
    with Pipeline(InMemoryBackend(DOCS)) as p:
        plan = p.plan("¿Qué tiempo hace en Madrid?", HISTORY)
    assert not plan.rewrite.changed and plan.decision.kind is DecisionKind.NAMED


def test_once_it_is_gone_the_shipped_languages_are_as_before(spanish) -> None:
    assert lang.codes() == ("zh", "en", "es")
    sys.path.remove(next(p for p in sys.path if p.endswith(spanish.pack.code) or Path(p, "convsearch_es.py").exists()))
    plugins.reload()
    assert lang.codes() == ("zh", "en") and lang.detect("¿Y en Madrid?").code == "en"
    assert language("es").code == "en"  # a code no plugin registers is read as the fallback language
    with pytest.raises(KeyError, match="no language pack 'es'"):
        lang.get("es")
