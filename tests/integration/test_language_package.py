"""A language is one installable package: ``pip install`` of ``examples/convsearch-es`` (into a temp directory, with
the build backend this environment has, no network) makes Spanish a language of convsearch in a fresh interpreter,
with no file of convsearch touched; that interpreter resolves "¿Y en Madrid?" through ``Pipeline``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "convsearch-es"

SCRIPT = """
import json
from convsearch import InMemoryBackend, Pipeline, lang, plugins
from convsearch.types import Document, Message

history = [Message("user", "¿Qué tiempo hace en Sevilla?"), Message("assistant", "Soleado, 25 grados.")]
docs = [Document(id="mad", title="Tiempo en Madrid", text="¿Qué tiempo hace en Madrid? Nublado.", lang="es")]
with Pipeline(InMemoryBackend(docs)) as p:
    plan = p.plan("¿Y en Madrid?", history)
    hits = p.search("¿Y en Madrid?", history).citations
entry = plugins.table("language")["es"]
print(json.dumps({"codes": lang.codes(), "rewritten": plan.rewrite.rewritten, "reason": plan.rewrite.reason,
                  "plugin": entry.plugin, "builtin": entry.builtin, "top": hits[0].id if hits else None}))
"""


def test_pip_installing_the_example_adds_the_language(tmp_path: Path) -> None:
    target = tmp_path / "site"
    source = shutil.copytree(EXAMPLE, tmp_path / "convsearch-es")  # pip builds in the tree it is given
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", "--target", str(target), str(source)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert pip.returncode == 0, pip.stderr[-2000:]
    assert (target / "convsearch_es" / "__init__.py").is_file()
    assert list(target.glob("convsearch_es-0.1.0.dist-info/entry_points.txt"))
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["codes"] == ["zh", "en", "es"]
    assert got["plugin"] == "es" and got["builtin"] is False
    assert got["rewritten"] == "¿Qué tiempo hace en Madrid?"
    assert got["reason"] == "gate: elipsis: '¿Y en X?'; lugar: Sevilla → Madrid"
    assert got["top"] == "mad"
    # without the package on the path, the same interpreter setup knows two languages only
    bare = subprocess.run([sys.executable, "-c", "from convsearch import lang; print(list(lang.codes()))"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert bare.stdout.strip() == "['zh', 'en']"
