"""The oracle harness (eval.oracle): calls per 100 turns and retrieval per threshold, on a tiny hand-made JSONL in a
temp dir with the in-memory index; and the threshold chosen on folds, on hand-made turn scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from convsearch.backends.base import InMemoryBackend
from convsearch.eval.data import load_records
from convsearch.eval.oracle import (
    GRID,
    Oracle,
    TurnScore,
    by_confidence,
    choose,
    evaluate_oracle,
    oracle_report,
    per_query,
    pick,
    point,
    rules_auto,
    splice,
)
from convsearch.eval.retrieval_eval import evaluate_retrieval
from convsearch.learned.auto import AskWhenUnsure
from convsearch.learned.rewriter import LearnedRewriter
from convsearch.rewrite.base import Passthrough
from convsearch.rewrite.enhance import EnhanceRequest

EIFFEL = ["what is the Eiffel Tower?", "The Eiffel Tower is a wrought iron lattice tower in Paris."]
HAMLET = ["who wrote Hamlet?", "William Shakespeare wrote Hamlet around 1600."]
FUJI = ["tell me about Mount Fuji", "Mount Fuji is a volcano on Honshu."]
ROWS = [
    ("A_q1", [], EIFFEL[0], EIFFEL[0]),
    ("A_q2", EIFFEL, "how tall?", "how tall is the Eiffel Tower?"),
    ("B_q1", [], HAMLET[0], HAMLET[0]),
    ("B_q2", HAMLET, "when did he die?", "when did William Shakespeare die?"),
    ("C_q2", FUJI, "how high?", "how high is Mount Fuji?"),
    ("C_q3", [*FUJI, "how high?", "It rises 3776 metres."], "is it active?", "is Mount Fuji active?"),
    ("C_q4", [*FUJI, "how high?", "It rises 3776 metres."], "when did it last erupt?",
     "when did Mount Fuji last erupt?"),
    # a human rewrite that finds the wrong dialog: the oracle's row must show it, whatever the learned side does
    ("C_q5", [*FUJI, "how high?", "It rises 3776 metres."], "who climbed it first?", "who wrote Hamlet?"),
]


def memory_index(path: Path) -> InMemoryBackend:
    return InMemoryBackend()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "toy.jsonl"
    with p.open("w", encoding="utf-8") as f:
        for id_, hist, q, rw in ROWS:
            roles = ["user", "assistant"] * (len(hist) // 2)
            f.write(json.dumps({"id": id_, "dataset": "toy", "lang": "en", "history": hist, "history_roles": roles,
                                "question": q, "rewrite": rw}) + "\n")
    return p


def test_the_curve_ends_in_the_human_row_and_counts_calls(data: Path, tmp_path: Path) -> None:
    records = load_records(data)
    rep = evaluate_oracle(records, index_dir=tmp_path / "i", data_path=data, index_factory=memory_index)
    rows = {r["row"]: r for r in rep["rows"]}
    assert rep["n_queries"] == 6 and rep["out_of_fold"] is None  # not a training file: the full model
    # the harness's own per-turn scoring agrees with the retrieval harness (ranx) on raw, human and learned
    base = evaluate_retrieval(records, Passthrough(), index_dir=tmp_path / "j", index_factory=memory_index)
    learned = evaluate_retrieval(records, LearnedRewriter(), index_dir=tmp_path / "k", index_factory=memory_index)
    assert rows["raw"]["recall@10"] == pytest.approx(100 * base["systems"]["raw"]["recall@10"])
    assert rows["oracle every turn"]["recall@10"] == pytest.approx(100 * base["systems"]["human"]["recall@10"])
    assert rows["oracle every turn"]["mrr@10"] == pytest.approx(100 * base["systems"]["human"]["mrr@10"])
    assert rows["learned (offline)"]["recall@10"] == pytest.approx(100 * learned["systems"]["system"]["recall@10"])
    assert rows["oracle every turn"]["calls_per_100"] == 100.0
    assert rows["oracle every turn"]["recall@10"] < 100.0 and 0 < rows["auto t=1.00"]["calls_per_100"]
    assert rows["auto t=0.00"]["calls_per_100"] == 0.0
    assert rows["auto t=0.00"]["recall@10"] == rows["learned (offline)"]["recall@10"]
    # the product path with the oracle standing in for the LLM: same calls and same queries as the curve
    eligible = [r for r in records if r.history]
    for t in (0.15, 0.5, 1.0):
        oracle = Oracle()
        auto = AskWhenUnsure(oracle, LearnedRewriter(), below=t)
        asked = 0
        for r in eligible:
            oracle.feed(r.rewrite)
            before = oracle.calls
            out = auto.enhance(EnhanceRequest(r.question, tuple(r.messages())))
            if oracle.calls > before:
                asked += 1
                assert out.query == r.rewrite and out.method == "oracle"
            else:
                assert out.method == "learned"
        assert rows[f"auto t={t:.2f}"]["calls_per_100"] == pytest.approx(100 * asked / len(eligible))
    calls = [rows[f"auto t={t:.2f}"]["calls_per_100"] for t in GRID]
    assert calls == sorted(calls)  # more calls as the threshold rises


def test_per_query_scores() -> None:
    assert per_query(["a", "b", "c"], {"c"}) == (1.0, pytest.approx(1 / 3))
    assert per_query(["a", "a", "b"], {"b", "z"}) == (0.5, 0.5)  # a repeat does not take a rank
    assert per_query([str(i) for i in range(20)], {"15"}) == (0.0, 0.0)  # beyond the top 10


def turn(fold: int, conf: float, offline: float, human: float, askable: bool = True) -> TurnScore:
    return TurnScore(fold, conf, askable, {"raw": 0.0, "rules": 0.0, "offline": offline, "human": human},
                     {"raw": 0.0, "rules": 0.0, "offline": offline, "human": human})


def test_point_and_pick_by_hand() -> None:
    ts = [turn(0, 0.1, 0.0, 1.0), turn(0, 0.3, 1.0, 0.0), turn(0, 0.05, 1.0, 0.0, askable=False)]
    p = point(ts, 0.2)  # asks on the first turn only (the third is the rules' sure turn)
    assert p["calls_per_100"] == pytest.approx(100 / 3) and p["recall@10"] == pytest.approx(300 / 3)
    assert point(ts, 0.0)["recall@10"] == pytest.approx(200 / 3)
    assert point(ts, None)["recall@10"] == pytest.approx(100 / 3)  # the oracle on every turn: human everywhere
    assert point(ts, None)["calls_per_100"] == 100.0
    assert pick([ts]) == 0.0  # the offline answer alone is already above the oracle on every turn
    assert pick([ts[:1]]) == 0.11  # 0.1 < t: the one turn where asking helps (the choice's grid: steps of 0.01)
    assert pick([ts[:1]], GRID) == 0.15


def test_a_dip_below_the_line_is_not_a_choice() -> None:
    # past 0.1 asking recovers one turn (on the line); past 0.3 a turn the human rewrite does worse on is asked too
    # (below it); past 0.6 another the human rewrite does better on makes up for it
    ts = [turn(0, 0.1, 0.0, 1.0), turn(0, 0.3, 1.0, 0.0), turn(0, 0.6, 0.0, 1.0)] + [turn(0, 0.9, 1.0, 1.0)] * 7
    oracle = point(ts, None)["recall@10"]
    assert point(ts, 0.15)["recall@10"] >= oracle - 1  # a first-hit rule would take 0.15 …
    assert point(ts, 0.4)["recall@10"] < oracle - 1  # … and give the point up at 0.4
    assert point(ts, 0.65)["recall@10"] >= oracle - 1
    assert pick([ts], GRID) == 0.65  # from 0.65 on it holds at every threshold of the grid


def test_the_rules_auto_row() -> None:
    ts = [TurnScore(0, 0.9, True, {"raw": 0.0, "rules": 0.0, "offline": 0.5, "human": 1.0},
                    {"raw": 0.0, "rules": 0.0, "offline": 0.5, "human": 1.0}, True),
          TurnScore(0, 0.1, True, {"raw": 0.0, "rules": 0.25, "offline": 0.0, "human": 1.0},
                    {"raw": 0.0, "rules": 0.5, "offline": 0.0, "human": 1.0}, False)]
    row = rules_auto(ts)  # the first turn asks (human: 1.0), the second keeps the rules' answer (0.25)
    assert row["calls_per_100"] == 50.0 and row["recall@10"] == pytest.approx(62.5)
    assert row["mrr@10"] == pytest.approx(75.0)


def test_the_threshold_of_a_fold_is_chosen_without_it() -> None:
    # folds 1-4: asking below 0.1 recovers a turn; fold 0's turn needs the LLM below 0.3
    ts = [turn(0, 0.25, 0.0, 1.0)] + [turn(k, 0.05, 0.0, 1.0) for k in range(1, 5)] \
        + [turn(k, 0.9, 1.0, 1.0) for k in range(5) for _ in range(3)]
    rep = {"toy": {"turns": [[s.fold, s.confidence, int(s.askable), *s.recall.values(), *s.rr.values()] for s in ts]}}
    c = choose(rep, grid=GRID)
    assert c["per_fold"][0] == 0.1  # fold 0's own turn took no part
    assert all(c["per_fold"][k] == 0.3 for k in range(1, 5))
    assert c["chosen"] == 0.3
    held = c["held_out"]["toy"]
    assert held["drop"] == pytest.approx(100 / 20)  # fold 0's turn, at 0.1, is missed
    assert held["calls_per_100"] == pytest.approx(100 * 4 / 20)
    with pytest.raises(ValueError, match="no report for nope"):
        choose(rep, on=["nope"])


def test_splice_replaces_or_inserts_the_section() -> None:
    doc = "# B\n\n## 1. x\n\ntext\n\n## How to rerun\n\nmake\n"
    once = splice(doc, "## auto with an oracle: v1\n\nA\n")
    assert once.index("## auto with an oracle") < once.index("## How to rerun") and "## 1. x" in once
    twice = splice(once, "## auto with an oracle: v2\n\nB\n")
    assert "v1" not in twice and "v2" in twice and twice.count("## auto with an oracle") == 1
    assert twice.endswith("## How to rerun\n\nmake\n")


def test_by_confidence_bins_by_hand() -> None:
    ts = [turn(0, 0.01, 0.0, 1.0), turn(0, 0.02, 1.0, 0.0), turn(0, 0.04, 0.5, 1.0), turn(0, 1.0, 0.0, 1.0),
          turn(0, 0.01, 0.0, 1.0, askable=False)]
    bins = by_confidence(ts)
    assert (bins[0]["n"], bins[0]["better"], bins[0]["worse"]) == (3, 2, 1)  # the rules' sure turn is left out
    assert bins[0]["net"] == pytest.approx(0.5)
    assert (bins[-1]["n"], bins[-1]["net"]) == (1, 1.0)  # 1.0 falls in the last bin
    assert sum(b["n"] for b in bins) == 4


def test_a_threshold_is_never_chosen_on_an_evaluation_only_set(tmp_path: Path) -> None:
    folder = tmp_path / "mudoco-qr-cread"
    folder.mkdir()
    rec = {"id": "d1_q2", "dataset": "toy", "lang": "en", "history": ["who founded Acme?", "Jane Doe."],
           "history_roles": ["user", "assistant"], "question": "when?", "rewrite": "when did Jane Doe found Acme?"}
    (folder / "dev.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="evaluation only, a threshold is never chosen on it"):
        oracle_report([folder / "dev.jsonl"], choose_on=["mudoco-qr-cread/dev"])
    with pytest.raises(ValueError, match="every set given is evaluation only"):
        oracle_report([folder / "dev.jsonl"])
