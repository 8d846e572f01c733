"""The trained resolver's phase 1 (issue 26): folds by dialog, labels, features, the numpy optimiser.

Small hand-made turns only: nothing here reads ../shared/data."""

from __future__ import annotations

import json

import numpy as np
import pytest
from research.learned.data import FOLDS, Turn, dialog_of_id, fold_of, split_folds, turn_of
from research.learned.fit import fit_logistic
from research.learned.labels import added_words, needed_term, needs_rewrite

from convsearch.eval.data import parse_record
from convsearch.learned.features import CANDIDATE_NAMES, TURN_NAMES, IdfTable, featurize, view
from convsearch.learned.model import Logistic
from convsearch.resolve.gate import needs_rewrite as rules_gate
from convsearch.types import Message


def _record(rid: str, history: list[str], question: str, rewrite: str) -> Turn:
    roles = ["user" if i % 2 == 0 else "assistant" for i in range(len(history))]
    obj = {"id": rid, "dataset": "toy", "history": history, "history_roles": roles, "question": question,
           "rewrite": rewrite}
    return turn_of(parse_record(obj), "toy", source="toy")


# --- folds -------------------------------------------------------------------------------------------------------
def test_every_turn_of_a_dialog_lands_in_one_fold() -> None:
    turns = [_record(f"d{d}_{t}", ["q"] * t, f"question {t}", f"question {t}") for d in range(40) for t in range(1, 5)]
    splits = split_folds(turns)
    assert len(splits) == FOLDS
    held = [set(h) for _, h in splits]
    assert sorted(i for h in held for i in h) == list(range(len(turns)))  # each turn held out exactly once
    for (train, _), h in zip(splits, held):
        assert h and not set(train) & h
        train_dialogs = {turns[i].dialog for i in train}
        assert not train_dialogs & {turns[i].dialog for i in h}  # no dialog on both sides


def test_folds_are_deterministic_and_spread() -> None:
    names = [f"canard/dev/C_{i}_0" for i in range(500)]
    first = [fold_of(n) for n in names]
    assert first == [fold_of(n) for n in names]
    assert fold_of("canard/dev/C_1_0") == fold_of("canard/dev/C_1_0", FOLDS)
    counts = np.bincount(first, minlength=FOLDS)
    assert counts.min() > 60  # 500 dialogs over 5 folds: none starved


def test_the_dialog_of_a_record_id() -> None:
    assert dialog_of_id("C_2d211835213b45588ad5ca868ce7fabd_0_q3") == "C_2d211835213b45588ad5ca868ce7fabd_0"
    assert dialog_of_id("crosswoz_val_11290_6") == "crosswoz_val_11290"
    assert dialog_of_id("1-1_3") == "1-1"
    t = _record("camrest_540_2", ["hi", "hello"], "What is their address?", "What is the address of Nandos?")
    assert t.dialog == "toy/toy/camrest_540" and len(t.history) == 2


# --- labels ------------------------------------------------------------------------------------------------------
def test_labels_english() -> None:
    q, rw = "What kind of music did they play?", "What kind of music did Zappa and the Mothers of Invention play?"
    assert needs_rewrite(q, rw)
    assert not needs_rewrite("What kind of music did they play", q)  # compared as eval.metrics compares
    assert needed_term("Zappa and the Mothers of Invention", q, rw)
    assert needed_term("the Mothers", q, rw)
    assert not needed_term("music", q, rw)  # in the question already
    assert not needed_term("Frank Zappa's childhood home", q, rw)  # one word of four: not this phrase
    assert needed_term("restaurants", "Where are they?", "Where are the two restaurant?")  # stems meet
    assert set(added_words(q, rw)) == {"zappa", "mothers", "invention"}


def test_labels_chinese() -> None:
    q, rw = "这家餐馆的地址在哪？", "讲礼驴肉馆的地址在哪？"
    assert needs_rewrite(q, rw)
    assert needed_term("讲礼驴肉馆", q, rw)
    assert not needed_term("地址", q, rw)
    assert not needed_term("小汤山镇", q, rw)
    assert needed_term("故宫博物院", "门票多少钱？", "故宫博物院的门票多少钱？")
    assert not needed_term("的", "门票多少钱？", "故宫的门票多少钱？")  # no content word: never a term


# --- features ----------------------------------------------------------------------------------------------------
TURNS = [
    ([Message("user", "AnySearch 支持哪些检索方式？"), Message("assistant", "支持 BM25 和向量检索。")],
     "价格呢？", None),
    ([Message("user", "What group disbanded?"), Message("assistant", "Zappa and the Mothers of Invention")],
     "When did they disband?", "Frank Zappa: Disbandment"),
    ([], "How tall is the Eiffel Tower?", None),
    ([Message("user", "北京明天天气怎么样？")], "谢谢", None),
]


