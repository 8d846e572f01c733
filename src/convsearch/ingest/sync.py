"""Keep a backend in step with folders of files: walk, skip what is unchanged, replace what changed, prune what left.

One manifest per indexed root (a folder, or a single file) records, per file: its size, mtime, content hash, the
document id and its passage ids. A run:

1. walks every root (recursively; dot-directories are not entered; a symbolic link loop or an unreadable folder is a
   failed entry, never the end of the run) and stats each file;
2. skips a file whose size and mtime match its manifest entry, without reading it; a file whose bytes hash to the
   recorded hash is unchanged too (only its stat is updated);
3. converts and splits every new or changed file (``convert``, ``passages``) and hands the passages to the backend in
   batches (``IngestSettings.batch``); after each committed batch, a changed file's passages that are gone are deleted
   and the manifest is replaced atomically: an interrupted run keeps every whole batch, and the next run carries on;
   a file of more passages than a batch is committed a batch at a time, the manifest recording it as partial (``done``:
   how many of its passages are stored) until its last one: a rerun resumes such a file at that passage while its
   bytes still hash the same (passage ids are stable, so only the rest is embedded), and replaces it whole if not;
4. deletes the passages of files that left the root (unless ``prune=False``).

A file that cannot be read or converted is one failed entry with its reason; its earlier passages, if any, stay.
Nothing is written when nothing changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat as stat_mod
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from ..errors import DataFileError
from ..types import Document
from .settings import IngestSettings

MANIFEST_VERSION = 1
RECORD_KINDS = {".jsonl": "jsonl", ".ndjson": "jsonl"}


@dataclass
class Failure:
    """A file that was not indexed: its path, why, and the 1-based line where known (``path:line: reason``)."""

    path: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}" if self.line is not None else f"{self.path}: {self.reason}"


@dataclass
class SyncReport:
    """What one sync did, per kind of file; ``failed`` names each failed file with its reason."""

    scanned: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    textless: int = 0  # converted without error but nothing to index (a page of navigation only, a table of contents)
    failed: list[Failure] = field(default_factory=list)
    passages_written: int = 0
    passages_deleted: int = 0
    # of those written, how many the embedder embedded (the others kept a stored vector); None: no dense side
    passages_embedded: int | None = None
    interrupted: bool = False
    seconds: float = 0.0
    unwalked: list[str] = field(default_factory=list)  # folders (relative, "a/b/") that could not be listed
    linked: int = 0  # symbolic links (and bind mounts) to a folder or file already walked: left out
    # folders ("a/b/") and files left out by rule (a Sphinx site's "_sources/") or as links to what was walked
    left_out: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted

    def summary(self) -> str:
        """The one summary line."""
        textless = f", {self.textless} without text" if self.textless else ""
        linked = f", {self.linked} links to what is indexed already" if self.linked else ""
        return (f"scanned {self.scanned} files: {self.new} new, {self.changed} changed, {self.unchanged} unchanged, "
                f"{self.removed} removed, {self.skipped} skipped (type){textless}{linked}, {len(self.failed)} failed; "
                f"{self.passages_written} passages written, {self.passages_deleted} deleted in {self.seconds:.1f} s")

    def as_dict(self) -> dict[str, Any]:
        return {"scanned": self.scanned, "new": self.new, "changed": self.changed, "unchanged": self.unchanged,
                "removed": self.removed, "skipped": self.skipped, "textless": self.textless, "linked": self.linked,
                "failed": [{"path": f.path, "reason": f.reason, "line": f.line} for f in self.failed],
                "passages_written": self.passages_written, "passages_deleted": self.passages_deleted,
                "passages_embedded": self.passages_embedded, "interrupted": self.interrupted,
                "seconds": round(self.seconds, 3)}


class SyncInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a sync: ``report`` says what was committed before it."""

    def __init__(self, report: SyncReport) -> None:
        super().__init__(report.summary())
        self.report = report


# --- the manifest ------------------------------------------------------------------------------------------------
def manifest_dir(backend: Any, data_dir: Path) -> Path:
    """Where a backend's manifests live: inside the local index (so deleting the index deletes them), else in the
    data dir under the backend's name and address."""
    path = getattr(backend, "path", None)
    if path is not None and getattr(backend, "name", "") == "local":
        return Path(path) / "manifests"
    where = str(getattr(backend, "uri", "") or getattr(backend, "name", "backend"))
    return data_dir / "manifests" / f"{getattr(backend, 'name', 'backend')}-{_short_hash(where)}"


