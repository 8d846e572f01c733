"""The README's Milvus and framework examples run as written (each block in a fresh namespace, cwd = tmp_path),
and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "### Milvus, and convsearch inside LangChain, LlamaIndex and Haystack"


def _blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    body = text[text.index(SECTION):]
    body = body[:body.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


def test_there_is_one_example_per_framework_and_milvus():
    blocks = _blocks()
    assert len(blocks) == 4
    for name in ("backends.milvus", "integrations.langchain", "integrations.llamaindex", "integrations.haystack"):
        assert any(name in b for b in blocks), name


@pytest.mark.parametrize("i", range(4))
def test_readme_example_runs_and_prints_what_it_says(i, tmp_path, monkeypatch):
    code = _blocks()[i]
    for mod in ("pymilvus", "langchain_core", "llama_index.core", "haystack"):
        if mod.split(".")[0] in code or (mod == "pymilvus" and "milvus" in code):
            pytest.importorskip(mod)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README example {i + 1}", "exec"), {"__name__": "__readme__"})
    expected = [m.strip() for m in re.findall(r"print\(.*\)\s+# (.*)", code)]
    assert expected, "every example prints what its comment says"
    assert out.getvalue().strip().splitlines() == expected
