"""evaluate_retrieval and `eval retrieval` against the real tantivy LocalIndex on a 10-record file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from convsearch.eval.cli import eval_app
from convsearch.eval.data import load_records
from convsearch.eval.retrieval_eval import evaluate_retrieval, local_index
from convsearch.rewrite.base import Passthrough, Scripted

pytestmark = pytest.mark.integration

EIFFEL = ["What is the Eiffel Tower?", "The Eiffel Tower is a wrought-iron lattice tower in Paris."]
EIFFEL_2 = [*EIFFEL, "How tall is it?", "It is 330 metres tall."]
HAMLET = ["Who wrote Hamlet?", "William Shakespeare wrote Hamlet around 1600."]
FUJI = ["Tell me about Mount Fuji.", "Mount Fuji is a volcano on Honshu."]
FUJI_2 = [*FUJI, "How high is it?", "It rises 3776 metres above the sea."]
WALL = ["长城有多长？", "长城全长两万多公里。"]

FOLLOW_UPS = {  # question → human rewrite
    "How tall is it?": "How tall is the Eiffel Tower?",
    "Who designed it?": "Who designed the Eiffel Tower?",
    "When did he die?": "When did William Shakespeare die?",
    "How high is it?": "How high is Mount Fuji?",
    "Is it active?": "Is Mount Fuji active?",
    "它是什么时候修建的？": "长城是什么时候修建的？",
}


def rec(id: str, history: list[str], question: str, lang: str = "en") -> dict[str, Any]:
    return {"id": id, "dataset": "toy", "split": "dev", "lang": lang, "history": history,
            "history_roles": ["user", "assistant"] * (len(history) // 2), "question": question,
            "rewrite": FOLLOW_UPS.get(question, question)}


RECORDS = [
    rec("A_q1", [], EIFFEL[0]), rec("A_q2", EIFFEL, "How tall is it?"), rec("A_q3", EIFFEL_2, "Who designed it?"),
    rec("B_q1", [], HAMLET[0]), rec("B_q2", HAMLET, "When did he die?"),
    rec("C_q1", [], FUJI[0]), rec("C_q2", FUJI, "How high is it?"), rec("C_q3", FUJI_2, "Is it active?"),
    rec("D_q1", [], WALL[0], "zh"), rec("D_q2", WALL, "它是什么时候修建的？", "zh"),
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    p = tmp_path / "toy.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS) + "\n", encoding="utf-8")
    return p


def test_dialog_retrieval_with_the_real_index(data_file: Path, tmp_path: Path) -> None:
    records = load_records(data_file)
    perfect = Scripted(FOLLOW_UPS)  # the "system" rewrites exactly like the human
    rep = evaluate_retrieval(records, perfect, index_dir=tmp_path / "ix1", index_factory=local_index)
    assert (rep["mode"], rep["n_docs"], rep["n_queries"]) == ("dialogs", 4, 6)
    s = rep["systems"]
    assert s["human"]["recall@10"] == 1.0
    assert s["human"]["mrr@10"] == 1.0
    assert s["system"] == s["human"]
    assert s["raw"]["mrr@10"] < s["human"]["mrr@10"]
    assert rep["gap_closed"] == pytest.approx(1.0) or rep["gap_closed"] is None

    rep = evaluate_retrieval(records, Passthrough(), index_dir=tmp_path / "ix2")
    assert rep["systems"]["system"] == rep["systems"]["raw"] == rep["systems"]["dual"]
    assert rep["changed"] == 0.0


def test_passage_retrieval_with_the_real_index(tmp_path: Path) -> None:
    passages = {"p-tilburg": "Tilburg University offers a master in data science and artificial intelligence.",
                "p-canals": "Amsterdam is famous for its canals and bicycles.",
                "p-leiden": "Leiden University is the oldest university in the Netherlands."}
    rows = [
        {**rec("1-1_1", [], "I want to start a master's degree."), "gold_passages_text": {}},
        {**rec("1-1_2", ["I want to start a master's degree.", "In which field?"], "The one I studied."),
         "rewrite": "A master in data science", "gold_passage_ids": ["p-tilburg"],
         "gold_passages_text": {"p-tilburg": passages["p-tilburg"]}},
        {**rec("1-1_3", ["x", "y"], "Which is the oldest?"), "rewrite": "Which university in the Netherlands is the oldest?",
         "gold_passages_text": {"p-leiden": passages["p-leiden"], "p-canals": passages["p-canals"]},
         "gold_passage_ids": ["p-leiden"]},
    ]
    p = tmp_path / "ikat.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    rep = evaluate_retrieval(load_records(p), Passthrough(), index_dir=tmp_path / "ix")
    assert (rep["mode"], rep["n_docs"], rep["n_queries"]) == ("passages", 3, 2)
    assert rep["skipped"] == {"no_gold_passages": 1}
    assert rep["systems"]["human"]["recall@10"] > 0.5


def test_cli_retrieval_end_to_end(data_file: Path) -> None:
    res = CliRunner().invoke(eval_app, ["retrieval", "--data", str(data_file), "--rewriter", "passthrough", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["n_queries"] == 6 and set(rep["systems"]) == {"raw", "system", "human", "dual"}
    res = CliRunner().invoke(eval_app, ["retrieval", "--data", str(data_file), "--rewriter", "passthrough",
                                        "--limit", "2"])
    assert res.exit_code == 0
    assert "gap_closed" in res.stdout and "queries=2/6" in res.stdout


def test_cli_retrieval_on_milvus_lite_beside_local(data_file: Path) -> None:
    """The same evaluation through another engine: `--backend milvus` indexes the corpus into Milvus Lite."""
    pytest.importorskip("pymilvus")
    reps = {}
    for backend in ("local", "milvus"):
        res = CliRunner().invoke(eval_app, ["retrieval", "--data", str(data_file), "--rewriter", "passthrough",
                                            "--backend", backend, "--json"])
        assert res.exit_code == 0, res.output
        reps[backend] = json.loads(res.stdout)
    assert reps["milvus"]["backend"] == "milvus" and reps["local"]["backend"] == "local"
    assert reps["milvus"]["n_docs"] == reps["local"]["n_docs"] and reps["milvus"]["n_queries"] == 6
    assert reps["milvus"]["systems"]["human"]["recall@10"] > 0.5  # the gold documents are found there too
    res = CliRunner().invoke(eval_app, ["retrieval", "--data", str(data_file), "--backend", "elastic"])
    assert res.exit_code == 2 and "elastic" in res.output


def test_cli_oracle_end_to_end(data_file: Path, tmp_path: Path) -> None:
    from convsearch.eval.commands import eval_app as app  # the app with the commands that run the others

    doc = tmp_path / "B.md"
    doc.write_text("# B\n\n## How to rerun\n\nmake bench\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["oracle", "--data", str(data_file), "--json", "--markdown", str(doc)])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    (name, one), = rep["sets"].items()
    rows = {r["row"]: r for r in one["rows"]}
    assert name == f"{data_file.parent.name}/toy" and one["n_queries"] == 6
    assert rows["oracle every turn"]["recall@10"] == 100.0  # the human rewrites find every dialog (above)
    assert rows["oracle every turn"]["calls_per_100"] == 100.0 and rows["auto t=0.00"]["calls_per_100"] == 0.0
    assert rows["raw"]["recall@10"] < 100.0
    assert rep["choice"]["on"] == [name] and 0.0 <= rep["choice"]["chosen"] <= 1.0
    text = doc.read_text(encoding="utf-8")
    assert text.index("## auto with an oracle") < text.index("## How to rerun") and "| oracle every turn | 100.0 |" in text
    res = CliRunner().invoke(app, ["oracle", "--data", str(data_file), "--choose-on", "nope/none"])
    assert res.exit_code == 2 and "no report for nope/none" in res.output
    res = CliRunner().invoke(app, ["oracle", "--data", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "no such data file" in res.output
