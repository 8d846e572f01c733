"""A file of more passages than a batch (``CONVSEARCH_INGEST_BATCH``) is committed a batch at a time, its manifest
entry partial (``done``) until the last one: an interrupted run keeps every committed slice, and the rerun embeds only
the rest while the file's bytes are the same, or replaces it whole when they changed. Real local indexes, real files."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from convsearch.backends.local import AddInterrupted, LocalIndex
from convsearch.config import Settings
from convsearch.ingest.settings import IngestSettings
from convsearch.ingest.sync import Manifest, SyncInterrupted, manifest_dir, passages_of, sync_paths

pytestmark = pytest.mark.integration

BATCH = 4


def big_md(path: Path, parts: int, word: str = "widget") -> Path:
    """A Markdown file of ``parts`` sections: one passage each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "\n\n".join(f"## Part {i}\n\nPart {i} explains how knob {i} of the {word} sets level {i * 7}."
                       for i in range(parts))
    path.write_text(f"# Big\n\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture()
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("CONVSEARCH_INGEST_BATCH", str(BATCH))
    return Settings.from_env(data_dir=tmp_path / "data")


@pytest.fixture()
def index(tmp_path: Path):
    idx = LocalIndex(tmp_path / "data" / "index")
    yield idx
    idx.close()


def stored(idx: LocalIndex, ids: list[str]) -> dict[str, str]:
    """The texts stored under ``ids`` (the ones present)."""
    out = {}
    for i in ids:
        h = idx.get(i)
        if h is not None:
            out[i] = h.text
    return out


def expected(path: Path, settings: Settings) -> dict[str, str]:
    """What an uninterrupted index of ``path`` holds: its passages' ids and texts."""
    _doc_id, docs = passages_of(path, "jsonl" if path.suffix == ".jsonl" else "md", max_bytes=2**30,
                                passage_tokens=IngestSettings.of(settings).passage_tokens)
    return {d.id: d.text for d in docs}


def entry_of(idx: LocalIndex, settings: Settings, root: Path, rel: str) -> dict[str, Any]:
    man_path = next(manifest_dir(idx, settings.data_dir).glob("*.json"))
    return dict(Manifest(man_path, root).files[rel])


class Adds:
    """Wraps ``index.add``: counts the passages of each call, and raises Ctrl-C on call ``stop`` (1-based), after
    committing the call's passages first when ``after_commit``."""

    def __init__(self, idx: LocalIndex, stop: int | None = None, after_commit: bool = False) -> None:
        self.real, self.stop, self.after_commit, self.calls = idx.add, stop, after_commit, []  # type: list[int]
        idx.add = self  # type: ignore[method-assign]

    def __call__(self, docs: Any, **kw: Any) -> int:
        docs = list(docs)
        self.calls.append(len(docs))
        if len(self.calls) == self.stop:
            if self.after_commit:
                self.real(docs, **kw)
                raise AddInterrupted(len(docs))
            raise KeyboardInterrupt
        return int(self.real(docs, **kw))


def test_a_big_file_interrupted_after_its_first_slice_keeps_it_and_the_rerun_adds_only_the_rest(tmp_path, index,
                                                                                                 settings):
    root = tmp_path / "kb"
    big = big_md(root / "big.md", 10)
    want = expected(big, settings)
    ids = list(want)
    assert len(ids) == 10

    adds = Adds(index, stop=2)
    with pytest.raises(SyncInterrupted) as exc:
        sync_paths(index, [root], settings=settings, progress=None)
    rep = exc.value.report
    assert adds.calls == [BATCH, BATCH]  # slices of the batch, not the whole file
    assert (rep.interrupted, rep.new, rep.passages_written) == (True, 0, BATCH)
    assert len(index) == BATCH and stored(index, ids) == {i: want[i] for i in ids[:BATCH]}
    e = entry_of(index, settings, root, "big.md")
    assert e["done"] == BATCH and e["new"] is True and e["n"] == 10

    adds = Adds(index)
    r = sync_paths(index, [root], settings=settings, progress=None)
    assert adds.calls == [BATCH, 10 - 2 * BATCH]  # only the passages after the first slice
    assert (r.new, r.changed, r.unchanged, r.passages_written, r.passages_deleted) == (1, 0, 0, 10 - BATCH, 0)
    assert len(index) == 10 and stored(index, ids) == want
    e = entry_of(index, settings, root, "big.md")
    assert "done" not in e and "new" not in e and e["n"] == 10

    # an uninterrupted index of the same file holds the same passages
    ref = LocalIndex(tmp_path / "ref" / "index")
    try:
        sync_paths(ref, [root], settings=Settings.from_env(data_dir=tmp_path / "ref"), progress=None)
        assert len(ref) == 10 and stored(ref, ids) == want
    finally:
        ref.close()

    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "data").rglob("*") if p.is_file()}
    again = sync_paths(index, [root], settings=settings, progress=None)
    assert (again.unchanged, again.new, again.changed, again.passages_written) == (1, 0, 0, 0)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "data").rglob("*") if p.is_file()} == stamps


