"""The index's progress (``ingest.sync.Progress``) while a batch is embedded: each chunk the embedder reports
(``embed.base.embedded``) moves it, a line at most every ``every_s`` seconds when the stream is not a terminal, one
bar (its postfix the embedding rate) when it is; time left from the bytes read and the embedding rate, "unknown"
before 1% of the bytes are read."""

from __future__ import annotations

import io

from convsearch.embed.base import HashEmbedder, embed_listener, embedded
from convsearch.ingest.sync import Progress


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_during_embedding_at_most_every_every_s():
    clock, out = Clock(), io.StringIO()
    p = Progress(10, 1000, stream=out, every_s=5.0, clock=clock)
    clock.t = 1.0  # one second reading and converting the batch's files (100 of the 1000 bytes, 256 passages)
    with p.adding(256, 100):
        for t in (5.0, 7.0, 10.0):  # chunks of 64: the second comes 2 s after a line, so it writes none
            clock.t = t
            embedded(64)
        assert embed_listener() is not None
    assert embed_listener() is None
    lines = out.getvalue().splitlines()
    # at 5 s: 64 embedded in 4 s = 16/s; left = 1 s of reading per 100 bytes × 900 bytes
    # + (2.56 passages per byte × 900 bytes + the batch's last 192) / 16 per s = 9 + 156 s
    assert lines == [
        "indexing: 0/10 files, 0 passages written, 64 of 256 embedded in this batch, embedding 16.0 passages/s, "
        "about 2m45s left",
        "indexing: 0/10 files, 0 passages written, 192 of 256 embedded in this batch, embedding 21.3 passages/s, "
        "about 2m00s left",  # 9 s + (2304 + 64) / 21.3 s
    ]
    clock.t = 16.0
    p.advance(3, 100, 256)  # committed at 16 s: the rate stays the embedding rate, no batch part
    # 7 s outside embedding (1 s reading + 6 s committing) per 100 bytes × 900 + 2304 passages / 21.3 per s
    assert out.getvalue().splitlines()[-1] == (
        "indexing: 3/10 files, 256 passages written, embedding 21.3 passages/s, about 2m51s left")
    embedded(64)  # outside the block nobody listens: no line, no count
    assert p.embedded == 192 and len(out.getvalue().splitlines()) == 3


def test_time_left_is_unknown_before_a_percent_is_read_and_without_embedding_uses_bytes():
    clock, out = Clock(), io.StringIO()
    p = Progress(1000, 100_000, stream=out, every_s=0.0, clock=clock)
    clock.t = 1.0
    with p.adding(8, 500):  # 0.5% of the bytes read
        clock.t = 3.0
        embedded(8)
    assert out.getvalue().splitlines() == [
        "indexing: 0/1000 files, 0 passages written, 8 of 8 embedded in this batch, embedding 4.0 passages/s, "
        "time left unknown"]
    q = Progress(4, 400, stream=io.StringIO(), every_s=0.0, clock=clock)  # no embedder heard (BM25 only)
    clock.t = 13.0
    q.advance(1, 100, 5)
    assert q.stream.getvalue() == "indexing: 1/4 files, 5 passages written, 0.5 passages/s, about 30s left\n"


def test_a_silent_progress_still_counts_and_writes_nothing():
    p = Progress(2, 10, stream=None, every_s=0.0)
    with p.adding(3, 10):
        HashEmbedder(8).embed_passages(["a", "b", "c"])  # the test double reports its call as one chunk
        assert p.in_batch == 3
    assert p.batch == 0 and p.embedded == 3


def test_on_a_terminal_one_bar_shows_the_embedding():
    clock, err = Clock(), _Tty()
    p = Progress(5, 500, stream=err, every_s=5.0, clock=clock)
    clock.t = 1.0
    with p.adding(40, 500):
        clock.t = 3.0
        embedded(8)
        drawn = err.getvalue()
    p.close()
    assert "indexing" in drawn and "8/40 embedded" in drawn and "4.0/s embedding" in drawn
    assert "files, " not in drawn  # the bar, not the line
