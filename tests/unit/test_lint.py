"""The locks: ruff over the tree and mypy --strict over its target list (both configured in pyproject.toml),
run as `make lint` does, so `make test` fails on a finding. Caches go to the system temp dir, never the tree."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=600)


def _need(module: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        pytest.fail(f"{module} is not installed: pip install -e '.[dev]'")


def test_ruff_finds_nothing() -> None:
    _need("ruff")
    out = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert out.returncode == 0, (f"ruff findings (autofix: ruff check --fix; a deliberate exception goes into "
                                 f"pyproject.toml):\n{out.stdout}{out.stderr}")


def test_mypy_strict_passes_on_its_targets() -> None:
    _need("mypy")
    cache = Path(tempfile.gettempdir()) / "convsearch-mypy-cache"  # warm: ~2 s; cold: ~40 s on a busy 2-core machine
    out = _run("mypy", "--cache-dir", str(cache))
    assert out.returncode == 0, f"mypy --strict:\n{out.stdout}{out.stderr}"
