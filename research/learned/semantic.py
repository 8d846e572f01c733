"""Semantic features of a turn (cosines of the shipped embedder's vectors), an experiment of
``research.learned.experiments`` (``--emb-cache``): not in the shipped model, which reads the lexical features of
``convsearch.learned.features`` alone. ``featurize_with(v, idf, emb)`` is ``features.featurize`` with the semantic
columns added, laid out as ``feature_names(semantic=True)`` names them.
"""

from __future__ import annotations

import numpy as np

from convsearch.learned.features import (
    _CAND_BASE,
    _CAND_IDF,
    CANDIDATE_NAMES,
    TURN_NAMES,
    IdfTable,
    TurnView,
    featurize,
)

EMBED_CHARS = 128  # each text is cut to its first 128 characters (a long answer costs the model its length)
SEM_TURN_NAMES: tuple[str, ...] = ("s_q_prev", "s_q_cand_max", "s_prev_cand_max")
SEM_CAND_NAMES: tuple[str, ...] = ("s_c_query", "s_c_prev", "s_c_query_gap", "s_c_prev_gap", "s_c_query_rank")


def feature_names(semantic: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the gate's feature names, the term selector's) as ``featurize`` lays them out, without or with the
    semantic columns (``featurize(..., emb=...)``)."""
    if not semantic:
        return TURN_NAMES, CANDIDATE_NAMES
    turn = TURN_NAMES + SEM_TURN_NAMES
    return turn, tuple(_CAND_BASE + _CAND_IDF) + SEM_CAND_NAMES + turn


def embedding_texts(v: TurnView) -> list[str]:
    """What one embedder call per turn embeds, in this order: the query, the previous user question (or the query
    when there is none), then every candidate's text; each cut to ``EMBED_CHARS`` characters. (The latest answer is
    not embedded: answers are long, and the embedder's cost grows with the text.)"""
    prev = next((m.content for m in reversed(v.analysis.history) if m.role == "user"), v.analysis.q)
    return [t[:EMBED_CHARS] for t in (v.analysis.q, prev, *(c.text for c in v.candidates))]


def semantic(v: TurnView, emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the turn's semantic columns, one row of candidate columns per candidate) from ``emb``: L2-normalised
    vectors of ``embedding_texts(v)``, one row each. Cosines: the query against the previous question, the best
    candidate against the query and against the previous question; each candidate against the query and the
    previous question, its gap to the turn's best, and its rank by similarity to the query (1 / rank)."""
    emb = np.asarray(emb, dtype=np.float64)
    q, prev, cands = emb[0], emb[1], emb[2:]
    n = len(cands)
    if n:
        cq, cp = cands @ q, cands @ prev
        order = np.empty(n)
        order[np.argsort(-cq, kind="stable")] = np.arange(1, n + 1)
        rows = np.column_stack([cq, cp, cq.max() - cq, cp.max() - cp, 1.0 / order])
        turn = [float(q @ prev), float(cq.max()), float(cp.max())]
    else:
        rows = np.zeros((0, len(SEM_CAND_NAMES)))
        turn = [float(q @ prev), 0.0, 0.0]
    return np.asarray(turn), rows


def featurize_with(v: TurnView, idf: IdfTable, emb: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``featurize(v, idf)``, and with ``emb`` (the vectors of ``embedding_texts(v)``) the semantic columns too: the
    turn's after its lexical ones, a candidate's after its own lexical columns and before the (extended) turn's."""
    turn, rows = featurize(v, idf)
    if emb is None:
        return turn, rows
    s_turn, s_cand = semantic(v, emb)
    own = len(CANDIDATE_NAMES) - len(TURN_NAMES)
    turn = np.concatenate([turn, s_turn])
    n = len(v.candidates)
    return turn, np.hstack([rows[:, :own], s_cand, np.broadcast_to(turn, (n, len(turn)))])


__all__ = ["EMBED_CHARS", "SEM_CAND_NAMES", "SEM_TURN_NAMES", "embedding_texts", "feature_names", "featurize_with",
           "semantic"]
