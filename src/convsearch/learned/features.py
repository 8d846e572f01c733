"""Numeric features of one turn (for the gate) and of each history candidate (for term selection), read off the
turn's ``Analysis`` and the rules' ``Decision``; the same features in Chinese and English, so one model learns from
both. Numpy only: nothing here needs sklearn or torch. Runs on every turn of the learned rewriter and of the
learned ``auto``; the training code (``research/learned/train.py``) calls the same ``view`` and ``featurize``, so both
read the same numbers (``IdfTable.build`` is the one part only training calls).

A turn is read once (``view``: the Analysis, the gate's Decision, the candidates and their words: the costly part);
``featurize(view, idf)`` then gives the vectors, with the IDF columns from an ``IdfTable`` built from training text
only (cross-validation builds one per fold, from that fold's training turns).

Turn features (``TURN_NAMES``): the language; the query's shape (length, pronoun or demonstrative, a fragment of the
previous question, a question mark, its mentions, proper or only relational, the share of its words the history
holds, its IDF); the window (turns, an answer in it, a topic and how much of it the query names, the candidates, a
focus and whether the query names it, a proper name left out near the question and its IDF); the rules' verdict,
confidence and ``DecisionKind`` (one-hot). Candidate features (``CANDIDATE_NAMES``): its kind (proper, relational,
mention class), words and IDF, its turn (user or assistant, distance back, first of the window, in the window's
first question, in the topic, how many turns repeat it), the query holding it (whole or in part), focus, in the
previous question's frame, its slot there, its rank among the candidates, a few products with the query's shape;
then the turn features, so the term model sees the turn too.

The candidates are the Analysis's (every mention of the window) followed by the session topic's mentions the window
does not name (``role`` "topic", ``turn`` -1, ``distance`` one past the oldest turn): CANARD, CAsT and iKAT
rewrites often bring the topic's name in ("What did they do?" → "What did The Waterboys do?" on the page "The
Waterboys: Late 1980s"), which no turn of the window names.

>>> from convsearch.types import Message
>>> history = [Message("user", "AnySearch 支持哪些检索方式？"), Message("assistant", "支持 BM25 和向量检索。")]
>>> v = view(history, "价格呢？")
>>> idf = IdfTable.build(m.content for m in history)
>>> g, c = featurize(v, idf)
>>> g.shape == (len(TURN_NAMES),), c.shape == (len(v.candidates), len(CANDIDATE_NAMES)), v.decision.needed
(True, True, True)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..lang import reading
from ..resolve.analysis import Analysis, Candidate
from ..resolve.analysis import analyse as analyse_turn
from ..resolve.entities import mentions
from ..resolve.gate import decide
from ..text import is_cjk, tagged
from ..types import Decision, DecisionKind, Message
from .policy import trained
from .tokens import content_words, read

KINDS: tuple[DecisionKind, ...] = tuple(DecisionKind)
_NAME_CLASSES = frozenset({"proper", "title", "nr", "nrt", "nrfg", "ns", "nt", "nz"})
_NOUN_CLASSES = frozenset({"n", "noun"})

_TURN_BASE = ("lang_zh", "q_words", "q_chars_log", "q_pronoun", "q_fragment", "q_question_mark", "q_mentions",
              "q_proper", "q_relational_only", "q_seen_share", "hist_turns", "hist_has_assistant", "topic",
              "q_topic_share", "n_cands_log", "focus_exists", "focus_in_query", "proper_out_near", "n_proper_out_log",
              "any_cand_in_query", "rules_needed", "rules_confidence") + tuple(f"kind_{k.value}" for k in KINDS)
# The ellipsis shape of a Chinese query (0 for other languages: jieba's tags read Chinese only), see ``_ellipsis``
_TURN_ELLIPSIS = ("zh_no_noun", "zh_no_verb", "zh_ends_verb", "zh_lead_adverb", "zh_short", "zh_prev_nouns_out",
                  "zh_prev_verbs_out", "zh_len_ratio", "zh_echo_share")
_TURN_IDF = ("q_idf_max", "q_idf_mean", "proper_out_near_idf")
TURN_NAMES: tuple[str, ...] = _TURN_BASE + _TURN_ELLIPSIS + _TURN_IDF

_CAND_BASE = ("c_from_topic", "c_proper", "c_relational", "c_cls_name", "c_cls_eng", "c_cls_noun", "c_words",
              "c_chars_log", "c_no_words", "c_user", "c_dist_inv", "c_dist_log", "c_dist1", "c_dist2", "c_first_turn",
              "c_in_first_question", "c_in_topic", "c_repeat", "c_in_query", "c_partial_query", "c_focus",
              "c_in_frame", "c_slot", "c_slot_place", "c_slot_time", "c_rank_inv", "c_focus_x_pronoun",
              "c_dist1_x_fragment", "c_proper_x_zh", "c_out_x_needed", "c_focus_x_needed", "c_dist1_x_needed")
_CAND_IDF = ("c_idf_max", "c_idf_mean")
CANDIDATE_NAMES: tuple[str, ...] = tuple(_CAND_BASE + _CAND_IDF) + TURN_NAMES


@dataclass(frozen=True, slots=True)
class IdfTable:
    """Inverse document frequency of content words (``learned.tokens``) over a set of texts, each distinct text one
    document: ``idf(w) = ln((N + 1) / (df(w) + 1)) + 1``, scaled by its largest value (an unseen word) to (0, 1]."""

    n_docs: int
    df: Mapping[str, int]

    @classmethod
    def build(cls, texts: Iterable[str]) -> IdfTable:
        """The table of ``texts`` (repeats counted once: a history turn is seen again on every later turn)."""
        df: Counter[str] = Counter()
        n = 0
        for text in dict.fromkeys(texts):
            n += 1
            df.update(content_words(text))
        return cls(n, dict(sorted(df.items())))

    def scaled(self, word: str) -> float:
        """idf(word) / idf(an unseen word), in (0, 1]."""
        top = math.log(self.n_docs + 1) + 1
        return (math.log((self.n_docs + 1) / (self.df.get(word, 0) + 1)) + 1) / top

    def to_dict(self) -> dict[str, Any]:
        return {"n_docs": self.n_docs, "df": dict(self.df)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> IdfTable:
        return cls(int(d["n_docs"]), {str(k): int(v) for k, v in d["df"].items()})


@dataclass(frozen=True, slots=True)
class TurnView:
    """One turn as the features read it: the Analysis, the rules' Decision, the candidates, their content words and
    the query's, and the IDF-free parts of the vectors."""

    analysis: Analysis
    decision: Decision
    candidates: tuple[Candidate, ...]
    candidate_words: tuple[tuple[str, ...], ...]
    query_words: tuple[str, ...]
    turn_base: np.ndarray
    candidate_base: np.ndarray


