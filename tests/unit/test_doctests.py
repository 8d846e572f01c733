"""Every ``>>>`` example in the package's docstrings runs as written (documentation that cannot rot unseen).

One test per module holding examples; a module whose optional extra is not installed says which (skip with
the reason), the dev install has them all. Examples that write files use temporary directories."""

from __future__ import annotations

import doctest
import importlib
import tempfile
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "convsearch"


def _modules() -> list[str]:
    out = []
    for p in sorted(SRC.rglob("*.py")):
        if ">>>" in p.read_text(encoding="utf-8"):
            rel = p.relative_to(SRC.parent).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out.append(".".join(parts))
    return out


MODULES = _modules()


def test_the_package_has_examples_to_run() -> None:
    assert len(MODULES) >= 30 and "convsearch.pipeline" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # an example that forgets its temp dir writes here, not in the checkout
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # tempfile.mkdtemp() in an example: under tmp_path
    monkeypatch.setenv("CONVSEARCH_DATA_DIR", str(tmp_path / "data"))
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        pytest.skip(f"{name} needs an optional extra that is not installed: {exc.name}")
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, report=True, verbose=False)
    assert result.attempted > 0 and result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
