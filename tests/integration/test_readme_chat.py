"""The README's "Use it from any chat client" blocks (marked ``<!-- readme: chat-client -->``) run as written
against ``convsearch serve`` on loopback, with a scripted upstream model (``search_then_cite``) and the Tavily
replay server as the web: the python block as a doctest session in a fresh interpreter, the bash block command
by command (``llm`` from this environment, its user dir in tmp). The only edit is the server's address: the
README's ``http://127.0.0.1:8000`` becomes the test server's. Output is compared as doctest does (``...`` matches
any text)."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("uvicorn")

from convsearch.testing.live_server import LiveServer  # noqa: E402
from convsearch.testing.openai_server import FakeOpenAIServer, search_then_cite  # noqa: E402
from convsearch.testing.web_replay import WebReplayServer  # noqa: E402

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"
MARK = re.compile(r"^<!-- readme: chat-client\b.*-->\s*$")
README_URL = "http://127.0.0.1:8000"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def blocks() -> dict[str, str]:
    """The marked blocks by language (one python, one bash)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    out: dict[str, str] = {}
    for i, line in enumerate(lines):
        if MARK.match(line):
            lang = lines[i + 1].removeprefix("```").strip()
            end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
            out[lang] = "\n".join(lines[i + 2:end]) + "\n"
    return out


def commands(body: str) -> list[tuple[str, str]]:
    """``$ command`` lines (a here-document runs on to its delimiter), each with the output below it."""
    out: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd = [line[2:]]
            here = re.search(r"<<'(\w+)'", line)
            if here:
                while lines[i + 1] != here.group(1):
                    i += 1
                    cmd.append(lines[i])
                i += 1
                cmd.append(lines[i])
            out.append(("\n".join(cmd), []))
        elif out:
            out[-1][1].append(line)
        i += 1
    return [(c, "\n".join(w) + "\n" if w else "") for c, w in out]


def test_the_readme_has_both_blocks() -> None:
    b = blocks()
    assert set(b) == {"python", "bash"} and README_URL in b["python"] and README_URL in b["bash"]
    assert [c.split()[0] for c, _ in commands(b["bash"])] == ["cat", "llm", "llm", "llm"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with FakeOpenAIServer(search_then_cite()) as upstream, WebReplayServer("tavily", keys=["tv-1"]) as tavily:
        env = {"CONVSEARCH_API_KEYS": "acme:sk-acme-1", "CONVSEARCH_LLM_BASE_URL": upstream.base_url,
               "CONVSEARCH_LLM_MODEL": "fake", "CONVSEARCH_BACKENDS": "tavily", "CONVSEARCH_TAVILY_API_KEYS": "tv-1",
               "CONVSEARCH_TAVILY_BASE_URL": tavily.base_url, "CONVSEARCH_TAVILY_RATE": "off",
               "CONVSEARCH_REWRITER": "rules"}
        with LiveServer(tmp_path_factory.mktemp("readme-chat"), env=env) as srv:
            yield srv.url


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONVSEARCH_", "OPENAI_", "LLM_"))}
    home = tmp_path / "llm"
    home.mkdir(exist_ok=True)
    env |= {"LLM_USER_PATH": str(home), "HOME": str(tmp_path), "PYTHONUTF8": "1", "PYTHONIOENCODING": "utf-8",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}
    return env


RUN_DOCTEST = """
import doctest, sys
text = open(sys.argv[1], encoding="utf-8").read()
test = doctest.DocTestParser().get_doctest(text, {}, "README.md", "README.md", 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
runner.run(test)
sys.exit(1 if runner.failures or not test.examples else 0)
"""


def test_readme_openai_sdk_block(server: str, tmp_path: Path) -> None:
    session = tmp_path / "chat_doctest.txt"
    session.write_text(blocks()["python"].replace(README_URL, server), encoding="utf-8")
    p = subprocess.run([sys.executable, "-c", RUN_DOCTEST, str(session)], env=_env(tmp_path), cwd=tmp_path,
                       capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_readme_llm_block(server: str, tmp_path: Path) -> None:
    pytest.importorskip("llm")
    env: dict[str, Any] = _env(tmp_path)
    checker = doctest.OutputChecker()
    for cmd, want in commands(blocks()["bash"].replace(README_URL, server)):
        p = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True,
                           encoding="utf-8", timeout=120, stdin=subprocess.DEVNULL)
        assert p.returncode == 0, f"$ {cmd}\n{p.stderr}"
        assert "Traceback" not in p.stderr
        if not checker.check_output(want, p.stdout, FLAGS):
            pytest.fail(f"$ {cmd}\n" + checker.output_difference(doctest.Example(cmd, want), p.stdout, FLAGS))
    assert (tmp_path / "llm" / "extra-openai-models.yaml").is_file()  # the block wrote where llm reads