def test_a_partial_file_that_changed_before_the_rerun_is_replaced_whole(tmp_path, index, settings):
    root = tmp_path / "kb"
    big = big_md(root / "big.md", 10)
    old_ids = list(expected(big, settings))
    Adds(index, stop=3)
    with pytest.raises(SyncInterrupted):
        sync_paths(index, [root], settings=settings, progress=None)
    assert len(index) == 2 * BATCH and entry_of(index, settings, root, "big.md")["done"] == 2 * BATCH

    big_md(big, 3, word="gadget")  # shorter, other words: every old passage is stale
    want = expected(big, settings)
    adds = Adds(index)
    r = sync_paths(index, [root], settings=settings, progress=None)
    assert adds.calls == [3]  # the new version whole, nothing carried over
    assert (r.new, r.unchanged, r.passages_written) == (1, 0, 3)
    assert r.passages_deleted == 2 * BATCH - 3  # old #3..#7: stored, gone from the new version
    assert stored(index, old_ids) == want and len(index) == 3
    assert all("gadget" in t for t in want.values())
    assert "done" not in entry_of(index, settings, root, "big.md")


def test_a_changed_big_file_loses_its_stale_passages_after_the_first_slice(tmp_path, index, settings):
    root = tmp_path / "kb"
    big = big_md(root / "big.md", 14)
    all_old = list(expected(big, settings))
    sync_paths(index, [root], settings=settings, progress=None)
    assert len(index) == 14

    big_md(big, 9, word="gadget")
    want = expected(big, settings)
    Adds(index, stop=2)
    with pytest.raises(SyncInterrupted) as exc:
        sync_paths(index, [root], settings=settings, progress=None)
    assert exc.value.report.passages_deleted == 5  # #9..#13 went with the first slice
    e = entry_of(index, settings, root, "big.md")
    assert e["done"] == BATCH and "new" not in e
    now = stored(index, all_old)
    assert set(now) <= set(Manifest.ids(e)) and len(now) == 9  # nothing stored the manifest does not name
    assert all(now[i] == want[i] for i in list(want)[:BATCH])

    r = sync_paths(index, [root], settings=settings, progress=None)
    assert (r.changed, r.new, r.unchanged, r.passages_written) == (1, 0, 0, 9 - BATCH)
    assert stored(index, all_old) == want and len(index) == 9


def test_ctrl_c_during_a_slice_commit_records_the_committed_slice(tmp_path, index, settings):
    """``LocalIndex.add`` holds Ctrl-C back through a commit and then raises AddInterrupted(written): that slice is
    stored, so the manifest counts it."""
    root = tmp_path / "kb"
    big_md(root / "big.md", 10)
    Adds(index, stop=2, after_commit=True)
    with pytest.raises(SyncInterrupted) as exc:
        sync_paths(index, [root], settings=settings, progress=None)
    assert exc.value.report.passages_written == 2 * BATCH and len(index) == 2 * BATCH
    assert entry_of(index, settings, root, "big.md")["done"] == 2 * BATCH
    adds = Adds(index)
    r = sync_paths(index, [root], settings=settings, progress=None)
    assert adds.calls == [10 - 2 * BATCH] and r.new == 1 and len(index) == 10


def test_a_partial_file_that_left_the_folder_is_pruned(tmp_path, index, settings):
    root = tmp_path / "kb"
    big = big_md(root / "big.md", 10)
    big_md(root / "small.md", 2)
    Adds(index, stop=2)
    with pytest.raises(SyncInterrupted):
        sync_paths(index, [root], settings=settings, progress=None)
    big.unlink()
    r = sync_paths(index, [root], settings=settings, progress=None)
    assert r.removed == 1 and len(index) == 2  # only small.md's passages are left


def test_a_jsonl_file_of_records_is_sliced_and_resumed_by_record_id(tmp_path, index, settings):
    root = tmp_path / "kb"
    root.mkdir()
    recs = root / "recs.jsonl"
    recs.write_text("".join(json.dumps({"id": f"r{i}", "text": f"record {i} about plan {i}"}) + "\n"
                            for i in range(10)), encoding="utf-8")
    Adds(index, stop=2)
    with pytest.raises(SyncInterrupted):
        sync_paths(index, [root], settings=settings, progress=None)
    e = entry_of(index, settings, root, "recs.jsonl")
    assert e["done"] == BATCH and e["ids"] == [f"r{i}" for i in range(10)]
    assert set(stored(index, e["ids"])) == {f"r{i}" for i in range(BATCH)}
    adds = Adds(index)
    r = sync_paths(index, [root], settings=settings, progress=None)
    assert adds.calls == [BATCH, 2] and r.new == 1
    assert stored(index, e["ids"]) == expected(recs, settings)


def test_progress_lines_move_with_each_slice_of_a_big_file(tmp_path, index, settings, monkeypatch):
    monkeypatch.setenv("CONVSEARCH_INGEST_PROGRESS_S", "0.000001")
    s = Settings.from_env(data_dir=tmp_path / "data")
    root = tmp_path / "kb"
    big_md(root / "big.md", 10)
    out = io.StringIO()
    sync_paths(index, [root], settings=s, progress=out)
    lines = out.getvalue().splitlines()
    assert any(line.startswith(f"indexing: 0/1 files, {2 * BATCH} passages written") for line in lines), lines
    assert lines[-1].startswith("indexing: 1/1 files, 10 passages written")
