"""The learned resolver at inference (issue 26): the shipped model file, composition, the ``learned`` rewriter and
out-of-fold model choice. Hand-made zh and en turns; the shipped model is read once per session."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from convsearch.errors import ConfigError
from convsearch.eval.cli import rewrite_report
from convsearch.learned import resolver as res
from convsearch.learned.compose import How, append_terms, compose_terms
from convsearch.learned.features import analyse, candidates_of
from convsearch.learned.oof import (
    FOLD_MODELS,
    dialog_of_id,
    fold_map,
    fold_of,
    read_fold_models,
    training_file,
    with_folds,
)
from convsearch.learned.resolver import MODEL_PATH, Resolver, load_models, margin
from convsearch.learned.rewriter import ALL_PLACEMENTS, NEVER, LearnedRewriter
from convsearch.resolve.gate import needs_rewrite
from convsearch.resolve.rules import RuleRewriter
from convsearch.rewrite import get_rewriter
from convsearch.types import Message as M

WATERBOYS = [M("user", "What is The Waterboys?"), M("assistant", "The Waterboys are a Scottish-Irish rock band formed "
                                                                 "in 1983 by Mike Scott.")]
ANYSEARCH = [M("user", "AnySearch 支持哪些检索方式？"), M("assistant", "支持 BM25 和向量检索。")]


@pytest.fixture(scope="module")
def shipped() -> res.Models:
    return load_models()


def _variant(tmp_path: Path, name: str, change) -> Path:
    """A copy of the shipped model file with ``change(dict)`` applied to the full and every fold model."""
    d = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    for fitted in [d["full"], *d.get("folds", [])]:
        change(fitted)
    p = tmp_path / name
    p.write_text(json.dumps(d), encoding="utf-8")
    return p


# --- the shipped file ---------------------------------------------------------------------------------------------
def test_the_shipped_file_holds_what_inference_uses_and_its_licence_and_feature_names(shipped: res.Models) -> None:
    assert shipped.meta["license"] == "CC BY-SA 4.0"
    assert "canard" in shipped.meta["attribution"] and shipped.meta["fold_count"] == 5
    # no fold models in the shipped file (they stay with the training code): at most 1.5 MB
    raw = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    assert shipped.folds == () and "folds" not in raw and "folds" not in raw["ask"] and raw["format"] == 3
    assert MODEL_PATH.stat().st_size <= 1_500_000
    assert "CC BY-SA 4.0" in (MODEL_PATH.parent / "MODEL_CARD.md").read_text(encoding="utf-8")
    # the card names every training set with its licence and gives the fold models' own out-of-fold scores per set,
    # where the fold models are and the command that rebuilds both
    card = (MODEL_PATH.parent / "MODEL_CARD.md").read_text(encoding="utf-8")
    own = card.split("### The model's own", 1)[1].split("### ", 1)[0]
    for name in shipped.meta["train_files"]:
        assert f"**{name}**" in card and shipped.meta["attribution"][name] in card and f"| {name} |" in own
    assert "research/learned/folds.json.gz" in card and "make train (python -m research.learned.export)" in card
    for name in shipped.full.gate.names + shipped.full.term.names:
        assert name in card
    # each fold model (the checkout's fold-models file) has its own IDF table, pruned (no word of one text only)
    folded = with_folds(shipped)
    assert len(folded.folds) == 5 and folded.full is shipped.full
    tables = [f.idf for f in (shipped.full, *folded.folds)]
    assert len({t.n_docs for t in tables}) == 6
    assert all(min(t.df.values()) >= shipped.meta["min_df"] >= 2 for t in tables)
    assert shipped.full.gate.names == tuple(shipped.full.gate.names) and len(shipped.full.gate_cols) > 30


def test_the_shipped_file_holds_what_train_fits(shipped: res.Models) -> None:
    from convsearch.learned.alt_models import Trees
    from convsearch.learned.features import CANDIDATE_NAMES, TURN_NAMES
    from convsearch.learned.model import Logistic

    assert (shipped.meta["gate_model"], shipped.meta["term_model"]) == ("gbdt", "logistic")
    for f in (shipped.full, *with_folds(shipped).folds):
        assert isinstance(f.gate, Trees) and isinstance(f.term, Logistic)
        assert f.gate.names == tuple(TURN_NAMES) and f.term.names == tuple(CANDIDATE_NAMES)  # today's feature lists
    turns = shipped.meta["turns"]
    synth = turns["crosswoz-zh+ellipsis"]
    assert 0 < synth <= 0.4 * turns["crosswoz-zh"] + 1  # the synthetic Chinese ellipsis turns, under the README's half


def test_a_model_file_is_read_once_per_path(tmp_path: Path) -> None:
    p = tmp_path / "copy.json"
    p.write_text(MODEL_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    before = res.LOADS[0]
    a, b = Resolver(p), Resolver(str(p))
    q = "What did they do in 1990?"
    assert a.resolve(WATERBOYS, q).gate == b.resolve(WATERBOYS, q).gate
    a.resolve(ANYSEARCH, "价格呢？")
    assert res.LOADS[0] == before + 1
    assert load_models(p) is a.models is b.models


def test_a_model_naming_a_feature_this_code_lacks_is_refused(tmp_path: Path) -> None:
    def rename(f: dict) -> None:
        f["gate"]["names"][0] = "no_such_feature"

    with pytest.raises(ValueError, match="no_such_feature"):
        load_models(_variant(tmp_path, "bad.json", rename))


# --- the resolver -------------------------------------------------------------------------------------------------
def test_an_english_pronoun_is_replaced_by_the_selected_name() -> None:
    r = Resolver().resolve(WATERBOYS, "What did they do in 1990?")
    assert r.needed and r.how is How.SUBSTITUTION
    top = r.selected[0]
    assert top in r.rewrite and " they " not in f" {r.rewrite} "
    assert r.rewrite.startswith("What did") and r.rewrite.endswith("do in 1990?")
    assert [c.prob for c in r.candidates] == sorted((c.prob for c in r.candidates), reverse=True)
    assert 0.0 <= r.confidence <= 1.0


def test_a_chinese_pronoun_is_replaced_by_the_selected_name() -> None:
    r = Resolver().resolve(ANYSEARCH, "它支持私有化部署吗？")
    assert r.needed and r.how is How.SUBSTITUTION and r.selected[0] == "AnySearch"
    assert r.rewrite.startswith("AnySearch") and "它" not in r.rewrite


def _push(model: dict, z: float) -> None:
    """Move a stored model's decision value to about ``z`` on every row, whatever its kind: the logistic's bias, the
    boosted trees' base score (the trees add a few units at most)."""
    model["bias" if model["kind"] == "logistic" else "base"] = z


