"""Rewrite and retrieval metrics as pure functions over plain data.

Rewrite quality
    corpus_bleu            sacreBLEU corpus BLEU-4 (0-100), tokenize "zh" for Chinese, "13a" otherwise
    restoration_prf        restoration P/R/F1 on n-grams (Pan et al., EMNLP 2019, "Improving Open-Domain
                           Dialogue Systems via Multi-Turn Incomplete Utterance Restoration"), micro-averaged
    exact_match            after normalize + lowercase + stripping trailing punctuation/whitespace
    gate_scores            did we rewrite exactly when the human did (accuracy/precision/recall/F1)
    faithfulness           share of changed rewrites whose added content words all come from the context
    latency_stats          mean and nearest-rank p99 in milliseconds
Retrieval (ranx)
    retrieval_scores       recall@10, MRR@10, nDCG@3 from ranked id lists and qrels

Undefined ratios (nothing predicted, nothing gold) are 0.0 (sklearn's ``zero_division=0``), except
``faithfulness`` which is ``None`` when nothing changed, because "no rewrites" is not "all unfaithful".

Example::

    >>> restoration_prf(["when did zappa disband"], ["when did they disband"],
    ...                 ["when did zappa and the mothers disband"], n=1).recall
    0.25
"""

from __future__ import annotations

import importlib
import math
import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import ConfigError
from ..text import normalize, words

Tokens = Sequence[str]
RETRIEVAL_METRICS = ("recall@10", "mrr@10", "ndcg@3")


