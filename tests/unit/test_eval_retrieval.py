"""evaluate_retrieval on tiny synthetic conversations, with the in-memory backend as the index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from convsearch.backends.base import InMemoryBackend
from convsearch.eval.data import EvalRecord, parse_record
from convsearch.eval.retrieval_eval import (
    build_task,
    dialog_key,
    evaluate_retrieval,
    gap_closed,
    group_dialogs,
)
from convsearch.rewrite.base import Passthrough, Scripted


def r(id: str, history: list[str], question: str, rewrite: str, **kw: Any) -> EvalRecord:
    roles = ["user", "assistant"] * (len(history) // 2) + ["user"] * (len(history) % 2)
    return parse_record({"id": id, "dataset": "toy", "lang": "en", "history": history, "history_roles": roles,
                         "question": question, "rewrite": rewrite, **kw})


EIFFEL = ["what is the Eiffel Tower?", "The Eiffel Tower is a wrought iron lattice tower in Paris."]
HAMLET = ["who wrote Hamlet?", "William Shakespeare wrote Hamlet around 1600."]
FUJI = ["tell me about Mount Fuji", "Mount Fuji is a volcano on Honshu."]

DIALOGS = [
    r("A_q1", [], EIFFEL[0], EIFFEL[0]),
    r("A_q2", EIFFEL, "how tall?", "how tall is the Eiffel Tower?"),
    r("B_q1", [], HAMLET[0], HAMLET[0]),
    r("B_q2", HAMLET, "when did he die?", "when did William Shakespeare die?"),
    r("C_q2", FUJI, "how high?", "how high is Mount Fuji?"),
    r("C_q3", [*FUJI, "how high?", "It rises 3776 metres."], "is it active?", "is Mount Fuji active?"),
]


def memory_index(path: Path) -> InMemoryBackend:
    return InMemoryBackend()


def test_dialog_retrieval_hand_computed(tmp_path: Path) -> None:
    rewriter = Scripted({"how tall?": "how tall is the Eiffel Tower?", "how high?": "how high is Mount Fuji?"})
    rep = evaluate_retrieval(DIALOGS, rewriter, index_dir=tmp_path, index_factory=memory_index)
    assert rep["mode"] == "dialogs"
    assert (rep["n_docs"], rep["n_queries"]) == (3, 4)
    assert rep["skipped"] == {"first_turn": 2}
    assert rep["doc_source"] == {"assistant": 3}
    s = rep["systems"]
    # raw: only "is it active?" finds its dialog ("is", "it" are in the Fuji answers)
    assert s["raw"]["recall@10"] == pytest.approx(0.25)
    assert s["human"]["recall@10"] == pytest.approx(1.0)
    assert s["human"]["mrr@10"] == pytest.approx(1.0)
    # system: two scripted rewrites land at rank 1, "when did he die?" stays unanswerable
    assert s["system"]["recall@10"] == pytest.approx(0.75)
    assert s["dual"]["recall@10"] == pytest.approx(0.75)
    assert rep["gap_closed"] == pytest.approx((0.75 - 0.25) / (1.0 - 0.25))
    assert rep["changed"] == pytest.approx(0.5)
    assert set(rep["systems"]) == {"raw", "system", "human", "dual"}


def test_limit_caps_scored_turns_not_the_corpus(tmp_path: Path) -> None:
    rep = evaluate_retrieval(DIALOGS, Passthrough(), index_dir=tmp_path, index_factory=memory_index, limit=1)
    assert (rep["n_docs"], rep["n_queries"], rep["n_eligible"]) == (3, 1, 4)
    assert rep["gap_closed"] == 0.0  # passthrough gains nothing; human gains on A_q2


def test_dialog_document_is_the_longest_records_assistant_turns() -> None:
    task = build_task(DIALOGS)
    docs = {d.id: d.text for d in task.docs}
    assert docs["C"] == "Mount Fuji is a volcano on Honshu.\nIt rises 3776 metres."
    assert "tell me about" not in docs["C"]  # nothing from the user side
    assert {t.record.id: t.qrels for t in task.turns}["C_q2"] == {"C": 1}


def test_dialog_keys() -> None:
    assert dialog_key(r("C_2d21_0_q3", [], "q", "q", meta={"quac_dialog_id": "C_2d21_0"})) == "quac_dialog_id=C_2d21_0"
    assert dialog_key(r("calling-dial3-turn4", [], "q", "q")) == "calling-dial3"
    assert dialog_key(r("1-1_3", [], "q", "q")) == "1-1"
    assert dialog_key(r("cqr_dev_10_5", [], "q", "q")) == "cqr_dev_10"
    assert dialog_key(r("camrest_540_1", [], "q", "q", meta={"dialogue_id": 540})) == "dialogue_id=540"
    assert dialog_key(r("plain", [], "q", "q")) == "plain"


def test_ids_without_dialogs_are_split_by_history() -> None:
    # "rewrite_18000", "rewrite_18001": same id prefix, unrelated sessions → two dialogs
    recs = [r("rewrite_18000", ["你知道板泉井水吗", "知道"], "她是歌手", "板泉井水是歌手"),
            r("rewrite_18001", ["能给我签名吗", "出专辑再议"], "我现在就要", "我现在就要签名")]
    dialogs = group_dialogs(recs)
    assert len(dialogs) == 2
    assert all(len(v) == 1 for v in dialogs.values())


def test_user_only_histories_fall_back_to_the_topic_description(tmp_path: Path) -> None:
    topic = {"title": "head and neck cancer", "description": "Compare cancer of the throat and the lungs."}
    recs = [r("31_1", [], "What is throat cancer?", "What is throat cancer?", topic=topic),
            parse_record({"id": "31_2", "dataset": "cast", "history": ["What is throat cancer?"],
                          "history_roles": ["user"], "question": "Is it treatable?",
                          "rewrite": "Is throat cancer treatable?", "topic": topic}),
            parse_record({"id": "40_2", "dataset": "cast", "history": ["hi"], "history_roles": ["user"],
                          "question": "and then?", "rewrite": "and then?"})]
    rep = evaluate_retrieval(recs, Passthrough(), index_dir=tmp_path, index_factory=memory_index)
    assert rep["doc_source"] == {"topic_description": 1, "none": 1}
    assert rep["skipped"] == {"first_turn": 1, "dialog_without_text": 1}
    assert rep["n_queries"] == 1
    assert rep["systems"]["human"]["recall@10"] == 1.0


def test_passage_mode(tmp_path: Path) -> None:
    p1, p2, p3 = "Tilburg offers a master in data science.", "Amsterdam has many canals.", "Leiden is old."
    recs = [r("1-1_1", [], "find a university", "find a university", gold_passages_text={}),
            r("1-1_2", ["find a university", "Which country?"], "here, in the Netherlands",
              "a data science master in the Netherlands", gold_passage_ids=["p1"], gold_passages_text={"p1": p1}),
            r("1-1_3", ["x", "y"], "canals?", "Amsterdam canals", gold_passages_text={"p2": p2, "p3": p3})]
    task = build_task(recs)
    assert task.mode == "passages"
    assert sorted(d.id for d in task.docs) == ["p1", "p2", "p3"]
    assert [t.qrels for t in task.turns] == [{"p1": 1}, {"p2": 1, "p3": 1}]
    rep = evaluate_retrieval(recs, Passthrough(), index_dir=tmp_path, index_factory=memory_index)
    assert rep["skipped"] == {"no_gold_passages": 1}
    assert rep["systems"]["human"]["recall@10"] == pytest.approx((1.0 + 0.5) / 2)


def test_gap_closed() -> None:
    assert gap_closed(0.2, 0.5, 0.8) == pytest.approx(0.5)
    assert gap_closed(0.4, 0.6, 0.4) is None
    assert gap_closed(0.4, 0.2, 0.6) == pytest.approx(-1.0)