def test_nothing_changes_when_the_gate_probability_is_low(tmp_path: Path) -> None:
    def shut(f: dict) -> None:
        _push(f["gate"], -60.0)

    p = _variant(tmp_path, "shut.json", shut)
    r = Resolver(p).resolve(WATERBOYS, "What did they do in 1990?")
    assert r.gate < 1e-6 and not r.needed and r.how is How.UNCHANGED and r.rewrite == "What did they do in 1990?"
    assert r.confidence > 0.99  # far below the threshold: sure it is standalone
    assert r.candidates  # still scored, for a caller that wants them
    done = LearnedRewriter(p, standalone_below=0.5).rewrite(WATERBOYS, "What did they do in 1990?")
    assert not done.changed and done.method == "learned" and "standalone" in done.reason


def test_nothing_changes_when_no_candidate_is_probable_enough(tmp_path: Path) -> None:
    def picky(f: dict) -> None:
        _push(f["term"], -60.0)

    r = Resolver(_variant(tmp_path, "picky.json", picky)).resolve(WATERBOYS, "What did they do in 1990?")
    assert r.needed and not r.selected and r.how is How.UNCHANGED and not r.changed


def test_margin_and_confidence_bounds() -> None:
    assert margin(0.5, 0.5) == 0.0 and margin(1.0, 0.5) == 1.0 and margin(0.0, 0.25) == 1.0
    assert margin(0.625, 0.25) == pytest.approx(0.5)
    r = Resolver().resolve(WATERBOYS, "What did they do in 1990?")
    open_ = [c for c in r.candidates if not c.in_query]
    assert r.confidence <= margin(r.gate, r.gate_threshold) + 1e-12
    assert r.confidence <= margin(open_[0].prob, r.term_threshold) + 1e-12


