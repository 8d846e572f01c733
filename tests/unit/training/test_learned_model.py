"""The trained resolver's data and model work (issue 26, docs/LEARNED_MODEL.md): synthetic Chinese ellipsis turns,
the ellipsis-shape and semantic features, the boosted trees and the MLP, the embedding cache.

Hand-made turns and vectors only: nothing here reads ../shared/data or loads the embedder."""

from __future__ import annotations

import numpy as np
import pytest
from research.learned.data import Turn, fold_of, turn_of
from research.learned.embcache import EmbeddingCache
from research.learned.fit import fit_gbdt, fit_logistic, fit_mlp
from research.learned.labels import needed_term, needs_rewrite
from research.learned.semantic import (
    SEM_CAND_NAMES,
    SEM_TURN_NAMES,
    embedding_texts,
    feature_names,
    featurize_with,
    semantic,
)
from research.learned.synth import (
    SUFFIX,
    answer_ellipsis_turn,
    base_set,
    ellipsis_question,
    ellipsis_set,
    ellipsis_turn,
)

from convsearch.eval.data import parse_record
from convsearch.learned.alt_models import MLP, Trees, load_model
from convsearch.learned.features import TURN_NAMES, IdfTable, featurize, view
from convsearch.types import Message


def _turn(rid: str, history: list[str], question: str, rewrite: str | None = None, lang: str = "zh") -> Turn:
    roles = ["user" if i % 2 == 0 else "assistant" for i in range(len(history))]
    obj = {"id": rid, "dataset": "crosswoz-zh", "lang": lang, "history": history, "history_roles": roles,
           "question": question, "rewrite": rewrite or question}
    return turn_of(parse_record(obj), "crosswoz-zh", source="val")


# --- synthetic ellipsis ------------------------------------------------------------------------------------------
def test_a_repeated_object_is_left_out_and_the_original_is_the_rewrite() -> None:
    t = _turn("crosswoz_val_7_2", ["附近有什么好吃的点心？", "推荐稻香村的点心。"], "我也想吃点心")
    s = ellipsis_turn(t)
    assert s is not None
    assert (s.question, s.rewrite) == ("我也想吃", "我也想吃点心")
    assert needs_rewrite(s.question, s.rewrite)  # the gate label: rewrite
    assert needed_term("点心", s.question, s.rewrite)  # the word left out is a needed candidate
    assert s.dialog == t.dialog and fold_of(s.dialog) == fold_of(t.dialog)  # same fold as its source
    assert s.dataset == "crosswoz-zh" + SUFFIX and base_set(s.dataset) == "crosswoz-zh"
    assert s.history == t.history


def test_a_whole_name_goes_with_its_branch_and_its_de() -> None:
    h = [Message("user", "推荐一家餐馆"), Message("assistant", "推荐您去庆丰包子铺(月坛店)。")]
    got = ellipsis_question(h, "好的，庆丰包子铺(月坛店)的周边有哪些酒店呢？")
    assert got == ("好的，周边有哪些酒店呢？", "庆丰包子铺(月坛店)")


def test_no_synthetic_turn_from_a_turn_already_needing_a_rewrite_or_with_nothing_repeated() -> None:
    needs = _turn("crosswoz_val_8_2", ["推荐稻香村。", "好的"], "这家的地址？", "稻香村的地址？")
    assert ellipsis_turn(needs) is None
    assert ellipsis_turn(_turn("crosswoz_val_9_2", ["你好", "您好"], "帮我找个评分高的景点")) is None
    assert ellipsis_turn(_turn("x_1", ["Tell me about tea", "Tea is a drink."], "Is tea healthy?", lang="en")) is None
    assert ellipsis_question([], "我也想吃点心") is None
    # what is left must still say something: dropping 点心 from "点心" leaves nothing
    assert ellipsis_question([Message("assistant", "点心")], "点心") is None


def test_an_answer_that_repeats_the_question_becomes_a_terse_follow_up() -> None:
    t = _turn("crosswoz_val_5_4", ["这家酒店的价格是多少？", "价格是180元。"], "好的，谢谢")
    s = answer_ellipsis_turn(t)
    assert s is not None
    assert (s.question, s.rewrite) == ("是180元。", "价格是180元。")
    assert [m.role for m in s.history] == ["assistant"]  # roles swapped: the answer is the one asking now
    assert s.history[0].content == "这家酒店的价格是多少？"
    assert needed_term("价格", s.question, s.rewrite) and s.dialog == t.dialog


