"""Every eval metric on tiny cases computed by hand (en + zh)."""

from __future__ import annotations

import math

import pytest

from convsearch.eval import metrics as m


# --- restoration -----------------------------------------------------------------------------------
def test_restoration_unigrams_en() -> None:
    # question adds nothing; pred adds {zappa}; gold adds {zappa, and, the, mothers}
    r = m.restoration_prf(["when did Zappa disband?"], ["When did they disband?"],
                          ["When did Zappa and the Mothers disband?"], n=1)
    assert (r.matched, r.predicted, r.gold) == (1, 1, 4)
    assert r.precision == 1.0
    assert r.recall == 0.25
    assert r.f1 == pytest.approx(0.4)


def test_restoration_bigrams_en() -> None:
    # pred adds (did zappa)(zappa disband); gold adds (did zappa)(zappa and)(and the)(the mothers)(mothers disband)
    r = m.restoration_prf(["when did zappa disband"], ["when did they disband"],
                          ["when did zappa and the mothers disband"], n=2)
    assert (r.matched, r.predicted, r.gold) == (1, 2, 5)
    assert r.precision == 0.5
    assert r.recall == pytest.approx(0.2)
    assert r.f1 == pytest.approx(2 * 0.5 * 0.2 / 0.7)


def test_restoration_zh_words() -> None:
    # 她/是/歌手 → 板泉/井水/是/歌手: gold adds {板泉, 井水}; pred adds {板泉}
    r = m.restoration_prf(["板泉是歌手"], ["她是歌手"], ["板泉井水是歌手"], n=1)
    assert (r.matched, r.predicted, r.gold) == (1, 1, 2)
    assert r.f1 == pytest.approx(2 * 1.0 * 0.5 / 1.5)


def test_restoration_multiset_and_micro_average() -> None:
    # turn 1: pred adds b twice, gold adds b once → (1, 2, 1); turn 2: copy → (0, 0, 1)
    r = m.restoration_prf(["b b", "x"], ["a", "x"], ["b", "x y"], n=1, tokenize=str.split)
    assert (r.matched, r.predicted, r.gold) == (1, 2, 2)
    assert (r.precision, r.recall, r.f1) == (0.5, 0.5, 0.5)


def test_restoration_copy_is_zero_and_rewriting_a_complete_question_costs_precision() -> None:
    copy = m.restoration_prf(["a b"], ["a b"], ["a b c"], n=1, tokenize=str.split)
    assert (copy.precision, copy.recall, copy.f1) == (0.0, 0.0, 0.0)
    over = m.restoration_prf(["a b c"], ["a b"], ["a b"], n=1, tokenize=str.split)
    assert (over.matched, over.predicted, over.gold) == (0, 1, 0)


# --- BLEU ------------------------------------------------------------------------------------------
def test_bleu_identical_is_100_and_disjoint_is_0() -> None:
    assert m.corpus_bleu(["the cat sat on the mat"], ["the cat sat on the mat"]) == pytest.approx(100.0)
    assert m.corpus_bleu(["dogs run"], ["the cat sat on the mat"]) == 0.0


def test_bleu_hand_computed_en() -> None:
    # p1=3/4, p2=2/3, p3=1/2, p4=0/1 → exp smoothing 1/2; BP=1 → (3/4·2/3·1/2·1/2)^(1/4)
    expected = 100 * (0.75 * (2 / 3) * 0.5 * 0.5) ** 0.25
    assert m.corpus_bleu(["a b c d"], ["a b c e"], lang="en") == pytest.approx(expected)


def test_bleu_zh_uses_character_tokenization() -> None:
    expected = 100 * (0.75 * (2 / 3) * 0.5 * 0.5) ** 0.25  # 我/喜/欢/猫 vs 我/喜/欢/狗
    assert m.corpus_bleu(["我喜欢猫"], ["我喜欢狗"], lang="zh") == pytest.approx(expected)
    assert m.corpus_bleu(["我喜欢猫"], ["我喜欢狗"], lang="en") == 0.0  # 13a: one token each
    assert m.bleu_tokenizer("zh") == "zh" and m.bleu_tokenizer("en") == "13a"


def test_bleu_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError):
        m.corpus_bleu(["a"], [])


# --- exact match and the gate ----------------------------------------------------------------------
def test_match_key_and_exact_match() -> None:
    assert m.match_key("  Hello   There ?! ") == "hello there"
    assert m.match_key("你好？") == "你好"  # NFKC: full-width ？ → ?
    assert m.exact_match(["Hello there ?", "你好？", "a b"], ["hello there", "你好", "a c"]) == pytest.approx(2 / 3)