def _short_hash(s: str) -> str:
    return hashlib.sha1(s.encode("utf-8", "surrogateescape")).hexdigest()[:16]


class Manifest:
    """path (relative to the root) → {size, mtime_ns, sha256, doc_id, n | ids} for one root; a file committed only in
    part also has ``done`` (its first ``done`` passages are stored; ``n | ids`` name them all) and ``new`` (true when
    it had no earlier complete entry)."""

    def __init__(self, path: Path, root: Path, splitter: str = "") -> None:
        self.path = path
        self.root = str(root)
        self.splitter = splitter
        self.files: dict[str, dict[str, Any]] = {}
        self.dirty = False
        # passages made by another splitter (another CONVSEARCH_INGEST_PASSAGE_TOKENS, a newer convsearch): every file
        # is split again, and what its old passages had beyond the new ones is deleted
        self.resplit = False
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError):  # a torn or foreign file: start over (re-indexing upserts by id)
            return
        if isinstance(raw, dict) and raw.get("version") == MANIFEST_VERSION and isinstance(raw.get("files"), dict):
            self.files = raw["files"]
            self.resplit = raw.get("splitter", "") != splitter
            # each entry says so until its file is split again: a run stopped half-way saves the manifest under the
            # new splitter, and the files it did not reach stay due for the next run
            if self.resplit:
                for entry in self.files.values():
                    entry["resplit"] = True
            self.dirty = self.resplit

    @staticmethod
    def current(entry: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
        """True when ``entry`` records a whole file split by this manifest's splitter (an unchanged file with such
        an entry is not read again)."""
        return entry is not None and "done" not in entry and not entry.get("resplit")

    @staticmethod
    def ids(entry: dict[str, Any]) -> list[str]:
        if "ids" in entry:
            return list(entry["ids"])
        return [f"{entry['doc_id']}#{i}" for i in range(int(entry.get("n", 0)))]

    def save(self) -> None:
        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        body = json.dumps({"version": MANIFEST_VERSION, "root": self.root, "splitter": self.splitter,
                           "files": self.files}, ensure_ascii=False, separators=(",", ":"))
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self.dirty = False


# --- walking -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Found:
    path: Path
    rel: str
    size: int
    mtime_ns: int
    kind: str | None  # the converter kind its name selects (``kind_of``); None: a type the index skips


# files that mark a folder as a built Sphinx site (its search index, its intersphinx inventory)
_SPHINX_MARKS = frozenset({"searchindex.js", "objects.inv"})


def walk(root: Path, report: SyncReport) -> Iterator[Found]:
    """Every regular file under ``root`` (or ``root`` itself), in a stable order, each once. The tree is walked
    first without following symbolic links; then each link, in the order met: one to a folder or file already
    walked (an alias, as /usr/share/doc holds hundreds) is counted in ``report.linked`` and left out, one to
    something new is followed, and one to a folder it lies in is a failed entry (a loop). Dot-directories are
    not entered, nor a built Sphinx site's ``_sources`` (each page's reST source as ``.rst.txt``: the same text
    as the page, with its markup, cited as ".. _tut-venv:" ahead of the page itself)."""
    try:
        st = root.stat()
    except OSError as exc:
        raise DataFileError(str(root), _os_reason(exc)) from exc
    if not stat_mod.S_ISDIR(st.st_mode):
        yield Found(root, root.name, st.st_size, st.st_mtime_ns, kind_of(root))
        return
    seen_dirs = {(st.st_dev, st.st_ino)}
    seen_files: set[tuple[int, int]] = set()
    links: list[tuple[Path, str]] = []  # (path, rel), followed once the tree itself is walked
    yield from _walk_tree(root, "", report, seen_dirs, seen_files, links)
    for path, rel in links:  # (grows while a followed folder holds links of its own)
        try:
            est = path.stat()
        except OSError as exc:
            report.failed.append(Failure(str(path), _link_reason(exc)))
            continue
        key = (est.st_dev, est.st_ino)
        if stat_mod.S_ISDIR(est.st_mode):
            target, parent = os.path.realpath(path), os.path.realpath(path.parent)
            if parent == target or parent.startswith(target.rstrip(os.sep) + os.sep):
                report.failed.append(Failure(str(path), "symbolic link loop (a folder it lies in)"))
            elif key in seen_dirs:
                report.linked += 1
                report.left_out.append(rel + "/")  # what an older run indexed through it is pruned
            else:
                seen_dirs.add(key)
                yield from _walk_tree(path, rel + "/", report, seen_dirs, seen_files, links)
        elif stat_mod.S_ISREG(est.st_mode):
            if key in seen_files:
                report.linked += 1
                report.left_out.append(rel)
            else:
                seen_files.add(key)
                yield Found(path, rel, est.st_size, est.st_mtime_ns, kind_of(path))


def _walk_tree(top: Path, top_rel: str, report: SyncReport, seen_dirs: set[tuple[int, int]],
               seen_files: set[tuple[int, int]], links: list[tuple[Path, str]]) -> Iterator[Found]:
    """``walk``'s pass over one tree without following links: its files (the keys of those of a type the index reads
    added to ``seen_files``), its folders (``seen_dirs``; one met again through a bind mount counts as linked), and
    the symbolic links it holds appended to ``links``."""
    stack = [(top, top_rel)]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            report.failed.append(Failure(str(folder), _os_reason(exc)))
            report.unwalked.append(prefix)
            continue
        files: list[Found] = []
        folder_links: list[tuple[Path, str]] = []
        sphinx = any(e.name in _SPHINX_MARKS for e in entries)
        for e in entries:
            rel = f"{prefix}{e.name}"
            if sphinx and e.name == "_sources":
                report.left_out.append(rel + "/")  # what an older run indexed there is pruned
                continue
            if e.is_symlink():
                folder_links.append((Path(e.path), rel))
                continue
            try:
                est = e.stat(follow_symlinks=False)
            except OSError as exc:
                report.failed.append(Failure(str(Path(folder) / e.name), _os_reason(exc)))
                continue
            if stat_mod.S_ISDIR(est.st_mode):
                if e.name.startswith("."):
                    continue
                key = (est.st_dev, est.st_ino)
                if key in seen_dirs:
                    report.linked += 1
                    report.left_out.append(rel + "/")
                    continue
                seen_dirs.add(key)
                stack.append((Path(e.path), rel + "/"))
            elif stat_mod.S_ISREG(est.st_mode):
                f = Found(Path(e.path), rel, est.st_size, est.st_mtime_ns, kind_of(Path(e.name)))
                if f.kind is not None:  # (a link "README.md" to "README" is the document)
                    seen_files.add((est.st_dev, est.st_ino))
                files.append(f)
        links.extend(reversed(folder_links))
        yield from reversed(files)


def _link_reason(exc: OSError) -> str:
    return "symbolic link loop" if exc.errno == 40 else "broken symbolic link"


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "cannot read (permission denied)"
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    return f"cannot read ({exc.strerror or exc})"


def kind_of(path: Path) -> str | None:
    """The converter kind of ``path`` by suffix (``jsonl`` for records), None for a type the index skips."""
    suffix = path.suffix.lower()
    if suffix in RECORD_KINDS:
        return RECORD_KINDS[suffix]
    from .convert import kind_of as converter_kind

    return converter_kind(path)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def splitter_id(passage_tokens: int) -> str:
    """What made a manifest's passages: the splitter's and the converters' versions and the budget (a change
    converts and splits every file again)."""
    from .convert import CONVERTER_VERSION
    from .passages import SPLITTER_VERSION

    return f"{SPLITTER_VERSION}/{passage_tokens}/c{CONVERTER_VERSION}"


def doc_id_for(path: Path) -> str:
    """A stable document id: the file's stem and a hash of its resolved path."""
    stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in path.stem)[:48] or "doc"
    return f"{stem}-{_short_hash(str(path.resolve()))[:10]}"