# --- composition --------------------------------------------------------------------------------------------------
def test_append_keeps_the_final_mark_and_joins_by_script() -> None:
    assert append_terms("What are the symptoms?", ["anemia"]) == "What are the symptoms anemia?"
    assert append_terms("价格呢？", ["AnySearch", "企业版"]) == "价格呢 AnySearch 企业版？"
    assert append_terms("价格呢？", ["企业版"]) == "价格呢企业版？"  # Chinese after Chinese: no space


def test_compose_inserts_where_the_language_puts_an_owner() -> None:
    a, _ = analyse(ANYSEARCH, "价格呢？")
    cand = next(c for c in candidates_of(a) if c.text == "AnySearch")
    out, how, why = compose_terms(a, "价格呢？", [cand])
    assert out == "AnySearch 的价格" and how is How.INSERTION and "AnySearch" in why


def test_compose_swaps_a_fragment_into_the_previous_frame() -> None:
    hist = [M("user", "深圳最近三天适合露营吗？"), M("assistant", "深圳最近三天有雨。")]
    a, _ = analyse(hist, "那番禺呢？")
    cand = next(c for c in candidates_of(a) if "露营" in c.text)
    out, how, _ = compose_terms(a, "那番禺呢？", [cand])
    assert how is How.SLOT_SWAP and out.startswith("番禺") and "露营" in out and "深圳" not in out


def test_compose_appends_a_second_term_only_when_it_adds_a_word() -> None:
    a, _ = analyse(WATERBOYS, "What did they do in 1990?")
    cs = {c.text: c for c in candidates_of(a)}
    out, _, _ = compose_terms(a, "What did they do in 1990?", [cs["The Waterboys"], cs["Waterboys"]])
    assert out.count("Waterboys") == 1


# --- the rewriter -------------------------------------------------------------------------------------------------
def test_the_registry_and_the_rewriter_contract() -> None:
    rw = get_rewriter("learned")
    assert isinstance(rw, LearnedRewriter) and rw.name == "learned" and rw.cost == "compute"
    out = rw.rewrite(WATERBOYS, "What did they do in 1990?")
    assert out.changed and "Waterboys" in out.rewritten and out.method == "learned" and "[full model]" in out.reason
    assert not rw.rewrite([], "How tall is Mount Everest?").changed  # a first question stands alone


def test_chinese_keeps_the_rules_gate(tmp_path: Path) -> None:
    def eager(f: dict) -> None:
        _push(f["gate"], 60.0)  # the learned gate says rewrite on every turn

    rw = LearnedRewriter(_variant(tmp_path, "eager.json", eager))
    q = "北京今天天气怎么样？"  # standalone to the rules
    done = rw.rewrite(ANYSEARCH, q)
    assert not done.changed and "rules' gate: standalone" in done.reason
    en = rw.rewrite(WATERBOYS, "How tall is Mount Everest?")  # in English the learned gate decides
    assert "learned gate 1.00" in en.reason


# --- precision first: how the learned gate and composition combine with the rules --------------------------------
TELECARE = [M("user", "I want a telecare device for my grandmother."),
            M("assistant", "A telecare device with a fall sensor and an emergency button suits her; the Tunstall "
                           "Lifeline case is easy to wear.")]


