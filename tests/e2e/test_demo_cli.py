"""`convsearch demo` as a subprocess over the bundled demo/ folder (BM25 only, to stay fast)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.e2e

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"


@pytest.fixture
def demo_dir() -> Path:
    if not (DEMO_DIR / "conversations.yaml").is_file() or not (DEMO_DIR / "corpus").is_dir():
        pytest.skip("demo/conversations.yaml or demo/corpus/ missing")
    return DEMO_DIR


def test_demo_plays_every_conversation(run_cli, tmp_path, demo_dir):
    p = run_cli("demo", "--demo-dir", str(demo_dir), timeout=300)  # the default data dir, ./.convsearch
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    out = p.stdout
    assert "→" in out and "[1]" in out and "dedup" in out
    convs = yaml.safe_load((demo_dir / "conversations.yaml").read_text(encoding="utf-8"))["conversations"]
    if (demo_dir / "kb").is_dir():  # then the knowledge-base conversations, after its folder is synced
        convs += yaml.safe_load((demo_dir / "kb_conversations.yaml").read_text(encoding="utf-8"))["conversations"]
        assert "scanned 4 files: 4 new" in out and "vpn-guide.pdf, p. 2)" in out
    assert out.count("\n=== ") == len(convs)
    assert out.count("user> ") == sum(len(c["turns"]) for c in convs)
    lines = out.splitlines()
    assert sum(x.startswith("  standalone: ") for x in lines) == sum(x.startswith("user> ") for x in lines)
    assert "indexing" in out and "BM25 only" in out and "into .convsearch/index" in out

    # a second run reuses the index instead of re-indexing
    again = run_cli("demo", "--demo-dir", str(demo_dir), timeout=300)
    assert again.returncode == 0
    assert "using the demo index" in again.stdout

    # what a newcomer types next finds the demo index with no flags, and the session carries the context
    first = run_cli("search", "AnySearch 支持哪些检索方式？", "--session", "s1")
    assert first.returncode == 0, first.stderr
    assert "= AnySearch 支持哪些检索方式？" in first.stdout and "[1] " in first.stdout
    second = run_cli("search", "价格呢？", "--session", "s1")
    assert second.returncode == 0, second.stderr
    assert "→ AnySearch 的价格" in second.stdout and "[1] AnySearch" in second.stdout
    assert (tmp_path / ".convsearch" / "history.sqlite3").is_file()


def test_demo_with_a_missing_folder_fails_cleanly(run_cli, tmp_path):
    p = run_cli("demo", "--data-dir", str(tmp_path / "d"), "--demo-dir", str(tmp_path / "nope"))
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "conversations.yaml" in lines[0]