def passages_of(path: Path, kind: str, *, max_bytes: int, passage_tokens: int) -> tuple[str, list[Document]]:
    """(document id, passages) of one file; ConvertError / DataFileError when it cannot be read."""
    if kind == "jsonl":
        from .records import read_documents

        docs = []
        for d in read_documents(path):
            md = dict(d.metadata)
            md.pop("path", None)
            md.setdefault("source", str(path))
            docs.append(Document(d.id, d.text, d.title, d.url, d.date, d.lang, md))
        return doc_id_for(path), docs
    from .convert import convert
    from .passages import split
    from .types import NoTextError

    try:
        conv = convert(path, max_bytes=max_bytes)
    except NoTextError:
        return doc_id_for(path), []
    doc_id = str(conv.metadata.get("id") or doc_id_for(path))
    docs = split(conv, source=str(path), doc_id=doc_id, max_tokens=passage_tokens,
                 url=str(conv.metadata.get("url") or ""), date=conv.metadata.get("date") or None)
    return doc_id, docs


# --- progress ----------------------------------------------------------------------------------------------------
class Progress:
    """Files, passages, embedding rate and time left: one tqdm bar on a terminal, else a line every ``every_s``
    seconds on ``stream`` (None: silent). It moves when files are done (``advance``) and, while a batch is being
    added (``adding``), with every chunk of passages the embedder reports: an index with vectors spends minutes per
    batch there.

    Time left, once 1% of the bytes are converted: the files not yet read at the rate files were read, converted
    and committed so far (seconds outside embedding per byte), plus, when embedding has been heard, the passages
    still to embed (the passages per byte seen so far, times the bytes left, plus the rest of this batch) at the
    embedding rate. Before that: "time left unknown"."""

    def __init__(self, total_files: int, total_bytes: int, *, stream: Any = sys.stderr, every_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total_files, self.total_bytes = total_files, total_bytes
        self.files = self.bytes = self.passages = 0  # committed (or failed, or unchanged)
        self.batch = self.batch_bytes = self.in_batch = 0  # the batch being added: passages, bytes, embedded so far
        self.embedded = 0  # passages embedded over the run
        self.embed_s = 0.0  # seconds spent embedding: from a batch's start to its last chunk heard
        self._mark = 0.0
        self.clock = clock
        self.t0 = self.last = clock()
        self.stream, self.every_s = stream, every_s
        self.bar = None
        if stream is not None and getattr(stream, "isatty", lambda: False)():
            from tqdm import tqdm

            self.bar = tqdm(total=total_files, unit="file", desc="indexing", file=stream, leave=False)

    def advance(self, files: int, nbytes: int, passages: int) -> None:
        """``files`` more are done (``nbytes`` of them), ``passages`` more committed."""
        self.files += files
        self.bytes += nbytes
        self.passages += passages
        self._show(self.clock(), refresh=False)
        if self.bar is not None:
            self.bar.update(files)  # (drawn with the postfix just set)

    @contextmanager
    def adding(self, passages: int, nbytes: int) -> Iterator[None]:
        """Around ``backend.add`` of a batch of ``passages`` from files of ``nbytes``: each chunk the embedder
        reports moves the progress (``convsearch.embed.base.listen_embedding``)."""
        from ..embed.base import listen_embedding

        self.batch, self.batch_bytes, self.in_batch = passages, nbytes, 0
        self._mark = self.clock()
        try:
            with listen_embedding(self.heard):
                yield
        finally:
            self.batch = self.batch_bytes = self.in_batch = 0

    def heard(self, n: int) -> None:
        """The embedder finished ``n`` more passages of the batch being added."""
        now = self.clock()
        self.embed_s += now - self._mark
        self._mark = now
        self.embedded += n
        self.in_batch += n
        self._show(now, refresh=True)

    def rate(self) -> float | None:
        """Passages embedded per second of embedding (None before any was heard)."""
        return self.embedded / self.embed_s if self.embedded and self.embed_s > 0 else None

    def line(self, now: float) -> str:
        """The line written when the stream is not a terminal."""
        parts = [f"indexing: {self.files}/{self.total_files} files", f"{self.passages} passages written"]
        if self.batch:
            parts.append(f"{min(self.in_batch, self.batch)} of {self.batch} embedded in this batch")
        rate = self.rate()
        if rate is not None:
            parts.append(f"embedding {rate:.1f} passages/s")
        else:
            parts.append(f"{self.passages / max(now - self.t0, 1e-6):.1f} passages/s")
        return ", ".join(parts) + f", {self._left(now)}"

    def _show(self, now: float, *, refresh: bool) -> None:
        if self.bar is not None:
            rate = self.rate()
            post = [f"{self.passages} passages written"]
            if self.batch:
                post.append(f"{min(self.in_batch, self.batch)}/{self.batch} embedded")
            post.append(f"{rate:.1f}/s embedding" if rate is not None else
                        f"{self.passages / max(now - self.t0, 1e-6):.0f}/s")
            post.append(self._left(now).replace("about ", "").replace("time left unknown", "? left"))
            self.bar.set_postfix_str(", ".join(post), refresh=refresh)
        elif self.stream is not None and now - self.last >= self.every_s:
            self.last = now
            self.stream.write(self.line(now) + "\n")
            self.stream.flush()

    def _left(self, now: float) -> str:
        read = self.bytes + self.batch_bytes  # converted: committed, or in the batch being added
        if not self.total_bytes or read < 0.01 * self.total_bytes:
            return "time left unknown"
        bytes_left = max(self.total_bytes - read, 0)
        other_s = max(now - self.t0 - self.embed_s, 0.0)  # reading, converting, committing
        left = other_s / read * bytes_left
        rate = self.rate()
        if rate is not None:
            per_byte = (self.passages + self.batch) / read
            left += (per_byte * bytes_left + max(self.batch - self.in_batch, 0)) / rate
        return f"about {_duration(left)} left"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _duration(s: float) -> str:
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


# --- the sync ----------------------------------------------------------------------------------------------------
@dataclass
class _Pending:
    manifest: Manifest
    rel: str
    entry: dict[str, Any]
    old_ids: list[str]
    docs: list[Document]
    nbytes: int
    status: str  # new | changed
    ids: list[str]  # every passage id of the file (``docs`` may be its tail: the first ``start`` are stored)
    start: int = 0

    def stale(self) -> list[str]:
        """The file's earlier passage ids that its new passages do not reuse (to delete once they are stored)."""
        keep = set(self.ids)
        return [i for i in self.old_ids if i not in keep]

    def count(self, report: SyncReport) -> None:
        """The file, wholly stored, counted as new or changed."""
        if self.status == "new":
            report.new += 1
        else:
            report.changed += 1


def sync_paths(backend: Any, paths: Sequence[Path], *, settings: Any, prune: bool = True,
               progress: Any = sys.stderr, on_failed: Callable[[Failure], None] | None = None) -> SyncReport:
    """Bring ``backend`` in step with ``paths`` (folders or files). Ctrl-C raises SyncInterrupted after the last
    whole batch (its report says what was done). A path that does not exist is an InputError before anything is
    written."""
    cfg = IngestSettings.of(settings)
    max_bytes = int(cfg.max_mb * 2**20)
    report = SyncReport()
    t0 = time.monotonic()
    for p in paths:
        if not os.path.lexists(p):
            raise DataFileError(str(p), "no such file or directory")
    mdir = manifest_dir(backend, Path(settings.data_dir))
    empty = len(backend) == 0  # a manifest over an empty store is stale (the index was deleted): start over
    roots: list[tuple[Path, Manifest, list[Found]]] = []
    for p in paths:
        root = Path(os.path.abspath(p))
        man = Manifest(mdir / f"{_short_hash(str(root))}.json", root, splitter=splitter_id(cfg.passage_tokens))
        if empty and man.files:
            man.files, man.dirty = {}, True
        found = list(walk(root, report))
        roots.append((root, man, found))
    todo: list[tuple[Manifest, Found, str]] = []
    for root, man, found in roots:
        for f in found:
            report.scanned += 1
            kind = f.kind
            if kind is None:
                if root.is_file():  # a file named on the command line: say why it is not indexed
                    _fail(report, on_failed, f.path, f"unsupported file type {f.path.suffix or '(none)'} (index "
                          ".html, .pdf, .docx, .md, .txt, .jsonl; the first five also gzip-compressed, .gz)")
                else:
                    report.skipped += 1
                continue
            e = man.files.get(f.rel)
            if Manifest.current(e) and e.get("size") == f.size and e.get("mtime_ns") == f.mtime_ns:
                report.unchanged += 1
                continue
            todo.append((man, f, kind))
    bar = Progress(len(todo), sum(f.size for _, f, _ in todo), stream=progress, every_s=cfg.progress_s)
    pending: list[_Pending] = []
    queued = 0
    seen_rel: dict[int, set[str]] = {id(man): {f.rel for f in found} for _, man, found in roots}
    try:
        for man, f, kind in todo:
            old = man.files.get(f.rel)
            if f.size > max_bytes:
                _fail(report, on_failed, f.path, f"over the size limit ({f.size / 2**20:.0f} MB > {cfg.max_mb:g} MB; "
                                                 "CONVSEARCH_INGEST_MAX_MB)")
                bar.advance(1, f.size, 0)
                continue
            try:
                digest = _sha256(f.path)
            except OSError as exc:
                _fail(report, on_failed, f.path, _os_reason(exc))
                bar.advance(1, f.size, 0)
                continue
            if old is not None and Manifest.current(old) and old.get("sha256") == digest:
                old.update(size=f.size, mtime_ns=f.mtime_ns)
                man.dirty = True
                report.unchanged += 1
                bar.advance(1, f.size, 0)
                continue
            try:
                doc_id, docs = passages_of(f.path, kind, max_bytes=max_bytes, passage_tokens=cfg.passage_tokens)
            except DataFileError as exc:
                _fail(report, on_failed, f.path, exc.problem, exc.line)
                bar.advance(1, f.size, 0)
                continue
            except (OSError, UnicodeError, ValueError) as exc:  # a converter's library gave up in its own words
                _fail(report, on_failed, f.path, f"cannot convert ({type(exc).__name__}: {exc})"[:300])
                bar.advance(1, f.size, 0)
                continue
            if not docs:  # nothing but navigation: recorded (not read again while unchanged), its old passages go
                report.textless += 1
            entry: dict[str, Any] = {"size": f.size, "mtime_ns": f.mtime_ns, "sha256": digest, "doc_id": doc_id}
            ids = [d.id for d in docs]
            if kind == "jsonl" or ids != [f"{doc_id}#{i}" for i in range(len(ids))]:
                entry["ids"] = ids
            else:
                entry["n"] = len(ids)
            status, start = ("changed" if old else "new"), 0
            if old is not None and "done" in old:  # committed in part by an interrupted run
                status = "new" if old.get("new") else "changed"
                if not old.get("resplit") and old.get("sha256") == digest and Manifest.ids(old) == ids:
                    start = min(max(int(old["done"]), 0), len(ids))  # the same passages: carry on where it stopped
            todo_docs = docs[start:]
            item = _Pending(man, f.rel, entry, Manifest.ids(old) if old else [], todo_docs, f.size, status, ids, start)
            if len(todo_docs) > cfg.batch:  # a big file: a batch at a time, recorded as partial after each
                _flush(backend, pending, report, bar)
                pending, queued = [], 0
                _add_in_slices(backend, item, cfg.batch, report, bar)
                continue
            pending.append(item)
            queued += len(todo_docs)
            if queued >= cfg.batch:
                _flush(backend, pending, report, bar)
                pending, queued = [], 0
        _flush(backend, pending, report, bar)
        pending = []
        if prune:
            dropped: list[str] = []
            for root, man, _found in roots:
                gone = [rel for rel in man.files if rel not in seen_rel[id(man)] and _gone(root, rel, report)]
                for rel in gone:
                    dropped += Manifest.ids(man.files.pop(rel))
                if gone:
                    man.dirty = True
                    report.removed += len(gone)
            ids = _unclaimed(dropped, [man for _, man, _ in roots], mdir)
            if ids:
                report.passages_deleted += int(backend.delete(ids))
        for _root, man, _found in roots:
            man.save()
    except KeyboardInterrupt:
        report.interrupted = True
        for _root, man, _found in roots:
            man.save()
        _finish(report, backend, bar, t0)
        raise SyncInterrupted(report) from None
    finally:
        bar.close()
    _finish(report, backend, bar, t0)
    return report


def _unclaimed(ids: list[str], manifests: list[Manifest], mdir: Path) -> list[str]:
    """Of the passage ``ids`` of files that left, those no file still indexed lists (in ``manifests`` or another
    root's manifest in ``mdir``): two paths can name one document (a file and a link to it under the same name
    in an index built before links were walked once, or two files with one front-matter ``id``), and the passages
    of the one that stays must stay too."""
    if not ids:
        return []
    claimed = {i for man in manifests for e in man.files.values() for i in Manifest.ids(e)}
    ours = {man.path for man in manifests}
    for path in sorted(mdir.glob("*.json")) if mdir.is_dir() else ():
        if path not in ours:
            claimed.update(i for e in Manifest(path, Path()).files.values() for i in Manifest.ids(e))
    return [i for i in ids if i not in claimed]


def _finish(report: SyncReport, backend: Any, bar: Progress, t0: float) -> None:
    report.seconds = time.monotonic() - t0
    if getattr(backend, "embedder", None) is not None:
        report.passages_embedded = bar.embedded
    bar.close()


def _gone(root: Path, rel: str, report: SyncReport) -> bool:
    """True when the manifest's ``rel`` is no longer under ``root`` or was left out (a folder by rule, a link to what
    the walk had met), not when its folder could not be read."""
    if any(rel.startswith(u) for u in report.unwalked):
        return False
    if any(rel.startswith(x) if x.endswith("/") else rel == x for x in report.left_out):
        return True
    try:
        os.stat(root / rel if root.is_dir() else root)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def _fail(report: SyncReport, on_failed: Callable[[Failure], None] | None, path: Path, reason: str,
          line: int | None = None) -> None:
    f = Failure(str(path), reason, line)
    report.failed.append(f)
    if on_failed is not None:
        on_failed(f)


def _flush(backend: Any, pending: list[_Pending], report: SyncReport, bar: Progress) -> None:
    """Commit the pending files' passages, then delete what changed files lost, then record them."""
    if not pending:
        return
    docs = [d for p in pending for d in p.docs]
    if docs:
        with bar.adding(len(docs), sum(p.nbytes for p in pending)):
            _add(backend, docs, [i for p in pending for i in p.old_ids])
    report.passages_written += len(docs)
    stale = [i for p in pending for i in p.stale()]
    if stale:
        report.passages_deleted += int(backend.delete(stale))
    for p in pending:
        p.manifest.files[p.rel] = p.entry
        p.manifest.dirty = True
        if p.ids:  # (a file without text is counted as such)
            p.count(report)
        bar.advance(1, p.nbytes, len(p.docs))
    for man in {id(p.manifest): p.manifest for p in pending}.values():
        man.save()


def _add(backend: Any, docs: list[Document], old_ids: list[str]) -> None:
    """``backend.add(docs)``; a backend that can (the local index: ``reuses_vectors``) is also handed the files'
    earlier passage ids, whose vectors serve the new passages with the same text instead of the embedder."""
    if old_ids and getattr(backend, "reuses_vectors", False):
        backend.add(docs, reuse=old_ids)
    else:
        backend.add(docs)


def _add_in_slices(backend: Any, p: _Pending, size: int, report: SyncReport, bar: Progress) -> None:
    """Commit one file's passages ``p.docs`` (its passages from ``p.start`` on) ``size`` at a time. After each slice
    its manifest entry is saved as partial (``done``), after the last as complete; what a changed file's old passages
    had beyond the new ones is deleted after the first slice. Ctrl-C inside ``backend.add`` after some of the slice
    was committed (``AddInterrupted.written``) records those too before it is raised again."""
    stale = p.stale()
    total, sent, done_bytes = len(p.docs), 0, 0
    while sent < total:
        part = p.docs[sent:sent + size]
        nbytes = p.nbytes * (sent + len(part)) // total - done_bytes
        stop: KeyboardInterrupt | None = None
        try:
            with bar.adding(len(part), nbytes):
                _add(backend, part, p.old_ids)
        except KeyboardInterrupt as exc:
            written = min(int(getattr(exc, "written", 0) or 0), len(part))
            if not written:
                raise
            stop, part = exc, part[:written]
            nbytes = p.nbytes * (sent + len(part)) // total - done_bytes
        sent += len(part)
        done_bytes += nbytes
        report.passages_written += len(part)
        if stale:
            report.passages_deleted += int(backend.delete(stale))
            stale = []
        entry = dict(p.entry)
        last = sent == total
        if not last:
            entry["done"] = p.start + sent
            if p.status == "new":
                entry["new"] = True
        p.manifest.files[p.rel] = entry
        p.manifest.dirty = True
        p.manifest.save()
        bar.advance(1 if last else 0, nbytes, len(part))
        if last:
            p.count(report)
        if stop is not None:
            raise stop


__all__ = ["Failure", "Manifest", "SyncInterrupted", "SyncReport", "doc_id_for", "kind_of", "manifest_dir",
           "passages_of", "sync_paths", "walk"]

