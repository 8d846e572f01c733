"""A third language, added from outside the package: the small Spanish language of ``examples/convsearch-es`` (its
pack: detection, words, mentions and pronouns; its rule steps: a gate that knows "¿Y en X?" and a step that swaps the
place of the previous question), an installable distribution of its own registered through its
``convsearch.plugins`` entry point (the path the shipped zh and en take too), resolves a follow-up through
``Pipeline``. Nothing of the package is edited for it; once it is gone the shipped languages are as they were."""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from convsearch import InMemoryBackend, Pipeline, lang, plugins
from convsearch.resolve.language import Language, detect, language
from convsearch.types import DecisionKind, Document, Message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "convsearch-es"


def install_example(root: Path) -> None:
    """``examples/convsearch-es`` as pip would lay it out on ``root``: its package, and a dist-info whose
    entry_points.txt holds the entry points its pyproject.toml declares (the real ``pip install`` of it:
    tests/integration/test_language_package.py)."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    shutil.copytree(EXAMPLE / "src" / "convsearch_es", root / "convsearch_es")
    dist = root / "convsearch_es-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n",
                                   encoding="utf-8")
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
             for group, eps in project["entry-points"].items()]
    (dist / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture
def spanish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The Spanish example language installed on sys.path, its entry point read."""
    install_example(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.reload()
    yield language("es")
    monkeypatch.undo()
    for mod in [m for m in sys.modules if m == "convsearch_es" or m.startswith("convsearch_es.")]:
        sys.modules.pop(mod, None)
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
    sys.path.remove(next(p for p in sys.path if Path(p, "convsearch_es").is_dir()))
    plugins.reload()
    assert lang.codes() == ("zh", "en") and lang.detect("¿Y en Madrid?").code == "en"
    assert language("es").code == "en"  # a code no plugin registers is read as the fallback language
    with pytest.raises(KeyError, match="no language pack 'es'"):
        lang.get("es")