def test_the_synthetic_set_is_capped_and_deterministic() -> None:
    source = [_turn(f"crosswoz_val_{d}_2", ["附近有什么好吃的点心？", "推荐稻香村的点心。"], "我也想吃点心")
              for d in range(20)]
    made = ellipsis_set(source, 0.25)
    assert len(made) == 5  # 25% of 20 source turns, although 40 (a question and an answer each) qualify
    assert [s.id for s in made] == [s.id for s in ellipsis_set(source, 0.25)]
    assert len(ellipsis_set(source, 0.45, answers=False)) == 9
    assert all(s.id.endswith(("~ellipsis", "~answer")) for s in made)


# --- features ----------------------------------------------------------------------------------------------------
def _ellipsis_columns(history: list[Message], q: str) -> dict[str, float]:
    g, _ = featurize(view(history, q), IdfTable.build([q]))
    return {n: float(x) for n, x in zip(TURN_NAMES, g) if n.startswith("zh_")}


def test_the_ellipsis_shape_of_a_chinese_query() -> None:
    h = [Message("user", "我想吃点心"), Message("assistant", "推荐稻香村的点心，很好吃。")]
    e = _ellipsis_columns(h, "我也想吃")
    assert e["zh_ends_verb"] == 1.0 and e["zh_short"] == 1.0 and e["zh_lead_adverb"] == 0.0  # 我 leads, not 也
    assert e["zh_prev_nouns_out"] > 0  # 点心 / 稻香村 are left out
    assert _ellipsis_columns(h, "也想吃")["zh_lead_adverb"] == 1.0
    full = _ellipsis_columns(h, "我也想去稻香村吃点心，给我推荐一家店")
    assert full["zh_short"] == 0.0 and full["zh_prev_nouns_out"] < e["zh_prev_nouns_out"]
    en = _ellipsis_columns([Message("user", "Tell me about tea")], "Is it healthy?")
    assert set(en.values()) == {0.0}  # Chinese-only columns


def test_semantic_columns_from_given_vectors() -> None:
    v = view([Message("user", "What group disbanded?"), Message("assistant", "Zappa and the Mothers of Invention")],
             "When did they disband?")
    texts = embedding_texts(v)
    assert texts[0] == "When did they disband?" and texts[1] == "What group disbanded?"
    assert len(texts) == 2 + len(v.candidates) >= 3
    n = len(texts)
    emb = np.zeros((n, n))
    emb[np.arange(n), np.arange(n)] = 1.0  # orthonormal: every cosine 0 ...
    emb[2] = (emb[0] + emb[2]) / np.sqrt(2)  # ... but the first candidate leans to the query
    turn, rows = semantic(v, emb)
    assert turn.shape == (len(SEM_TURN_NAMES),) and rows.shape == (len(v.candidates), len(SEM_CAND_NAMES))
    assert turn[0] == pytest.approx(0.0) and turn[1] == pytest.approx(1 / np.sqrt(2))  # q·prev, best cand·q
    assert rows[0, 0] == pytest.approx(1 / np.sqrt(2)) and rows[0, 4] == 1.0  # the first candidate ranks first
    g, c = featurize_with(v, IdfTable.build(texts), emb)
    names_g, names_c = feature_names(semantic=True)
    assert g.shape == (len(names_g),) and c.shape == (len(v.candidates), len(names_c))
    lex_g, lex_c = featurize(v, IdfTable.build(texts))
    np.testing.assert_array_equal(g[: len(lex_g)], lex_g)  # the lexical part is the same with or without
    assert featurize_with(v, IdfTable.build(texts), None)[1].tolist() == lex_c.tolist()
    # every column where its name says: the semantic ones, a candidate's own lexical ones, the turn's at the end
    for j, name in enumerate(SEM_CAND_NAMES):
        np.testing.assert_array_equal(c[:, names_c.index(name)], rows[:, j])
    lex_names = list(feature_names()[1])
    np.testing.assert_array_equal(c[:, names_c.index("c_idf_max")], lex_c[:, lex_names.index("c_idf_max")])
    for name in ("lang_zh", "q_idf_mean", "s_q_prev"):
        assert (c[:, names_c.index(name)] == g[names_g.index(name)]).all()
    assert feature_names(False) == (TURN_NAMES, feature_names(False)[1]) and len(lex_c[0]) == len(feature_names()[1])


