"""When ``auto`` asks the LLM: the learned doubt over the offline answer (``learned.ask``, ``learned.ask_train``;
issue 26, item 4). Hand-made turns and rows; the shipped model file is read, ../shared/data is not."""

from __future__ import annotations

import numpy as np
import pytest
from research.learned.ask_train import Rows, file_rows, fit_ask, fit_doubt, out_of_fold, ranked, ranking_table
from research.learned.fit import fit_gbdt, fit_logistic

from convsearch.eval.oracle import per_query
from convsearch.learned.ask import ASK_NAMES, EXTRA_NAMES, LEVELS, AskModels, Doubt, Ranked, ask_row
from convsearch.learned.features import TURN_NAMES
from convsearch.learned.resolver import Resolver
from convsearch.types import Message

EN = [Message("user", "Who founded SpaceX?"), Message("assistant", "Elon Musk founded SpaceX in 2002.")]
ZH_COL = TURN_NAMES.index("lang_zh")
SIGNAL = TURN_NAMES.index("q_pronoun")  # the column the toy labels follow


def _extra(row: np.ndarray) -> dict[str, float]:
    return dict(zip(EXTRA_NAMES, row[len(TURN_NAMES):]))


def test_the_row_says_what_the_offline_answer_left_out() -> None:
    scored = Resolver().score(EN, "how much is he worth?")
    v, gate, probs, f = scored
    top = max((p, c.text) for p, c in zip(probs, v.candidates) if not c.in_query)
    left = _extra(ask_row(*scored, "how much is he worth?", 0.5))
    took = _extra(ask_row(*scored, f"how much is {top[1]} worth?", 0.5))
    assert left["a_missed_max"] == pytest.approx(top[0]) and left["a_changed"] == 0.0
    assert left["a_pronoun_left"] == 1.0 and took["a_pronoun_left"] == 0.0
    assert took["a_covered_max"] == pytest.approx(top[0]) and took["a_missed_max"] < top[0]
    assert took["a_changed"] == 1.0 and took["a_added_words"] > 0
    assert left["a_gate"] == pytest.approx(gate) and left["a_confidence"] == 0.5
    assert len(ask_row(*scored, "x", 0.5)) == len(ASK_NAMES)


def _rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(ASK_NAMES)))
    X[:, ZH_COL] = (np.arange(n) % 2).astype(float)  # every other row Chinese
    y = (X[:, SIGNAL] + 0.3 * rng.normal(size=n) > 0.8).astype(float)
    return X, y


def test_a_rank_is_among_the_training_turns_of_the_rows_language() -> None:
    X, y = _rows(400, 0)
    X[X[:, ZH_COL] == 1, SIGNAL] += 3.0  # the Chinese rows all look doubtful
    r = ranked(fit_logistic(X, y, names=ASK_NAMES), X)
    assert r.quantiles.shape == (2, LEVELS)
    conf = r.confidence(X)
    assert conf.min() >= 0.0 and conf.max() <= 1.0
    for lang in (0, 1):  # within each language the ranks spread over [0, 1]: about half below 0.5
        mine = conf[X[:, ZH_COL] == lang]
        assert 0.4 < float(np.mean(mine < 0.5)) < 0.6
    # a more doubtful row (higher probability) never gets a higher confidence
    p = r.model.proba(X)
    en = X[:, ZH_COL] == 0
    order = np.argsort(p[en])
    assert np.all(np.diff(conf[en][order]) <= 1e-12)
    back = Ranked.from_dict(r.to_dict())
    assert np.allclose(back.confidence(X), conf)


def test_the_doubt_is_the_mean_of_its_models_ranks() -> None:
    X, y = _rows(300, 1)
    a = ranked(fit_logistic(X, y, names=ASK_NAMES), X)
    b = ranked(fit_gbdt(X, y, trees=10, names=ASK_NAMES), X)
    d = Doubt((a, b))
    row = X[7]
    assert d.confidence(row) == pytest.approx((a.confidence(row[None])[0] + b.confidence(row[None])[0]) / 2)
    assert Doubt.from_dict(d.to_dict()).confidence(row) == pytest.approx(d.confidence(row))


def test_fold_models_never_see_their_fold_and_the_fit_is_deterministic() -> None:
    X, y = _rows(250, 2)
    fold = np.arange(250) % 5
    rows = Rows(X, y.astype(int), np.maximum(y, X[:, SIGNAL + 1] > 1).astype(int), fold, ["a.jsonl"] * 250)
    ask = fit_ask(rows)
    assert len(ask["folds"]) == 5 and ask["rows"] == 250
    assert ask["positives"]["retrieval"] == int(y.sum())
    # fold 0's model is the fit on the other folds' rows, exactly
    again = fit_doubt(rows, rows.fold != 0).to_dict()
    assert again == ask["folds"][0]
    assert Doubt.from_dict(ask["folds"][0]).to_dict() == ask["folds"][0]
    # fold 0's rows take no part in fold 0's models: flipping their labels leaves those models as they were
    flipped = Rows(X, np.where(fold == 0, 1 - rows.retrieval, rows.retrieval),
                   np.where(fold == 0, 1 - rows.broad, rows.broad), fold, rows.file)
    again_flipped = fit_ask(flipped)
    assert again_flipped["folds"][0] == ask["folds"][0] and again_flipped["folds"][1] != ask["folds"][1]
    conf = out_of_fold(rows, ask)
    assert conf.shape == (250,) and 0.0 <= conf.min() and conf.max() <= 1.0
    # the positives sit in the doubtful part out of fold (the label follows one column)
    assert conf[rows.retrieval == 1].mean() < conf[rows.retrieval == 0].mean()
    table = ranking_table(rows, conf)
    assert "| a.jsonl | 250 |" in table


def test_the_retrieval_label_reads_recall_at_ten() -> None:  # ask_train labels with the oracle's per_query
    assert per_query(["a", "b", "c"], {"c": 1, "z": 1})[0] == 0.5
    assert per_query([str(i) for i in range(20)], {"15": 1})[0] == 0.0
    assert per_query(["a"], {})[0] == 0.0


def test_a_fold_the_ask_section_lacks_is_an_error() -> None:
    X, y = _rows(120, 3)
    fold = np.arange(120) % 5
    ask = AskModels.from_dict(fit_ask(Rows(X, y.astype(int), y.astype(int), fold, ["a"] * 120)))
    assert ask.pick(None) is ask.full and ask.pick(4) is ask.folds[4]
    with pytest.raises(ValueError, match="5 fold models, not fold 5"):
        ask.pick(5)


def test_ask_rows_come_only_from_the_model_s_training_files(tmp_path) -> None:
    # an evaluation-only file (here a copy's name) is refused before anything is read: no row of it reaches a fit
    folder = tmp_path / "rewrite-su2019-zh"
    folder.mkdir()
    (folder / "dev.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="is not a training file of the model"):
        file_rows(folder / "dev.jsonl")