def test_a_turn_the_rules_call_standalone_and_the_learned_gate_is_only_moderately_sure_of_stays_unchanged() -> None:
    q = "Who was Mike Scott?"  # a complete question about a named subject; the learned gate leans to "rewrite"
    assert not needs_rewrite(WATERBOYS, q).needed
    eager = LearnedRewriter(rewrite_at=0.5, standalone_below=0.5, placements=ALL_PLACEMENTS)
    p = eager.resolve(WATERBOYS, q, needed=True).gate
    assert 0.5 <= p < 0.9  # moderately sure
    # the merged behaviour: the learned gate overrides the rules. (With the gbdt model the selector's surest term
    # here is "Scottish-Irish", p 0.40 over "The Waterboys" 0.23: a wrong pick, with no fluent place and under
    # append_min, so the composition itself leaves the question; the override is what this test is about.)
    over = eager.rewrite(WATERBOYS, q)
    assert "rules' gate: standalone" not in over.reason and "learned gate" in over.reason
    for rw in (LearnedRewriter(), LearnedRewriter(rewrite_at=0.9, placements=ALL_PLACEMENTS)):
        out = rw.rewrite(WATERBOYS, q)
        assert not out.changed and out.rewritten == q and "rules' gate: standalone" in out.reason
    sure = LearnedRewriter(rewrite_at=p - 0.01, placements=ALL_PLACEMENTS)  # just under it: the override happens
    assert "rules' gate: standalone" not in sure.rewrite(WATERBOYS, q).reason
    assert LearnedRewriter(rewrite_at=p - 0.01, placements=ALL_PLACEMENTS, append_min=0.4).rewrite(WATERBOYS, q).changed


def test_a_named_complete_question_keeps_the_rules_verdict_and_a_pronoun_still_resolves() -> None:
    rw = LearnedRewriter(rewrite_at=0.5, placements=ALL_PLACEMENTS, keep_named=True)
    out = rw.rewrite(WATERBOYS, "Who was Mike Scott?")
    assert not out.changed and "names its own subject" in out.reason
    assert "Waterboys" in rw.rewrite(WATERBOYS, "What did they do in 1990?").rewritten


def test_a_learned_placement_outside_the_allowed_ones_leaves_the_question() -> None:
    q = "Who was Mike Scott?"  # the learned composition appends a term (no pronoun to substitute)
    rw = LearnedRewriter(rewrite_at=0.5, placements=frozenset({How.SUBSTITUTION}))
    how = rw.resolve(WATERBOYS, q, needed=True).how
    assert how in (How.INSERTION, How.APPENDED)
    out = rw.rewrite(WATERBOYS, q)
    assert not out.changed and f"placement '{how.value}' not used" in out.reason


def test_a_pronoun_the_rules_decline_is_filled_only_when_asked() -> None:
    q = "What if she cannot press it?"  # the rules' gate says rewrite, their steps place nothing
    assert needs_rewrite(TELECARE, q).needed and not RuleRewriter().rewrite(TELECARE, q).changed
    fills = LearnedRewriter(fill_rule_gaps=True, placements=ALL_PLACEMENTS).rewrite(TELECARE, q)
    assert fills.changed and "it" not in fills.rewritten.split()
    keeps = LearnedRewriter(fill_rule_gaps=False).rewrite(TELECARE, q)
    assert not keeps.changed and "the rules placed nothing" in keeps.reason


def test_the_learned_gate_overrides_a_rule_rewrite_only_below_standalone_below(tmp_path: Path) -> None:
    def shut(f: dict) -> None:
        _push(f["gate"], -60.0)  # the learned gate says standalone on every turn, surely

    p = _variant(tmp_path, "shut2.json", shut)
    q = "What did they do in 1990?"  # the rules rewrite it
    assert LearnedRewriter(p, standalone_below=0.5).rewrite(WATERBOYS, q).rewritten == q
    kept = LearnedRewriter(p, standalone_below=0.0).rewrite(WATERBOYS, q)  # never: the rules' rewrite stands
    assert kept.changed and "Waterboys" in kept.rewritten and "rules' rewrite" in kept.reason


def test_by_default_the_learned_rewriter_answers_as_the_rules_do() -> None:
    # the shipped combination (docs/LEARNED.md, "Precision first"): every learned override was vetoed
    learned, rules = LearnedRewriter(), RuleRewriter()
    turns = [(WATERBOYS, q) for q in ("What did they do in 1990?", "Who was Mike Scott?", "What about the price?",
                                      "How tall is Mount Everest?", "When was the band formed?")]
    turns += [(TELECARE, "What if she cannot press it?"), (TELECARE, "What about the price?"),
              (ANYSEARCH, "它支持私有化部署吗？"), (ANYSEARCH, "价格呢？"), (ANYSEARCH, "北京今天天气怎么样？")]
    for history, q in turns:
        assert learned.rewrite(history, q).rewritten == rules.rewrite(history, q).rewritten, q
    eager = LearnedRewriter(rewrite_at=0.5, standalone_below=0.5, rules_append_min=0.5, placements=ALL_PLACEMENTS,
                            fill_rule_gaps=True)  # the merged behaviour differs from the rules on these turns
    assert any(eager.rewrite(h, q).rewritten != rules.rewrite(h, q).rewritten for h, q in turns)