# --- models ------------------------------------------------------------------------------------------------------
def _xor(n: int = 400, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)


def test_trees_learn_an_interaction_a_linear_model_cannot() -> None:
    X, y = _xor()
    trees = fit_gbdt(X, y, trees=60, depth=3)
    assert np.mean((trees.proba(X) >= 0.5) == y) > 0.95
    assert np.mean((fit_logistic(X, y).proba(X) >= 0.5) == y) < 0.7
    again = load_model(trees.to_dict())
    assert isinstance(again, Trees)
    np.testing.assert_allclose(again.proba(X), trees.proba(X))
    np.testing.assert_array_equal(fit_gbdt(X, y, trees=60, depth=3).proba(X), trees.proba(X))  # deterministic


def test_the_mlp_learns_an_interaction_and_is_seeded() -> None:
    X, y = _xor()
    m = fit_mlp(X, y, epochs=150, hidden=16)
    assert np.mean((m.proba(X) >= 0.5) == y) > 0.9
    again = load_model(m.to_dict())
    assert isinstance(again, MLP)
    np.testing.assert_allclose(again.proba(X), m.proba(X))
    np.testing.assert_array_equal(fit_mlp(X, y, epochs=150, hidden=16).proba(X), m.proba(X))
    with pytest.raises(ValueError):
        load_model({"kind": "forest"})


def test_row_weights_move_the_trees_prior() -> None:
    X = np.zeros((100, 1))
    y = np.array([1] * 20 + [0] * 80)
    plain = fit_gbdt(X, y, trees=5).proba(X[:1])[0]
    weighted = fit_gbdt(X, y, trees=5, weight=np.where(y == 1, 4.0, 1.0)).proba(X[:1])[0]
    assert plain == pytest.approx(0.2, abs=0.01) and weighted == pytest.approx(0.5, abs=0.01)


# --- the embedding cache -----------------------------------------------------------------------------------------
def test_the_embedding_cache_round_trips_on_disk(tmp_path) -> None:
    c = EmbeddingCache(tmp_path / "emb")
    assert c.missing(["a", "b", "a"]) == ["a", "b"]
    c._add(["a", "b"], np.eye(2, 384, dtype=np.float32))  # what fill() stores after a model call
    again = EmbeddingCache(tmp_path / "emb")
    assert again.missing(["a", "b", "c"]) == ["c"]
    np.testing.assert_array_equal(again.get(["b", "a"]), np.eye(2, 384, dtype=np.float32)[::-1])


def test_trees_of_unequal_depth_walk_together() -> None:
    """The packed walk (all trees a level at a time) reaches each row's leaf, whatever the trees' depths."""
    i = lambda *a: np.array(a, dtype=np.int64)  # noqa: E731
    f = lambda *a: np.array(a, dtype=np.float64)  # noqa: E731
    deep = (i(0, -1, 1, -1, -1), f(0.0, 0, 0.0, 0, 0), i(1, -1, 3, -1, -1), i(2, -1, 4, -1, -1),
            f(0, -1.0, 0, 2.0, 3.0))  # x0 <= 0 → -1; else x1 <= 0 → 2, else 3
    stump = (i(-1), f(0.0), i(-1), i(-1), f(0.5))  # a single leaf
    trees = Trees(("x0", "x1"), 0.25, (deep, stump))
    X = np.array([[-1.0, 9.0], [1.0, -1.0], [1.0, 1.0]])
    np.testing.assert_allclose(trees.decision(X), [0.25 - 1 + 0.5, 0.25 + 2 + 0.5, 0.25 + 3 + 0.5])
    assert Trees(("x0",), 0.1, ()).decision(X).tolist() == [0.1, 0.1, 0.1]
