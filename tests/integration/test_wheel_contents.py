"""The wheel built from the repository ships inference only: no training, experiment or export module, no fold
models, no fitting code, and a model file that holds what inference uses (issue 36, item 5).

The build runs on a copy of the project (pyproject.toml, README.md, src/, research/) in a temporary directory, so
the checkout gets no build/ or egg-info of its own; pip builds it with the installed setuptools (no network)."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TRAINING = ("train", "export", "experiments", "ask_train", "synth", "embcache", "labels", "data", "fit",
            "combine_grid", "semantic")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    tmp = tmp_path_factory.mktemp("wheel")
    proj = tmp / "proj"
    proj.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, proj / name)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in ("src", "research"):
        shutil.copytree(REPO / name, proj / name, ignore=skip)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(proj), "--no-deps", "--no-build-isolation",
                           "--no-index", "-q", "-w", str(tmp / "dist")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = (tmp / "dist").glob("convsearch-*.whl")
    return zipfile.ZipFile(path)


def test_the_research_folder_exists_beside_the_package() -> None:
    for name in TRAINING:
        assert (REPO / "research" / "learned" / f"{name}.py").is_file(), name
    assert (REPO / "research" / "learned" / "folds.json.gz").is_file() and (REPO / "research" / "README.md").is_file()


def test_the_wheel_holds_no_training_or_experiment_module(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert "convsearch/learned/rewriter.py" in names and "convsearch/learned/auto.py" in names  # it is the package
    assert not [n for n in names if n.startswith("research/") or n.endswith("folds.json.gz")]
    learned = {Path(n).stem for n in names if n.startswith("convsearch/learned/") and n.endswith(".py")}
    assert learned & set(TRAINING) == set()
    assert learned >= {"__init__", "alt_models", "ask", "auto", "compose", "features", "model", "oof", "policy",
                       "resolver", "rewriter", "tokens"}  # inference (the fits are checked below)
    assert not [n for n in names if "learned_combine_grid" in n]


def test_the_wheels_learned_modules_define_no_fitting(wheel: zipfile.ZipFile) -> None:
    for n in wheel.namelist():
        if n.startswith("convsearch/learned/") and n.endswith(".py"):
            tree = ast.parse(wheel.read(n).decode("utf-8"))
            defs = [f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
            assert not [d for d in defs if d.startswith("fit")], (n, defs)
            imported = [a.module for a in ast.walk(tree) if isinstance(a, ast.ImportFrom) and a.module]
            assert not [m for m in imported if m.startswith(("research", "sklearn"))], (n, imported)


def test_the_wheels_model_file_holds_what_inference_uses(wheel: zipfile.ZipFile) -> None:
    info = wheel.getinfo("convsearch/models/learned.json")
    assert info.file_size <= 1_500_000
    d = json.loads(wheel.read(info).decode("utf-8"))
    assert set(d) >= {"full", "ask", "train_files", "license"} and "folds" not in d and "folds" not in d["ask"]
    assert wheel.read("convsearch/models/learned.json") == (REPO / "src/convsearch/models/learned.json").read_bytes()