def test_the_append_threshold_for_rule_rewrites_is_per_language() -> None:
    rw = LearnedRewriter(rules_append_min={"en": 0.9})
    assert rw._rules_append_min("en") == 0.9 and rw._rules_append_min("zh") == NEVER
    assert LearnedRewriter(rules_append_min=0.3)._rules_append_min("zh") == 0.3


def test_the_guard_still_applies() -> None:
    rw = LearnedRewriter()
    out = rw._checked("What about it?", "What about Zorblax?", WATERBOYS, None, "test")
    assert not out.changed and out.fell_back and "unfaithful" in out.reason


# --- out of fold --------------------------------------------------------------------------------------------------
def _ids_in_two_folds() -> tuple[str, str]:
    """Two CANARD-like dialog ids whose dialogs fall in different folds."""
    ids = [f"C_{i:04d}_0" for i in range(50)]
    fold = {i: fold_of(f"canard/dev/{i}") for i in ids}
    a = ids[0]
    return a, next(i for i in ids if fold[i] != fold[a])


def _write_canard(root: Path, dialogs: list[str]) -> Path:
    p = root / "conv-rewrite" / "canard" / "dev.jsonl"
    p.parent.mkdir(parents=True)
    rows = []
    for d in dialogs:
        for k, q in ((1, "What is The Waterboys?"), (2, "What did they do in 1990?")):
            hist = [] if k == 1 else [h.content for h in WATERBOYS]
            rows.append({"id": f"{d}_q{k}", "lang": "en", "history": hist,
                         "history_roles": ["user", "assistant"][:len(hist)], "question": q,
                         "rewrite": q if k == 1 else f"What did The Waterboys do in 1990? ({d})"})
    # the same turn text in both dialogs would collide; make each dialog's history its own
    for i, row in enumerate(rows):
        if row["history"]:
            row["history"] = [row["history"][0], row["history"][1] + f" Note {i}."]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


def test_each_record_of_a_training_file_is_scored_by_the_model_that_never_saw_its_dialog(tmp_path: Path,
                                                                                          shipped: res.Models) -> None:
    a, b = _ids_in_two_folds()
    path = _write_canard(tmp_path, [a, b])
    assert training_file(path, shipped) == ("canard", "conv-rewrite/canard/dev.jsonl")
    fm = fold_map(path, shipped)
    assert fm is not None and fm.dataset == "canard"
    rw = LearnedRewriter()
    assert rw.out_of_fold(path) == "canard"
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    seen = {}
    for row in rows[1::2]:  # the follow-ups
        hist = [M(r, c) for r, c in zip(row["history_roles"], row["history"])]
        r = rw.resolve(hist, row["question"])
        assert r.fold == fold_of(f"canard/dev/{dialog_of_id(row['id'])}")
        seen[row["id"]] = r
        assert f"[fold {r.fold}]" in rw.rewrite(hist, row["question"]).reason
    fa, fb = (r.fold for r in seen.values())
    assert fa != fb
    # different fold models: different numbers on the same kind of turn
    folded = Resolver()
    folded.use(with_folds(shipped))
    ga = folded.resolve(WATERBOYS, "What did they do in 1990?", fold=fa).gate
    gb = folded.resolve(WATERBOYS, "What did they do in 1990?", fold=fb).gate
    assert ga != gb
    with pytest.raises(ValueError, match="not fold 1"):  # the plain resolver has no fold models: never the full one
        Resolver().resolve(WATERBOYS, "What did they do in 1990?", fold=1)
    # a turn not in the file: the full model
    assert rw.resolve(ANYSEARCH, "价格呢？").fold is None


