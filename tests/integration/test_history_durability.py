"""Durability: a writer process appending messages is killed with SIGKILL at random points (during start-up
and migration too); after every restart, each acknowledged message is present exactly once and whole.

The writer prints ``ack N`` only after ``append`` returned (the transaction committed). Restarts resend a
few acknowledged ids, so idempotent appends are exercised across crashes as well. The seed is printed on
failure; set CONVSEARCH_DURABILITY_SEED to replay one.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from convsearch.history import Scope
from convsearch.history.sql import SQLITE_FILE, SqlStore

pytestmark = pytest.mark.integration

SCOPE = Scope("durability", "writer", "s1")
ROUNDS = 10

WRITER = r'''
import hashlib, sys
from convsearch.history import Scope
from convsearch.history.sql import SqlStore
url, start = sys.argv[1], int(sys.argv[2])
store = SqlStore(url, timeout=10)
scope = Scope("durability", "writer", "s1")
print("ready", flush=True)
for i in range(start, start + 100000):
    body = f"message {i} " + "数据" * (i % 50) + "x" * (i * 37 % 3000)
    content = body + " #" + hashlib.sha256(body.encode()).hexdigest()
    store.append(scope, {"role": "user" if i % 2 == 0 else "assistant", "content": content}, message_id=f"m{i}")
    print(f"ack {i}", flush=True)
'''


def _intact(content: str) -> bool:
    body, _, digest = content.rpartition(" #")
    return hashlib.sha256(body.encode()).hexdigest() == digest


def _run_round(url: str, start: int, delay: float, *, after_ready: bool = False) -> list[int]:
    """Start a writer and SIGKILL it ``delay`` seconds after its start, or (``after_ready``) after it said
    ``ready``: on a loaded machine (parallel test workers) start-up alone may outlast any fixed delay, and a
    round meant to land mid-append would then land in the imports again."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, url, str(start)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, text=True)
    acks: list[int] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("ack "):
                acks.append(int(line.split()[1]))
            elif line.startswith("ready"):
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    with proc:  # closes the pipe
        reader.start()
        if after_ready:
            assert ready.wait(timeout=120), "the writer did not get ready in 120 s"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        reader.join(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"the writer ended by itself ({proc.returncode}) before the kill"
    return acks


def _check(url: str, acked: set[int], where: str) -> int:
    store = SqlStore(url, timeout=10)
    rows = store.messages(SCOPE)
    store.close()
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids)), f"{where}: duplicated messages"
    assert [r.seq for r in rows] == sorted(r.seq for r in rows)
    got = {int(i[1:]) for i in ids}
    missing = acked - got
    assert not missing, f"{where}: acknowledged but missing: {sorted(missing)[:10]}"
    for r in rows:
        assert _intact(r.content) and r.content.startswith(f"message {r.id[1:]} "), f"{where}: half-written {r.id}"
    return len(rows)


def _kill_test(url: str) -> None:
    seed = int(os.environ.get("CONVSEARCH_DURABILITY_SEED", "0")) or random.randrange(1, 2**31)
    rng = random.Random(seed)
    acked: set[int] = set()
    killed_before_ready = 0
    for rnd in range(ROUNDS):
        start = max(0, max(acked, default=-1) - rng.randint(0, 3))  # resend a few acknowledged ids
        # early kills land in imports, engine creation and the Alembic migration; later ones mid-append (timed
        # from the writer's "ready", so that they do on a loaded machine too)
        mid_append = rnd % 2 == 1
        delay = rng.uniform(0.3, 1.7) if mid_append else rng.uniform(0.05, 0.8)
        new = _run_round(url, start, delay, after_ready=mid_append)
        killed_before_ready += not new
        acked.update(new)
        _check(url, acked, f"seed={seed} round={rnd}")
    total = _check(url, acked, f"seed={seed} final")
    assert len(acked) > 50, f"seed={seed}: too few appends acknowledged to mean anything ({len(acked)})"
    assert total >= len(acked)
    print(f"durability seed={seed}: {len(acked)} acknowledged, {total} stored, "
          f"{killed_before_ready} kills before the first ack")


def test_sqlite_survives_sigkill_of_the_writer(tmp_path):
    url = f"sqlite:///{tmp_path / SQLITE_FILE}"
    _kill_test(url)
    with sqlite3.connect(tmp_path / SQLITE_FILE) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_postgres_survives_sigkill_of_the_writer(pg_url):
    _kill_test(pg_url)
