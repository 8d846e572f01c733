"""`convsearch ask` as a subprocess, without an LLM configured (the scripted-LLM runs are in
tests/integration/test_agent_openai.py): it shows the most relevant sources once, says plainly that no LLM is
configured, makes no LLM call, and exits 3 (configuration) with one line naming the variables to set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convsearch.backends.local import LocalIndex

pytestmark = pytest.mark.e2e


@pytest.fixture
def indexed(tmp_path: Path, corpus) -> Path:
    LocalIndex(tmp_path / "data" / "index", embedder=None).add(corpus)
    return tmp_path / "data"


@pytest.mark.parametrize("question, note", [
    ("When was SpaceX founded?", "no LLM configured: showing the most relevant sources"),
    ("AnySearch 专业版多少钱？", "未配置 LLM：以下是最相关的来源"),
])
def test_ask_without_an_llm_shows_the_sources_once_and_exits_3(run_cli, indexed: Path, question: str,
                                                               note: str) -> None:
    r = run_cli("ask", question, "--data-dir", str(indexed))
    assert r.returncode == 3, r.stderr
    err = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert len(err) == 1 and "CONVSEARCH_LLM_BASE_URL" in err[0] and "CONVSEARCH_LLM_MODEL" in err[0]
    out = r.stdout.splitlines()
    assert out[0] == note and "模型暂时无法回答" not in r.stdout and "could not answer" not in r.stdout
    sources = [x for x in out if x.startswith("[")]
    assert sources and sources[0].startswith("[1] ")
    urls = [x.split()[-1] for x in sources]
    assert all(r.stdout.count(u) == 1 for u in urls)  # each source listed once


def test_ask_json_without_an_llm_counts_no_llm_call(run_cli, indexed: Path) -> None:
    r = run_cli("ask", "When was SpaceX founded?", "--json", "--data-dir", str(indexed))
    assert r.returncode == 3, r.stderr
    a = json.loads(r.stdout)
    assert a["llm_calls"] == [] and a["usage"]["total_tokens"] == 0
    assert a["flags"]["no_llm"] and a["flags"]["degraded"]
    assert a["text"] == "no LLM configured: showing the most relevant sources"
    assert a["citations"] and a["citations"][0]["title"] == "SpaceX founding"