@pytest.mark.parametrize(("history", "question", "topic"), TURNS)
def test_features_have_a_fixed_length_and_no_nan(history, question, topic) -> None:
    idf = IdfTable.build([m.content for h, _, _ in TURNS for m in h])
    v = view(history, question, topic)
    g, c = featurize(v, idf)
    assert g.shape == (len(TURN_NAMES),)
    assert c.shape == (len(v.candidates), len(CANDIDATE_NAMES))
    assert np.isfinite(g).all() and np.isfinite(c).all()
    assert v.decision.needed == rules_gate(history, question, topic=topic).needed  # the rules' verdict, same turn
    if v.candidates:
        np.testing.assert_array_equal(c[:, -len(TURN_NAMES):], np.broadcast_to(g, (len(c), len(g))))


def test_the_idf_table_ranks_rare_words_higher_and_round_trips() -> None:
    idf = IdfTable.build(["the price of AnySearch", "the price of tea", "the price of tea", "AnySearch pricing"])
    assert idf.n_docs == 3  # a repeated text is one document
    assert idf.scaled("tea") > idf.scaled("price")
    assert idf.scaled("never-seen") == pytest.approx(1.0)
    assert IdfTable.from_dict(idf.to_dict()) == idf


# --- the optimiser -----------------------------------------------------------------------------------------------
def test_newton_fits_a_separable_set() -> None:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] - 2 * X[:, 2] > 0).astype(int)
    m = fit_logistic(X, y, l2=0.01)
    assert ((m.proba(X) >= 0.5) == y).all()
    assert np.isfinite(m.weights).all() and m.iterations < 100  # L2 keeps a separable set's weights finite
    assert m.weights[2] < 0 < m.weights[0]


def test_the_fit_is_deterministic_and_round_trips() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    y = (X @ [1.0, -1.0, 0.5] + rng.logistic(size=200) > 0).astype(int)
    a, b = fit_logistic(X, y), fit_logistic(X, y)
    np.testing.assert_array_equal(a.weights, b.weights)
    again = Logistic.from_dict(a.to_dict())
    np.testing.assert_allclose(again.proba(X), a.proba(X))


def test_the_penalty_shrinks_and_a_constant_column_is_harmless() -> None:
    rng = np.random.default_rng(5)
    X = np.hstack([rng.normal(size=(100, 2)), np.ones((100, 1))])
    y = (X[:, 0] > 0).astype(int)
    loose, tight = fit_logistic(X, y, l2=0.1), fit_logistic(X, y, l2=100.0)
    assert abs(tight.weights[0]) < abs(loose.weights[0])
    assert loose.weights[2] == 0.0


def test_no_evaluation_only_set_reaches_training() -> None:
    """../shared/data/conv-rewrite-train/README.md: Restoration-200K, Su 2019, MuDoCo and the search follow-ups
    measure; none of their files is a training file, and the evaluation-only sets are apart from the training ones."""
    from research.learned.data import EVAL_ONLY, TRAIN_SETS

    files = [f for ds in TRAIN_SETS for f in ds.files]
    for banned in ("restoration-200k", "su2019", "mudoco", "search-followups"):
        assert not any(banned in f for f in files), banned
    assert not {ds.name for ds in EVAL_ONLY} & {ds.name for ds in TRAIN_SETS}
    assert all(ds.license and ds.attribution for ds in TRAIN_SETS)


def test_export_fits_through_train_fit_with_a_pruned_idf_table() -> None:
    from research.learned.export import fit_models
    from research.learned.train import fit, prepare

    hist = (Message("user", "Tell me about the Waterboys band."),
            Message("assistant", "The Waterboys are a rock band."))
    qs = ["When did they form?", "Who founded them?", "What about their albums?", "Is the band still touring?",
          "Where are they from?", "How many albums do they have?"]
    turns = [Turn(f"t{i}", "canard", f"canard/dev/d{i % 5}", "en", hist, q,
                  q.replace("they", "the Waterboys").replace("them", "the Waterboys")) for i, q in enumerate(qs * 4)]
    p = prepare(turns)
    idx = np.arange(len(turns))
    d = fit_models(p, idx, min_df=2, gate_model="gbdt", term_model="logistic")
    assert d["gate"]["kind"] == "gbdt" and d["term"]["kind"] == "logistic"
    assert d["idf"]["df"] and min(d["idf"]["df"].values()) >= 2
    same = fit(p, idx, gate_model="gbdt", term_model="logistic", min_df=2)[0].to_dict()
    assert json.dumps(d, sort_keys=True) == json.dumps(same, sort_keys=True)  # one fitting path, one answer
    unpruned = fit(p, idx, gate_model="gbdt", term_model="logistic")[0].idf
    assert len(unpruned.df) >= len(d["idf"]["df"])