def test_a_turn_two_folds_share_gets_a_model_that_saw_neither(tmp_path: Path, shipped: res.Models) -> None:
    a, b = _ids_in_two_folds()
    path = _write_canard(tmp_path, [a, b])
    fm = fold_map(path, shipped)
    assert fm is not None
    first = fm.fold([], "What is The Waterboys?")  # both dialogs open with it
    assert first is not None and first not in {fold_of(f"canard/dev/{a}"), fold_of(f"canard/dev/{b}")}


def test_a_file_outside_the_training_pool_uses_the_full_model(tmp_path: Path) -> None:
    p = tmp_path / "mine.jsonl"
    p.write_text(json.dumps({"id": "x_1", "history": [], "history_roles": [], "question": "hi",
                             "rewrite": "hi"}) + "\n", encoding="utf-8")
    rw = LearnedRewriter()
    assert rw.out_of_fold(p, tmp_path / "no-folds.json.gz") is None  # no fold models needed, none read
    assert rw.resolver.models is load_models()


def test_the_fold_models_are_the_checkouts_and_belong_to_the_shipped_file(shipped: res.Models) -> None:
    d = read_fold_models(FOLD_MODELS)
    assert d["model_sha256"] == shipped.sha256 and len(d["folds"]) == len(d["ask_folds"]) == 5
    assert FOLD_MODELS.relative_to(MODEL_PATH.parents[3]).as_posix() == "research/learned/folds.json.gz"


def test_a_training_file_without_its_fold_models_is_refused_in_one_line(tmp_path: Path, shipped: res.Models) -> None:
    path = _write_canard(tmp_path, list(_ids_in_two_folds()))
    with pytest.raises(ConfigError, match="needs the fold models") as e:
        LearnedRewriter().out_of_fold(path, tmp_path / "missing.json")
    assert "\n" not in str(e.value) and "make train" in str(e.value)
    other = read_fold_models(FOLD_MODELS) | {"model_sha256": "0" * 64}
    (tmp_path / "other.json").write_text(json.dumps(other), encoding="utf-8")
    with pytest.raises(ConfigError, match="fold models of another model file"):
        LearnedRewriter().out_of_fold(path, tmp_path / "other.json")


def test_the_eval_report_says_it_is_out_of_fold(tmp_path: Path) -> None:
    a, b = _ids_in_two_folds()
    path = _write_canard(tmp_path, [a, b])
    report = rewrite_report(path, "learned")
    assert report["out_of_fold"] == "canard" and report["rewriter"] == "learned"
    rules = rewrite_report(path, "rules")
    assert "out_of_fold" not in rules
    ds = next(iter(report["datasets"].values()))
    assert ds["systems"]["learned"]["n"] == 4 and np.isfinite(ds["systems"]["learned"]["rest_f1"])


def test_the_resolvers_chinese_gate_verdict_is_the_rules_unless_the_gate_is_sure(tmp_path: Path) -> None:
    def flat(p: float):
        def edit(f: dict) -> None:  # every turn gets gate probability p
            f["gate"].update(kind="gbdt", base=float(np.log(p / (1 - p))), trees=[])
        return edit

    lean = Resolver(_variant(tmp_path, "lean.json", flat(0.7)))
    standalone, needs = "北京今天天气怎么样？", "它支持私有化部署吗？"
    assert not needs_rewrite(ANYSEARCH, standalone).needed and needs_rewrite(ANYSEARCH, needs).needed
    assert not lean.resolve(ANYSEARCH, standalone).needed  # 0.7 is not sure: the rules' "standalone" holds
    assert lean.resolve(ANYSEARCH, needs).needed and "rules' verdict" in lean.resolve(ANYSEARCH, needs).reason
    assert lean.resolve(WATERBOYS, "How tall is Mount Everest?").needed  # English: the gate at 0.5
    sure = Resolver(_variant(tmp_path, "sure.json", flat(0.95)))
    assert sure.resolve(ANYSEARCH, standalone).needed  # sure: the gate overrides the rules' "standalone"
    no = Resolver(_variant(tmp_path, "no.json", flat(0.05)))
    assert not no.resolve(ANYSEARCH, needs).needed
