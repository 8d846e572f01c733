"""`eval kb` end to end over a tiny generated folder: sync into the real local index, play the turns, score the
cited context; the regression runner reads the row; and (where the Debian docs are installed) every gold string of
the shipped conversations occurs in its set's converted documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from convsearch.eval.cli import eval_app
from convsearch.eval.kb import check_gold, kb_report, load_kb
from convsearch.eval.regress import run_regress

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]

DOCS = {
    "backup.html": """<html lang="en"><head><title>Backup</title></head><body><h1>Backing up a database</h1>
<p>Use the dump tool to write one database to a file: <code>dumptool mydb &gt; mydb.dump</code>.</p>
<h2>Restoring</h2><p>Feed the file back with <code>loadtool mydb &lt; mydb.dump</code> to restore everything.</p>
</body></html>""",
    "network.md": "# Network interfaces\n\nThe interfaces file lives at /etc/netconf/ifaces and lists each "
                  "interface.\n\n## Wireless\n\nWireless keys are kept in /etc/netconf/wpa.keys, readable by root "
                  "only.\n",
    "kettle.html": """<html lang="zh-CN"><head><title>水壶</title></head><body><h1>电水壶的使用</h1>
<p>第一次使用前，先用清水烧开两次并倒掉。</p><h2>除垢</h2><p>水垢较多时，加入柠檬酸浸泡三十分钟再烧开。</p>
</body></html>""",
}

CONVERSATIONS = {
    "sets": {"mini": {"package": "none", "root": "ROOT", "include": ["*.html", "*.md"], "lang": "en"}},
    "conversations": [
        {"id": "en-backup", "docs": "mini", "turns": [
            {"q": "How do I back up a database to a file?", "gold": ["dumptool mydb"],
             "answer": "Use the dump tool: dumptool mydb > mydb.dump."},
            {"q": "And how do I restore it?", "gold": ["loadtool mydb"]}]},
        {"id": "en-net", "docs": "mini", "turns": [
            {"q": "Where is the network interfaces file?", "gold": ["/etc/netconf/ifaces"]},
            {"q": "Where are the wireless keys kept?", "gold": ["/etc/netconf/wpa.keys"]},
            {"q": "Which colour is the kettle lid?", "gold": ["not in any document"]}]},
        {"id": "zh-kettle", "docs": "mini", "lang": "zh", "turns": [
            {"q": "电水壶第一次使用前要做什么？", "gold": ["烧开两次"], "answer": "先用清水烧开两次并倒掉。"},
            {"q": "水垢多的时候怎么办？", "gold": ["柠檬酸浸泡"]}]},
    ],
}


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, body in DOCS.items():
        (root / name).write_text(body, encoding="utf-8")
    doc = json.loads(json.dumps(CONVERSATIONS).replace("ROOT", str(root)))
    path = tmp_path / "kb.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return path


def test_the_runner_scores_first_turns_and_follow_ups_per_language(mini: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    report = kb_report([mini], cache=cache)
    s = report["sets"]["mini"]
    assert s["files"] == 3 and s["passages"] >= 3 and s["turns"] == 7
    assert (cache / "mini" / "index").is_dir()
    # the one unanswerable turn is the only miss; no passage holds its gold, so the cause says so
    assert [(f["conv"], f["turn"], f["cause"]) for f in report["failures"]] == [("en-net", 3, "boundary")]
    assert report["langs"]["en"]["answered"] == pytest.approx(4 / 5, abs=1e-4)
    assert report["langs"]["en"]["first"] == 1.0 and report["langs"]["en"]["followups"] == pytest.approx(2 / 3, 1e-3)
    assert report["langs"]["zh"]["answered"] == 1.0
    assert report["all"]["turns"] == 7 and report["all"]["n_followups"] == 4

    # a second run reuses the index: the sync finds every file unchanged
    again = kb_report([mini], cache=cache)
    assert again["sets"]["mini"]["sync"]["unchanged"] == 3 and again["sets"]["mini"]["sync"]["new"] == 0
    assert again["all"] == report["all"]


def test_the_command_prints_json_and_a_missing_documents_folder_is_one_line(mini: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(eval_app, ["kb", "--data", str(mini), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["all"]["turns"] == 7
    # the default cache is <data dir>/kb-eval (the autouse fixture points CONVSEARCH_DATA_DIR into tmp_path)
    assert (tmp_path / "convsearch-data" / "kb-eval" / "mini" / "index").is_dir()
    bad = runner.invoke(eval_app, ["kb", "--data", str(mini), "--data", str(tmp_path / "absent"),
                                   "--cache", str(tmp_path / "c")])
    assert bad.exit_code == 2 and "no such documents folder" in bad.output and "Traceback" not in bad.output
    check = runner.invoke(eval_app, ["kb", "--data", str(mini), "--check"])
    assert check.exit_code == 1 and "'not in any document' is in no document" in check.output


def test_a_regression_row_runs_in_process_and_skips_without_the_documents(mini: Path, tmp_path: Path) -> None:
    expected = tmp_path / "eval" / "expected.yaml"
    expected.parent.mkdir()
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    docs = str(mini.parent / "docs")
    rows = {"rows": [
        {"name": "kb/mini", "tolerance": 0.001,
         "command": f"eval kb --data {mini} --data {docs} --cache {tmp_path / 'c'} --json",
         "expected": {"langs.en.answered": 0.8, "langs.zh.followups": 1.0, "sets.mini.first": 1.0}},
        {"name": "kb/absent", "command": f"eval kb --data {mini} --data {tmp_path / 'nowhere'} --json",
         "expected": {"all.answered": 1.0}}]}
    expected.write_text(yaml.safe_dump(rows), encoding="utf-8")
    lines: list[str] = []
    code = run_regress(expected, echo=lines.append, allow_missing_data=True)
    assert code == 0, lines
    assert sum(line.startswith("OK") for line in lines) == 3
    assert any(line.startswith("SKIP  kb/absent") for line in lines)


def test_every_shipped_gold_string_is_in_its_installed_documents() -> None:
    kb = load_kb(REPO / "eval" / "kb" / "conversations.yaml")
    installed = [name for name, ds in kb.sets.items() if ds.files()]
    if not installed:
        pytest.skip("none of the Debian documentation packages is installed (scripts/kb-docs.sh)")
    assert check_gold(kb, installed) == []
