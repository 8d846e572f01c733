"""Training and exploration of the learned resolver (not part of the installed package; see research/README.md).

Run from the repository root as ``python -m research.learned.<module>``; everything here imports ``convsearch``
(the package holds inference only: ``convsearch.learned``) and nothing in ``convsearch`` imports this.
"""

from __future__ import annotations

from typing import Any


def one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs on one thread: the sums of a matrix product depend on how many threads
    split it (OpenBLAS's logistic fits differ in the 12th digit between 1 and 2 threads), and ``make train`` must give
    the same bytes on every machine. The command-line entry points run inside it."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")