def test_gate_scores() -> None:
    questions = ["q1", "q2", "q3", "q4"]
    golds = ["q1 x", "q2 y", "q3", "q4"]  # human rewrote 1 and 2
    preds = ["q1 x", "q2", "q3 z", "Q4?"]  # system rewrote 1 and 3; "Q4?" is the same question
    g = m.gate_scores(preds, questions, golds)
    assert (g.tp, g.fp, g.fn, g.tn) == (1, 1, 1, 1)
    assert (g.accuracy, g.precision, g.recall, g.f1) == (0.5, 0.5, 0.5, 0.5)


def test_gate_never_rewriting() -> None:
    g = m.gate_scores(["a", "b"], ["a", "b"], ["a x", "b"])
    assert (g.accuracy, g.precision, g.recall, g.f1) == (0.5, 0.0, 0.0, 0.0)


# --- faithfulness ----------------------------------------------------------------------------------
def test_added_content_words_drop_stopwords_and_punctuation() -> None:
    assert m.added_content_words("When did the Beatles disband, then?", "when did they disband") == {"beatles"}


def test_faithfulness_en() -> None:
    ctx = "Frank Zappa formed the Mothers of Invention\nwhen did they disband?"
    assert m.is_faithful("When did Frank Zappa disband?", "when did they disband?", ctx)
    assert not m.is_faithful("When did the Beatles disband?", "when did they disband?", ctx)
    assert not m.is_faithful("when did zap disband", "when did they disband", ctx)  # whole words only
    share = m.faithfulness(
        ["When did Frank Zappa disband?", "When did the Beatles disband?", "when did they disband?"],
        ["when did they disband?"] * 3, [ctx] * 3)
    assert share == 0.5  # the unchanged third one is not counted


def test_faithfulness_zh_substring_match() -> None:
    ctx = "你知道板泉井水吗\n知道\n她是歌手"
    assert m.is_faithful("板泉井水是歌手", "她是歌手", ctx)
    assert not m.is_faithful("周杰伦是歌手", "她是歌手", ctx)
    assert m.faithfulness(["板泉井水是歌手", "周杰伦是歌手"], ["她是歌手"] * 2, [ctx] * 2) == 0.5


def test_faithfulness_is_none_when_nothing_changed() -> None:
    assert m.faithfulness(["a"], ["a"], ["ctx"]) is None


# --- latency ---------------------------------------------------------------------------------------
def test_latency_stats() -> None:
    assert m.latency_stats([1.0, 2.0, 3.0, 4.0]) == {"mean_ms": 2.5, "p99_ms": 4.0}
    assert m.percentile([float(i) for i in range(1, 201)], 99) == 198.0  # nearest rank: ceil(0.99·200)
    assert m.latency_stats([]) == {"mean_ms": None, "p99_ms": None}


# --- retrieval (ranx) ------------------------------------------------------------------------------
def test_retrieval_scores_hand_computed() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d9": 1}}
    rankings = {"q1": ["d3", "d1"], "q2": ["d2", "x"], "q3": []}  # q3 finds nothing
    s = m.retrieval_scores(qrels, rankings)
    assert s["recall@10"] == pytest.approx(2 / 3)
    assert s["mrr@10"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert s["ndcg@3"] == pytest.approx((1 / math.log2(3) + 1.0 + 0.0) / 3)


def test_retrieval_scores_follow_the_given_order_and_cutoffs() -> None:
    qrels = {"q": {"d": 1}}
    ranked = [f"x{i}" for i in range(10)] + ["d"]  # relevant at rank 11: outside every cutoff
    assert m.retrieval_scores(qrels, {"q": ranked}) == {"recall@10": 0.0, "mrr@10": 0.0, "ndcg@3": 0.0}
    s = m.retrieval_scores(qrels, {})  # a query missing from the run retrieved nothing
    assert s["recall@10"] == 0.0
    assert m.retrieval_scores({}, {}) == {"recall@10": 0.0, "mrr@10": 0.0, "ndcg@3": 0.0}


def test_missing_eval_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from convsearch.errors import ConfigError

    monkeypatch.setitem(sys.modules, "sacrebleu", None)  # makes `import sacrebleu` raise ImportError
    with pytest.raises(ConfigError, match=r"pip install 'convsearch\[eval\]'"):
        m.corpus_bleu(["a"], ["a"])
