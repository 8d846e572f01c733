"""`convsearch ask` as a subprocess, without an LLM configured (the scripted-LLM runs are in
tests/integration/test_agent_openai.py)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def test_ask_without_an_llm_names_the_variables(run_cli) -> None:
    for q in ("深圳最近三天适合露营吗？", "When was SpaceX founded?"):
        r = run_cli("ask", q)
        assert r.returncode == 2 and r.stdout == ""
        line = r.stderr.strip()
        assert "\n" not in line and "CONVSEARCH_LLM_BASE_URL" in line and "CONVSEARCH_LLM_MODEL" in line
