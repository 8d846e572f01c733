"""`convsearch index FOLDER` as a sync, on real files the test writes: new, unchanged (nothing read or written),
changed (old passages replaced), removed (pruned unless --no-prune), skipped types, failed files (the rest indexed,
nothing stored lost), and an interrupted run that the next one finishes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from convsearch.backends.local import LocalIndex
from convsearch.config import Settings
from convsearch.ingest.sync import Manifest, SyncInterrupted, manifest_dir, sync_paths

pytestmark = pytest.mark.integration


def write(p: Path, text: str | bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    write(root / "guide.md", "# Guide\n\nIntro to the widget.\n\n## Install\n\nRun make install to build the widget.\n")
    write(root / "zh" / "说明.txt", "安装说明\n\n先运行配置脚本，然后重启服务。\n")
    write(root / "notes.html", "<html><head><title>Notes</title></head><body><nav>Home Next</nav><h1>Notes</h1>"
                                "<p>The frobnicator tunes the flux capacitor.</p></body></html>")
    write(root / "image.png", b"\x89PNG\r\n\x1a\n")
    write(root / ".git" / "config.txt", "hidden folder: never walked")
    return root


@pytest.fixture()
def index(tmp_path: Path):
    idx = LocalIndex(tmp_path / "data" / "index")
    yield idx
    idx.close()


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env(data_dir=tmp_path / "data")


def test_first_run_indexes_every_supported_file_as_cited_passages(folder, index, settings):
    r = sync_paths(index, [folder], settings=settings, progress=None)
    assert (r.scanned, r.new, r.skipped, r.failed) == (4, 3, 1, [])
    assert r.passages_written == len(index) >= 4
    hit = index.search("make install widget", top_k=1)[0]
    md = hit.metadata
    assert md["source"] == str(folder / "guide.md") and md["section"] == "Guide › Install"
    assert md["title"] == "Guide" and hit.id == f"{md['doc_id']}#{md['chunk']}"
    assert hit.text == "Run make install to build the widget."
    zh = index.search("重启服务", top_k=1)[0]
    assert zh.metadata["lang"] == "zh" and zh.metadata["source"].endswith("说明.txt")
    assert index.search("Home Next", top_k=5) == [] or all("Home" not in h.text for h in index.search("Home"))


def test_compressed_documents_are_indexed_as_what_they_hold(folder, index, settings):
    import gzip

    write(folder / "doc" / "README.md.gz", gzip.compress(b"# Frobnicator\n\n## Calibrate\n\nHold the reset key for ten "
                                                          b"seconds to calibrate the frobnicator.\n"))
    write(folder / "doc" / "faq.html.gz", gzip.compress("<html><body><h1>常见问题</h1><p>校准之前先关闭电源。</p>"
                                                        "</body></html>".encode()))
    write(folder / "doc" / "changelog.Debian.gz", gzip.compress(b"frob (1.0-1) unstable; urgency=low"))
    write(folder / "doc" / "cut.txt.gz", gzip.compress(b"Title\n\nbody " * 400)[:60])
    r = sync_paths(index, [folder], settings=settings, progress=None)
    assert (r.new, r.skipped) == (5, 2), r  # the image and the changelog: no document inside
    assert [(Path(f.path).name, f.reason) for f in r.failed] == [("cut.txt.gz", "not a readable gzip file (truncated)")]
    hit = index.search("calibrate frobnicator reset key", top_k=1)[0]
    assert hit.metadata["source"] == str(folder / "doc" / "README.md.gz")
    assert hit.metadata["section"] == "Frobnicator › Calibrate" and hit.text.startswith("Hold the reset key")
    zh = index.search("校准 电源", top_k=1)[0]
    assert zh.metadata["source"].endswith("faq.html.gz") and zh.metadata["title"] == "常见问题"
    again = sync_paths(index, [folder], settings=settings, progress=None)
    assert (again.new, again.changed, again.unchanged, again.passages_written) == (0, 0, 5, 0)


def test_a_sphinx_sites_page_sources_are_not_indexed_beside_its_pages(tmp_path, index, settings):
    site = tmp_path / "html"
    write(site / "tutorial" / "venv.html", "<html><body><h1>Virtual Environments</h1><p>Run python -m venv to create "
                                           "a virtual environment.</p></body></html>")
    write(site / "_sources" / "tutorial" / "venv.rst.txt", ".. _tut-venv:\n\nVirtual Environments\n====\n\nRun "
                                                          "``python -m venv`` to create a virtual environment.\n")
    # a folder called _sources outside a built site is a folder like any other
    assert sync_paths(index, [site], settings=settings, progress=None).new == 2
    # in a built site (its search index beside it) it is the pages' sources: left out, and what was indexed of it pruned
    write(site / "searchindex.js", "Search.setIndex({})")
    r = sync_paths(index, [site], settings=settings, progress=None)
    assert (r.scanned, r.unchanged, r.removed) == (2, 1, 1)  # the page and the search index (skipped by type)
    assert {h.metadata["source"] for h in index.search("create a virtual environment venv", top_k=5)} == {
        str(site / "tutorial" / "venv.html")}
    # one named as the root is read
    other = LocalIndex(tmp_path / "other")
    try:
        assert sync_paths(other, [site / "_sources"], settings=settings, progress=None).new == 1
    finally:
        other.close()


def test_what_links_lead_to_is_indexed_once_under_its_own_path(tmp_path, index, settings):
    kb, outside = tmp_path / "kb", tmp_path / "outside"
    write(kb / "real" / "guide.md", "# Guide\n\nThe frobnicator tunes the flux capacitor.\n")
    write(outside / "ext.md", "# Extra\n\nCalibrate the widget every spring.\n")
    os.symlink(kb / "real", kb / "a-link")  # a folder link that sorts before the folder itself
    (kb / "other").mkdir()
    os.symlink(kb / "real" / "guide.md", kb / "other" / "guide.md")  # a file link under the same name
    os.symlink(outside, kb / "ext")  # a link out of the tree: followed
    write(kb / "NOTES", "# Notes\n\nThe gizmo hums at night.\n")  # a type the index skips, read through its link
    os.symlink(kb / "NOTES", kb / "notes.md")
    os.symlink(kb, kb / "real" / "up")  # loops: to a folder it lies in, to its own folder
    os.symlink(kb / "other", kb / "other" / "here")
    r = sync_paths(index, [kb], settings=settings, progress=None)
    assert (r.new, r.linked) == (3, 2) and sorted(Path(f.path).name for f in r.failed) == ["here", "up"], r
    assert "loop" in r.failed[0].reason and "2 links to what is indexed already" in r.summary()
    assert index.search("frobnicator flux", top_k=5)[0].metadata["source"] == str(kb / "real" / "guide.md")
    assert index.search("calibrate widget", top_k=5)[0].metadata["source"] == str(kb / "ext" / "ext.md")
    assert index.search("gizmo hums", top_k=5)[0].metadata["source"] == str(kb / "notes.md")
    assert len(index) == 3
    (kb / "other" / "guide.md").unlink()
    r2 = sync_paths(index, [kb], settings=settings, progress=None)
    assert (r2.unchanged, r2.removed, r2.passages_deleted, len(index)) == (3, 0, 0, 3)


def test_a_file_that_leaves_takes_no_passage_another_file_still_names(folder, index, settings):
    # an index from before links were walked once: kb/sub/guide.md, a link to guide.md, was indexed as a second
    # entry with the same document id (its name and its resolved path): its removal deleted the passages of both
    sync_paths(index, [folder], settings=settings, progress=None)
    [man_path] = manifest_dir(index, settings.data_dir).glob("*.json")
    man = json.loads(man_path.read_text())
    man["files"]["sub/guide.md"] = dict(man["files"]["guide.md"])
    man_path.write_text(json.dumps(man))
    before = len(index)
    r = sync_paths(index, [folder], settings=settings, progress=None)
    assert (r.removed, r.passages_deleted, len(index)) == (1, 0, before)
    assert index.search("make install widget", top_k=1)[0].metadata["source"] == str(folder / "guide.md")


def test_an_unchanged_folder_is_skipped_without_reading_or_writing(folder, index, settings, tmp_path):
    sync_paths(index, [folder], settings=settings, progress=None)
    mdir = manifest_dir(index, settings.data_dir)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "data").rglob("*") if p.is_file()}
    r = sync_paths(index, [folder], settings=settings, progress=None)
    assert (r.new, r.changed, r.unchanged, r.removed, r.passages_written) == (0, 0, 3, 0, 0)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "data").rglob("*") if p.is_file()} == stamps
    assert list(mdir.glob("*.json"))


def test_a_touched_file_with_the_same_bytes_is_unchanged(folder, index, settings):
    sync_paths(index, [folder], settings=settings, progress=None)
    os.utime(folder / "guide.md", ns=(1, 1))
    r = sync_paths(index, [folder], settings=settings, progress=None)
    assert (r.changed, r.unchanged, r.passages_written) == (0, 3, 0)


def test_a_changed_file_has_its_old_passages_replaced(folder, index, settings):
    sync_paths(index, [folder], settings=settings, progress=None)
    before = len(index)
    write(folder / "guide.md", "# Guide\n\nOnly one section now: the gizmo.\n")
    r = sync_paths(index, [folder], settings=settings, progress=None)
    assert (r.new, r.changed, r.unchanged) == (0, 1, 2)
    assert r.passages_deleted == 1 and len(index) == before - 1
    assert index.search("make install widget", top_k=3) == [] or \
        all("widget" not in h.text for h in index.search("make install widget", top_k=3))
    assert "gizmo" in index.search("gizmo", top_k=1)[0].text


def test_removed_files_are_pruned_unless_told_not_to(folder, index, settings):
    sync_paths(index, [folder], settings=settings, progress=None)
    hits = index.search("frobnicator flux", top_k=10)
    assert len([h for h in hits if h.metadata["source"].endswith("notes.html")]) == 1
    (folder / "notes.html").unlink()
    kept = sync_paths(index, [folder], settings=settings, prune=False, progress=None)
    assert kept.removed == 0 and index.search("frobnicator", top_k=1)
    r = sync_paths(index, [folder], settings=settings, progress=None)
    assert r.removed == 1 and r.passages_deleted == 1
    assert index.search("frobnicator", top_k=1) == []


def test_bad_files_are_named_and_the_rest_is_indexed(folder, index, settings):
    write(folder / "empty.md", "")
    write(folder / "binary.txt", bytes(range(256)) * 8)
    write(folder / "broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog")
    r = sync_paths(index, [folder], settings=settings, progress=None)
    reasons = {Path(f.path).name: f.reason for f in r.failed}
    assert set(reasons) == {"empty.md", "binary.txt", "broken.pdf"}, reasons
    assert "empty" in reasons["empty.md"] and "binary" in reasons["binary.txt"]
    assert r.new == 3 and len(index) >= 4
    # a file that fails after it was indexed keeps its passages
    write(folder / "guide.md", b"\x00\x01\x02binary now")
    r2 = sync_paths(index, [folder], settings=settings, progress=None)
    assert [Path(f.path).name for f in r2.failed if f.path.endswith("guide.md")] == ["guide.md"]
    assert index.search("make install widget", top_k=1)[0].metadata["source"].endswith("guide.md")


def test_size_limit_symlink_loop_and_unreadable_file(folder, index, settings, monkeypatch):
    monkeypatch.setenv("CONVSEARCH_INGEST_MAX_MB", "0.001")
    write(folder / "big.txt", "word " * 1000)
    os.symlink(folder, folder / "zh" / "loop")
    locked = write(folder / "locked.txt", "secret")
    locked.chmod(0)
    s = Settings.from_env(data_dir=settings.data_dir)
    r = sync_paths(index, [folder], settings=s, progress=None)
    reasons = {Path(f.path).name: f.reason for f in r.failed}
    assert "size limit" in reasons["big.txt"]
    assert "loop" in reasons["loop"]
    if os.geteuid() != 0:  # root reads anything
        assert "permission" in reasons["locked.txt"]
    assert r.new >= 3


def test_a_missing_path_is_bad_input_before_anything_is_written(tmp_path, index, settings):
    from convsearch.errors import DataFileError

    with pytest.raises(DataFileError, match="no such file"):
        sync_paths(index, [tmp_path / "nope"], settings=settings, progress=None)
    assert len(index) == 0


def _many(root: Path, n: int) -> Path:
    for i in range(n):
        write(root / f"f{i:02d}.md", f"# File {i}\n\nUnique token tok{i} in file {i}.\n")
    return root


def _interrupted_sync(index, root: Path, settings: Settings, monkeypatch, at: int):
    """A sync stopped by Ctrl-C in the ``at``-th ``index.add``: its report (``add`` is the real one again after)."""
    real_add, calls = index.add, []

    def add(docs, **kw):
        calls.append(len(docs))
        if len(calls) == at:
            raise KeyboardInterrupt
        return real_add(docs, **kw)

    monkeypatch.setattr(index, "add", add)
    with pytest.raises(SyncInterrupted) as exc:
        sync_paths(index, [root], settings=settings, progress=None)
    monkeypatch.setattr(index, "add", real_add)
    return exc.value.report


def test_an_interrupted_sync_keeps_whole_batches_and_the_next_run_carries_on(tmp_path, index, monkeypatch):
    root = _many(tmp_path / "many", 12)
    monkeypatch.setenv("CONVSEARCH_INGEST_BATCH", "3")
    s = Settings.from_env(data_dir=tmp_path / "data")
    stopped = _interrupted_sync(index, root, s, monkeypatch, at=3)
    assert stopped.interrupted and stopped.new == 6 and len(index) == 6
    r = sync_paths(index, [root], settings=s, progress=None)
    assert (r.new, r.unchanged) == (6, 6) and len(index) == 12


def test_a_deleted_index_makes_the_manifest_stale(folder, tmp_path, settings):
    a = LocalIndex(tmp_path / "data" / "index")
    sync_paths(a, [folder], settings=settings, progress=None)
    mdir = manifest_dir(a, settings.data_dir)
    a.close()
    man = Manifest(next(mdir.glob("*.json")), folder)
    assert len(man.files) == 3
    b = LocalIndex(tmp_path / "other-index")  # an empty store with the same manifest beside it
    b_dir = manifest_dir(b, settings.data_dir)
    b_dir.mkdir(parents=True)
    (b_dir / next(mdir.glob("*.json")).name).write_bytes(next(mdir.glob("*.json")).read_bytes())
    r = sync_paths(b, [folder], settings=settings, progress=None)
    assert r.new == 3 and len(b) >= 4
    b.close()


def test_progress_lines_when_stderr_is_not_a_terminal(folder, index, tmp_path, monkeypatch):
    import io

    monkeypatch.setenv("CONVSEARCH_INGEST_PROGRESS_S", "0.000001")
    s = Settings.from_env(data_dir=tmp_path / "data")
    out = io.StringIO()
    sync_paths(index, [folder], settings=s, progress=out)
    lines = out.getvalue().splitlines()
    assert lines and all(line.startswith("indexing: ") for line in lines)
    assert "files" in lines[-1] and "passages" in lines[-1]


def test_a_page_of_navigation_only_is_counted_without_text_not_failed(folder, index, settings):
    write(folder / "toc.html", "<html><head><title>Contents</title></head><body><nav><a href='a.html'>Chapter 1</a>"
                               "</nav></body></html>")
    r = sync_paths(index, [folder], settings=settings, progress=None)
    assert (r.new, r.textless, r.failed) == (3, 1, [])
    assert ", 1 without text, 0 failed" in r.summary()
    again = sync_paths(index, [folder], settings=settings, progress=None)
    assert (again.unchanged, again.textless, again.passages_written) == (4, 0, 0)


def test_another_passage_size_splits_every_file_again(folder, index, tmp_path, monkeypatch):
    long = "\n\n".join(f"Paragraph {i} tells how setting number {i} of the widget works in plain words."
                       for i in range(40))
    write(folder / "long.md", f"# Long\n\n{long}\n")
    s = Settings.from_env(data_dir=tmp_path / "data")
    first = sync_paths(index, [folder], settings=s, progress=None)
    monkeypatch.setenv("CONVSEARCH_INGEST_PASSAGE_TOKENS", "64")
    small = Settings.from_env(data_dir=tmp_path / "data")
    r = sync_paths(index, [folder], settings=small, progress=None)
    assert r.changed == first.new and r.unchanged == 0  # every file split again, none read as unchanged
    assert len(index) > first.passages_written
    again = sync_paths(index, [folder], settings=small, progress=None)
    assert (again.unchanged, again.passages_written) == (4, 0)
    monkeypatch.delenv("CONVSEARCH_INGEST_PASSAGE_TOKENS")
    back = sync_paths(index, [folder], settings=Settings.from_env(data_dir=tmp_path / "data"), progress=None)
    assert back.passages_deleted > 0 and len(index) == first.passages_written  # the extra small passages are gone


def test_a_resplit_stopped_half_way_is_carried_on_by_the_next_run(tmp_path, index, monkeypatch):
    # a new splitter (here another passage size; a newer converter alike) makes every file due again; a run stopped
    # after a few files saves the manifest under the new splitter, and the files it did not reach stay due
    root = _many(tmp_path / "many", 9)
    monkeypatch.setenv("CONVSEARCH_INGEST_BATCH", "3")
    first = sync_paths(index, [root], settings=Settings.from_env(data_dir=tmp_path / "data"), progress=None)
    assert first.new == 9
    monkeypatch.setenv("CONVSEARCH_INGEST_PASSAGE_TOKENS", "64")
    s = Settings.from_env(data_dir=tmp_path / "data")
    assert _interrupted_sync(index, root, s, monkeypatch, at=2).changed == 3
    r = sync_paths(index, [root], settings=s, progress=None)
    assert (r.changed, r.unchanged) == (6, 3)  # before the fix: (0, 9), six files left as the old splitter made them
    again = sync_paths(index, [root], settings=s, progress=None)
    assert (again.unchanged, again.passages_written) == (9, 0)


def test_a_file_edited_in_one_place_re_embeds_only_the_passages_that_changed(tmp_path, monkeypatch):
    from convsearch.embed import HashEmbedder

    class Counting(HashEmbedder):
        texts: list[str] = []

        def embed_passages(self, texts):
            Counting.texts += list(texts)
            return super().embed_passages(texts)

    def manual(extra: str = "") -> str:
        # passages start at headings, so an edit inside one section leaves the others' passages as they were
        parts = ["# Manual"]
        for i in range(12):
            parts.append(f"## Setting {i}\n\nSetting number {i} of the widget changes its behaviour in detail. "
                         f"It is read at start-up from the file widget-{i}.conf.")
            if i == 3 and extra:
                parts.append(extra)
        return "\n\n".join(parts) + "\n"

    root = tmp_path / "kb"
    doc = write(root / "manual.md", manual())
    s = Settings.from_env(data_dir=tmp_path / "data")
    idx = LocalIndex(tmp_path / "data" / "index", embedder=Counting(64), ann_min=10**9)
    try:
        first = sync_paths(idx, [root], settings=s, progress=None)
        n = first.passages_written
        assert n >= 12 and len(Counting.texts) == n
        Counting.texts = []
        write(doc, manual("A brand new paragraph about the installer. " * 60))  # a long one: passages shift
        r = sync_paths(idx, [root], settings=s, progress=None)
        assert r.changed == 1 and r.passages_written > n  # every id after section 3 moved
        assert 1 <= len(Counting.texts) <= 3 and all("Setting 3" in t for t in Counting.texts)
        assert (first.passages_embedded, r.passages_embedded) == (n, len(Counting.texts))
        hit = idx.search_dense("widget-9.conf setting number 9", top_k=1)[0]
        assert "number 9" in hit.text
    finally:
        idx.close()