def _require(module: str) -> Any:
    """Import an optional eval dependency, or say which install provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"{module} is needed for evaluation: pip install 'convsearch[eval]'") from exc


# --- n-gram restoration ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PRF:
    """Micro-averaged precision/recall/F1 and the counts they came from."""

    precision: float
    recall: float
    f1: float
    matched: int
    predicted: int
    gold: int

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def prf(matched: int, predicted: int, gold: int) -> PRF:
    """Precision = matched/predicted, recall = matched/gold, F1 their harmonic mean (0 when undefined)."""
    p = matched / predicted if predicted else 0.0
    r = matched / gold if gold else 0.0
    f = 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0
    return PRF(p, r, f, matched, predicted, gold)


def ngrams(tokens: Tokens, n: int) -> Counter[tuple[str, ...]]:
    """Multiset of the n-grams of ``tokens``."""
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def restoration_counts(pred: Tokens, question: Tokens, gold: Tokens, n: int) -> tuple[int, int, int]:
    """(matched, predicted, gold) counts of the n-grams that prediction and gold ADD to the question.

    Added n-grams are the multiset difference ``ngrams(x) - ngrams(question)``; matched is the size of
    the multiset intersection of the two added sets.
    """
    q = ngrams(question, n)
    added_pred = ngrams(pred, n) - q
    added_gold = ngrams(gold, n) - q
    matched = sum((added_pred & added_gold).values())
    return matched, sum(added_pred.values()), sum(added_gold.values())


def restoration_prf_tokens(preds: Iterable[Tokens], questions: Iterable[Tokens], golds: Iterable[Tokens], *,
                           n: int = 1) -> PRF:
    """``restoration_prf`` over already tokenized texts."""
    m = p = g = 0
    for pred, question, gold in zip(preds, questions, golds, strict=True):
        dm, dp, dg = restoration_counts(pred, question, gold, n)
        m, p, g = m + dm, p + dp, g + dg
    return prf(m, p, g)


def restoration_prf(preds: Sequence[str], questions: Sequence[str], golds: Sequence[str], *, n: int = 1,
                    tokenize: Callable[[str], list[str]] = words) -> PRF:
    """Corpus restoration P/R/F1 for n-grams (n=1 unigrams, n=2 bigrams), micro-averaged over turns.

    Tokens come from ``convsearch.text.words`` (jieba words for Chinese, lowercased ``\\w+`` for Latin).
    Unlike ContextualSP's variant (n-grams touching a restored token, set semantics, skipping turns
    whose gold adds nothing), every turn counts, so rewriting a complete question costs precision.
    """
    return restoration_prf_tokens(map(tokenize, preds), map(tokenize, questions), map(tokenize, golds), n=n)


# --- BLEU -----------------------------------------------------------------------------------------
def bleu_tokenizer(lang: str) -> str:
    return "zh" if lang.lower().startswith("zh") else "13a"


def corpus_bleu(hyps: Sequence[str], refs: Sequence[str], *, lang: str = "en") -> float:
    """sacreBLEU corpus BLEU-4 (0-100) against one reference per hypothesis."""
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    if not hyps:
        return 0.0
    sacrebleu = _require("sacrebleu")
    return float(sacrebleu.corpus_bleu(list(hyps), [list(refs)], tokenize=bleu_tokenizer(lang)).score)


# --- exact match and the gate ----------------------------------------------------------------------
def match_key(text: str) -> str:
    """normalize + lowercase, with trailing punctuation and whitespace removed ("Hi there ?" → "hi there")."""
    s = normalize(text).lower()
    end = len(s)
    while end and (s[end - 1].isspace() or unicodedata.category(s[end - 1]).startswith("P")):
        end -= 1
    return s[:end]


def exact_match(preds: Sequence[str], golds: Sequence[str]) -> float:
    """Share of predictions equal to the gold after ``match_key``."""
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predictions but {len(golds)} references")
    if not preds:
        return 0.0
    return sum(match_key(p) == match_key(g) for p, g in zip(preds, golds)) / len(preds)


@dataclass(frozen=True, slots=True)
class GateScores:
    """Rewrite-or-not decisions: positive = "rewrote" (prediction differs from the question)."""

    accuracy: float
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    tn: int

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def gate_from_flags(predicted: Iterable[bool], gold: Iterable[bool]) -> GateScores:
    """Gate scores from per-turn booleans (did the system rewrite, did the human rewrite)."""
    tp = fp = fn = tn = 0
    for p, g in zip(predicted, gold, strict=True):
        if p and g:
            tp += 1
        elif p:
            fp += 1
        elif g:
            fn += 1
        else:
            tn += 1
    n = tp + fp + fn + tn
    scores = prf(tp, tp + fp, tp + fn)
    return GateScores((tp + tn) / n if n else 0.0, scores.precision, scores.recall, scores.f1, tp, fp, fn, tn)


def gate_scores(preds: Sequence[str], questions: Sequence[str], golds: Sequence[str]) -> GateScores:
    """Predicted "rewrote" iff match_key(pred) != match_key(question); gold likewise for the human rewrite."""
    qk = [match_key(q) for q in questions]
    return gate_from_flags((match_key(p) != q for p, q in zip(preds, qk, strict=True)),
                           (match_key(g) != q for g, q in zip(golds, qk, strict=True)))


# --- faithfulness ----------------------------------------------------------------------------------
# One definition for the metric and for the rewriters' guard: convsearch.resolve.guard.
from ..resolve.guard import added_words as added_content_words  # noqa: E402
from ..resolve.guard import is_faithful  # noqa: E402


def faithfulness(preds: Sequence[str], questions: Sequence[str], contexts: Sequence[str]) -> float | None:
    """Share of CHANGED rewrites (match_key differs from the question) that are faithful; None if none changed."""
    changed = faithful = 0
    for pred, question, context in zip(preds, questions, contexts, strict=True):
        if match_key(pred) == match_key(question):
            continue
        changed += 1
        faithful += is_faithful(pred, question, context)
    return faithful / changed if changed else None


# --- latency ---------------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): the smallest value with at least q% of values at or below it."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return float(ordered[rank - 1])


def latency_stats(ms: Sequence[float]) -> dict[str, float | None]:
    """{"mean_ms", "p99_ms"} of per-turn latencies in milliseconds (None when there are none)."""
    if not ms:
        return {"mean_ms": None, "p99_ms": None}
    return {"mean_ms": sum(ms) / len(ms), "p99_ms": percentile(ms, 99)}


# --- retrieval -------------------------------------------------------------------------------------
def retrieval_scores(qrels: Mapping[str, Mapping[str, int]], rankings: Mapping[str, Sequence[str]],
                     metrics: Sequence[str] = RETRIEVAL_METRICS) -> dict[str, float]:
    """Mean ranx metrics over the queries in ``qrels``; ``rankings`` maps query id → doc ids, best first.

    Scores given to ranx are rank-derived (n, n-1, …), so ranx's ordering equals ours even when the
    engine's scores tie. A query missing from ``rankings`` counts as retrieving nothing.
    """
    # ranx stores ids as fixed-width unicode arrays and numba compiles its kernels per width; giving
    # every id the same width means one compilation per process instead of one per data file.
    doc_key: dict[str, str] = {}

    def key(doc: str) -> str:
        k = doc_key.get(doc)
        if k is None:
            k = doc_key[doc] = f"{len(doc_key):012d}"
        return k

    ranx_qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi, (qid, rels) in enumerate(qrels.items()):
        qk = f"{qi:012d}"
        ranx_qrels[qk] = {key(d): int(g) for d, g in rels.items()}
        ids = list(dict.fromkeys(rankings.get(qid, ())))  # ranx keeps one score per doc: drop repeats
        run[qk] = {key(doc): float(len(ids) - i) for i, doc in enumerate(ids)}
    if not any(run.values()):  # nothing retrieved at all (ranx cannot build such a Run)
        return {m: 0.0 for m in metrics}
    ranx = _require("ranx")  # lazy: numba JIT-compiles its kernels on first use (seconds)
    from numba.core.errors import NumbaWarning

    with warnings.catch_warnings():
        # numba's JIT warns about casts/parallel fallbacks while compiling ranx's kernels
        warnings.simplefilter("ignore", NumbaWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        out = ranx.evaluate(ranx.Qrels(ranx_qrels), ranx.Run(run), list(metrics), make_comparable=True)
    if not isinstance(out, dict):  # ranx returns a bare float for one metric
        out = {metrics[0]: out}
    return {m: float(out[m]) for m in metrics}
