"""An indexing run's progress while its batches are embedded, with a real embedder (``openai`` against the loopback
/v1/embeddings server) and a real local index: the lines say how much of the batch is embedded before that batch is
committed, and the run's result is the same as without anyone listening."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from convsearch.backends.local import LocalIndex
from convsearch.config import Settings
from convsearch.embed.openai import OpenAIEmbedder
from convsearch.ingest.sync import sync_paths
from convsearch.testing.embed_server import EmbedServer

pytestmark = pytest.mark.integration

LINE = re.compile(r"^indexing: (\d+)/12 files, (\d+) passages written, (\d+) of (\d+) embedded in this batch, "
                  r"embedding [\d.]+ passages/s, (time left unknown|about \w+ left)$")


class _Recorder(io.StringIO):
    """The progress stream: each line with the number of documents the index held when it was written."""

    def __init__(self, index: LocalIndex) -> None:
        super().__init__()
        self.index = index
        self.seen: list[tuple[str, int]] = []

    def write(self, s: str) -> int:
        self.seen.extend((line, len(self.index)) for line in s.splitlines())
        return super().write(s)


def test_lines_come_while_each_batch_is_embedded_before_it_is_committed(tmp_path: Path, monkeypatch):
    kb = tmp_path / "kb"
    kb.mkdir()
    for i in range(12):
        (kb / f"note{i:02d}.md").write_text(f"# Note {i}\n\nThe widget number {i} needs calibration.\n",
                                            encoding="utf-8")
    monkeypatch.setenv("CONVSEARCH_INGEST_PROGRESS_S", "0.000001")
    monkeypatch.setenv("CONVSEARCH_INGEST_BATCH", "8")  # two commits: 8 passages, then 4
    settings = Settings.from_env(data_dir=tmp_path / "data")
    with EmbedServer(dim=16, latency_s=0.02) as srv:
        emb = OpenAIEmbedder("fake-embed", base_url=srv.base_url, batch=2, concurrency=1)
        idx = LocalIndex(tmp_path / "data" / "index", embedder=emb)
        out = _Recorder(idx)
        try:
            report = sync_paths(idx, [kb], settings=settings, progress=out)
            assert report.passages_written == len(idx) == 12 and report.new == 12
            sizes = [len(r["json"]["input"]) for r in srv.requests]
            assert sizes == [1] + [2] * 6  # the index's probe for the dimension, then one request per 2 passages
        finally:
            idx.close()
            emb.close()
    during = [(LINE.match(line), held) for line, held in out.seen if "embedded in this batch" in line]
    assert all(m is not None for m, _ in during), out.getvalue()
    steps = [(int(m[2]), int(m[3]), int(m[4]), held) for m, held in during if m is not None]
    # every request's answer is a line: (written, embedded, batch size, documents in the index at that moment)
    assert steps == [(0, 2, 8, 0), (0, 4, 8, 0), (0, 6, 8, 0), (0, 8, 8, 0), (8, 2, 4, 8), (8, 4, 4, 8)]
    assert out.seen[-1][0].startswith("indexing: 12/12 files, 12 passages written, embedding ")