def analyse(history: Sequence[Message], question: str, topic: str | None = None,
            lang: str | None = None) -> tuple[Analysis, Decision]:
    """The turn's Analysis and the rules' Decision on it, built as ``gate.needs_rewrite`` builds them (language
    from the question, the asked form read), without its cache: ``decision.needed`` is the rules' verdict."""
    a = analyse_turn(history, question, topic, lang=lang)
    return a, decide(a)


def candidates_of(a: Analysis) -> tuple[Candidate, ...]:
    """The Analysis's candidates, then the topic's mentions the window does not name (see the module docstring)."""
    cands = a.candidates
    if not a.topic:
        return cands
    seen = {c.text.lower() for c in cands}
    focus = a.topic_focus.entity
    q = a.q.lower()
    extra = []
    for x in mentions(a.topic, a.lang):
        key = x.text.lower()
        if key in seen:
            continue
        seen.add(key)
        extra.append(Candidate(x.text, x.proper, x.cls, x.relational, -1, "topic", len(a.history) + 1, None, False,
                               focus is not None and x.text == focus.text, key in q))
    return cands + tuple(extra)


def _share(words: Sequence[str], text: str) -> float:
    if not words:
        return 0.0
    r = read(text)
    return sum(r.has(w) for w in words) / len(words)


_SKIP_TAGS = ("x", "y", "u", "zg", "w", "e", "o")  # punctuation, modal particles, 的/了, interjections
_LEAD_WORDS = frozenset({"也", "还", "就", "那", "那么", "那就", "然后", "所以", "但是", "可是", "不过", "而且", "都",
                         "又", "再", "才", "只", "要是", "如果"})


def _ellipsis(q: str, history: Sequence[Message]) -> list[float]:
    """The ellipsis shape of a Chinese query against the last two messages (the previous question and its answer):
    no noun / no verb in it, it ends on a verb (an object left out: 我也想吃), it opens with an adverb or conjunction
    that leans on the turn before (也, 还, 那就, 但是), it is short (≤ 8 characters), the nouns and verbs of the last
    two
    messages it leaves out (log counts), its length against the previous message's, and the share of its words the
    previous message holds (an echo)."""
    toks = [(w, t) for w, t in tagged(q) if not t.startswith(_SKIP_TAGS) and any(ch.isalnum() for ch in w)]
    nouns = [w for w, t in toks if t.startswith(("n", "eng", "r"))]
    verbs = [w for w, t in toks if t.startswith("v")]
    prev = "\n".join(m.content for m in history[-2:])
    ptoks = [(w, t) for w, t in tagged(prev) if len(w) >= 2 and all(is_cjk(ch) for ch in w)]
    qr = read(q)
    p_nouns = {w for w, t in ptoks if t.startswith("n") and not qr.has(w)}
    p_verbs = {w for w, t in ptoks if t.startswith("v") and not qr.has(w)}
    last = history[-1].content if history else ""
    qw = content_words(q)
    return [float(not nouns), float(not verbs), float(bool(toks) and toks[-1][1].startswith("v")),
            float(bool(toks) and (toks[0][0] in _LEAD_WORDS or toks[0][1] in ("c", "d"))), float(len(q) <= 8),
            math.log1p(len(p_nouns)) / 3, math.log1p(len(p_verbs)) / 3,
            min(len(q) / max(len(last), 1), 2.0) / 2, _share(qw, last) if last else 0.0]


