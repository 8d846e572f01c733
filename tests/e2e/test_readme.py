"""The README's examples are executable documentation: every ```python and ```bash block marked
``<!-- readme: runnable -->`` runs against the demo index and must print what the README shows.

Python blocks are doctest sessions, run in order in one fresh interpreter (as a reader pastes them into one
REPL); bash blocks are ``$ command`` lines, each followed by the output it must print, run by bash in a
directory whose default data dir (``./.convsearch``) holds the demo index, with ``convsearch`` on the PATH:
no flags, as a newcomer types them after ``make demo``. Both compare output as doctest does (``...`` matches any
text, runs of whitespace compare equal).

The demo index is BM25-only here, as in tests/integration/test_demo.py (embedding the ~340 demo documents takes
a minute on a small machine); CONVSEARCH_TEST_DENSE_DEMO=1 also runs every block over the hybrid index that
``make demo`` builds by default. The README's printed values are chosen to hold for both.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DEMO_DIR = REPO / "demo"
MARK = re.compile(r"^<!-- readme: runnable\b.*-->\s*$")
FENCE = re.compile(r"^```(\w+)\s*$")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
DENSE_MODES = ["off"] + (["auto"] if os.environ.get("CONVSEARCH_TEST_DENSE_DEMO") == "1" else [])


def runnable_blocks(text: str) -> list[tuple[str, int, str]]:
    """(language, 1-based line of the fence, body) of every fenced block right after a runnable mark."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not MARK.match(line):
            continue
        m = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if not m:
            raise AssertionError(f"README.md:{i + 1}: a runnable mark must be followed by a ``` fence")
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        out.append((m.group(1), i + 2, "\n".join(lines[i + 2:end]) + "\n"))
    return out


BLOCKS = runnable_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_has_runnable_python_and_bash_blocks():
    langs = [lang for lang, _, _ in BLOCKS]
    assert langs.count("python") >= 1 and langs.count("bash") >= 1, langs
    assert set(langs) <= {"python", "bash"}, langs


def commands(body: str) -> list[tuple[str, str]]:
    """The ``$ command`` lines of a bash block, each with the output lines below it."""
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"output before the first '$ ' command: {line!r}")
    return [(cmd, "\n".join(want) + "\n" if want else "") for cmd, want in out]


@pytest.fixture(scope="module")
def demo_data(tmp_path_factory):
    """``get(mode)``: a data dir holding the demo index (dense ``mode``), built once per mode."""
    if not (DEMO_DIR / "corpus").is_dir():
        pytest.skip("demo/corpus/ missing")
    from convsearch.backends.factory import open_local
    from convsearch.config import Settings
    from convsearch.ingest import load_all

    built: dict[str, Path] = {}

    def get(mode: str) -> Path:
        if mode not in built:
            d = tmp_path_factory.mktemp(f"readme-demo-{mode}")
            open_local(Settings(data_dir=d, dense=mode), create=True).add(load_all([DEMO_DIR / "corpus"]))
            built[mode] = d
        return built[mode]

    return get


@pytest.fixture
def workdir(tmp_path: Path, demo_data):
    """``make(mode)``: a fresh directory whose ./.convsearch is a copy of the demo index, and the environment
    the examples run in (``convsearch`` on the PATH, no CONVSEARCH_* but the dense mode)."""

    def make(mode: str) -> tuple[Path, dict[str, str]]:
        shutil.copytree(demo_data(mode), tmp_path / ".convsearch")
        if (DEMO_DIR / "kb").is_dir():  # the knowledge-base example indexes demo/kb, as typed in the repository
            shutil.copytree(DEMO_DIR / "kb", tmp_path / "demo" / "kb")
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "convsearch"  # this tree's CLI, whatever is installed
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m convsearch.cli "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
        env.update({"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "PYTHONUTF8": "1",
                    "PYTHONIOENCODING": "utf-8", "CONVSEARCH_DENSE": mode})
        return tmp_path, env

    return make


BASH = [pytest.param(body, id=f"bash-line{line}") for lang, line, body in BLOCKS if lang == "bash"]


@pytest.mark.parametrize("mode", DENSE_MODES)
@pytest.mark.parametrize("body", BASH)
def test_readme_bash_block(workdir, mode, body):
    cwd, env = workdir(mode)
    checker = doctest.OutputChecker()
    for cmd, want in commands(body):
        p = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True,
                           encoding="utf-8", timeout=120)
        assert p.returncode == 0, f"$ {cmd}\n{p.stderr}"
        assert "Traceback" not in p.stderr
        if not checker.check_output(want, p.stdout, FLAGS):
            example = doctest.Example(cmd, want)
            pytest.fail(f"$ {cmd}\n" + checker.output_difference(example, p.stdout, FLAGS))


RUN_DOCTEST = """
import doctest, sys
text = open(sys.argv[1], encoding="utf-8").read()
test = doctest.DocTestParser().get_doctest(text, {}, "README.md", "README.md", 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
runner.run(test)
sys.exit(1 if runner.failures else 0)
"""


@pytest.mark.parametrize("mode", DENSE_MODES)
def test_readme_python_blocks(workdir, mode, tmp_path):
    """Every python block in order, in one fresh interpreter (later blocks continue earlier ones)."""
    sessions = [body for lang, _, body in BLOCKS if lang == "python"]
    assert sessions and all(">>> " in s for s in sessions), "python blocks must be doctest sessions (>>> …)"
    cwd, env = workdir(mode)
    (tmp_path / "readme_doctest.txt").write_text("\n".join(sessions), encoding="utf-8")
    p = subprocess.run([sys.executable, "-c", RUN_DOCTEST, str(tmp_path / "readme_doctest.txt")], cwd=cwd,
                       env=env, capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