def view(history: Sequence[Message], question: str, topic: str | None = None, lang: str | None = None) -> TurnView:
    """Read one turn (``history``: the windowed history, oldest first)."""
    a, d = analyse(history, question, topic, lang)
    cands = candidates_of(a)
    q = a.q
    ql = q.lower()
    qw = content_words(q)
    row = trained(a.lang)
    zh = row.language_feature  # a feature, not a branch: which of the two trained languages the turn is in
    pronoun = float(reading(a.lang).has_pronoun(q))
    fragment = float(a.fragment() is not None)
    ments = a.mentions
    hist_text = "\n".join(m.content for m in a.history)
    focus = a.topic_focus.entity
    cw = tuple(content_words(c.text) for c in cands)
    proper_out = [c for c in cands if c.proper and not c.in_query]
    near = [c for c in proper_out if c.distance <= 2]
    needed = float(d.needed)
    turn = [zh, min(len(qw), 12) / 12, math.log1p(len(q)) / 5, pronoun, fragment, float(q.endswith(("?", "？"))),
            min(len(ments), 4) / 4, float(any(m.proper for m in ments)),
            float(bool(ments) and all(m.relational for m in ments)), _share(qw, hist_text) if hist_text else 0.0,
            min(len(a.history), 8) / 8, float(any(m.role == "assistant" for m in a.history)), float(bool(a.topic)),
            _share(content_words(a.topic), q) if a.topic else 0.0, math.log1p(len(cands)) / 5,
            float(focus is not None), float(focus is not None and focus.text.lower() in ql), float(bool(near)),
            math.log1p(len(proper_out)) / 3, float(any(c.in_query for c in cands)), needed, float(d.confidence)]
    turn += [float(d.kind == k) for k in KINDS]
    turn += _ellipsis(q, a.history) if row.tagged_ellipsis else [0.0] * len(_TURN_ELLIPSIS)
    first_q = next((m.content.lower() for m in a.history if m.role == "user"), "")
    lowered = [m.content.lower() for m in a.history]
    topic_read = content_words(a.topic) if a.topic else ()
    rows = []
    for rank, (c, words) in enumerate(zip(cands, cw)):
        key = c.text.lower()
        slot = c.slot or ""
        out = float(not c.in_query)
        dist1 = float(c.distance == 1)
        rows.append([
            float(c.role == "topic"), float(c.proper), float(c.relational), float(c.cls in _NAME_CLASSES),
            float(c.cls == "eng"), float(c.cls in _NOUN_CLASSES), min(len(words), 6) / 6,
            math.log1p(len(c.text)) / 4, float(not words),
            float(c.role == "user"), 1.0 / c.distance, math.log1p(c.distance) / 3, dist1, float(c.distance == 2),
            float(c.turn == 0), float(key in first_q), float(any(w in topic_read for w in words)),
            math.log1p(sum(key in t for t in lowered)) / 2, float(c.in_query), _share(words, q), float(c.is_focus),
            float(c.in_frame), float(bool(slot)), float(slot == "place"), float(slot.startswith("time")),
            1.0 / (rank + 1), float(c.is_focus) * pronoun, dist1 * fragment, float(c.proper) * zh, out * needed,
            float(c.is_focus) * needed, dist1 * needed])
    base = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(_CAND_BASE))
    return TurnView(a, d, cands, cw, qw, np.asarray(turn, dtype=np.float64), base)


def featurize(v: TurnView, idf: IdfTable) -> tuple[np.ndarray, np.ndarray]:
    """(the turn's gate vector, one row per candidate) with the IDF columns of ``idf``, laid out as ``TURN_NAMES`` and
    ``CANDIDATE_NAMES`` name them."""
    q_idf = [idf.scaled(w) for w in v.query_words]
    near = [max((idf.scaled(w) for w in words), default=0.0)
            for c, words in zip(v.candidates, v.candidate_words) if c.proper and not c.in_query and c.distance <= 2]
    turn = np.concatenate([v.turn_base, [max(q_idf, default=0.0), sum(q_idf) / len(q_idf) if q_idf else 0.0,
                                         max(near, default=0.0)]])
    n = len(v.candidates)
    cidf = np.zeros((n, len(_CAND_IDF)))
    for i, words in enumerate(v.candidate_words):
        s = [idf.scaled(w) for w in words]
        if s:
            cidf[i] = (max(s), sum(s) / len(s))
    return turn, np.hstack([v.candidate_base, cidf, np.broadcast_to(turn, (n, len(turn)))])
