"""A read-only index (a container image with a baked index, a read-only volume) is searched, never written.

tantivy's reader creates and locks ``.tantivy-meta.lock`` even to search, so on a read-only mount the index
could not be opened at all (exit 5, ``Failed to acquire Lockfile … ReadOnlyFilesystem``). Tests run as root,
where ``chmod`` denies nothing, so the real case is a read-only bind mount in a private mount namespace
(``unshare -m``: the mount is seen by the child only and goes away with it); those tests skip where that is not
allowed. The rest checks the same path without a mount: ``read_only=True`` (or a directory ``os.access`` says
is not writable) takes no lock in the index's directory and makes no writer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from convsearch.backends.local import LocalIndex
from convsearch.errors import BackendError
from convsearch.types import Document

pytestmark = pytest.mark.integration
Corpus = tuple[Document, ...]

_LOCKS = (".tantivy-meta.lock", ".tantivy-writer.lock")
# $0 is the directory made read-only; exec keeps the PID the command's own
_RO = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"'


def read_only(path: Path) -> tuple[str, ...]:
    """A command prefix that runs the rest with ``path`` mounted read-only (in a private mount namespace)."""
    return ("unshare", "-m", "sh", "-c", _RO, str(path))


@pytest.fixture(scope="module")
def can_mount() -> None:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root and unshare(1)")
    p = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"no private mount namespace here: {p.stderr.strip()}")


def build(data_dir: Path, corpus: Corpus) -> Path:
    """``corpus`` indexed under ``data_dir/index``, its lock files removed (to see whether any comes back)."""
    idx = LocalIndex(data_dir / "index")
    idx.add(corpus)
    idx.close()
    del idx
    tdir = data_dir / "index" / "tantivy"
    for name in _LOCKS:
        (tdir / name).unlink(missing_ok=True)
    return tdir


def test_cli_searches_and_refuses_to_write_a_read_only_index(tmp_path: Path, can_mount: None, corpus: Corpus) -> None:
    data = tmp_path / "data"
    build(data, corpus)
    ro = read_only(data)
    p = subprocess.run([*ro, sys.executable, "-c", "import sys; open(sys.argv[1] + '/x', 'w')", str(data)],
                       capture_output=True, text=True)
    assert p.returncode != 0 and "Read-only file system" in p.stderr  # the mount really is read-only

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("CONVSEARCH_")}
        full_env.update({"PYTHONUTF8": "1", "CONVSEARCH_DENSE": "off"})
        return subprocess.run([*ro, sys.executable, "-m", "convsearch.cli", *args, "--data-dir", str(data)],
                              cwd=tmp_path, env=full_env, capture_output=True, text=True, timeout=120)

    p = cli("search", "AnySearch 价格", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"][0]["id"] == "zh-any-price"
    (tmp_path / "more.jsonl").write_text(json.dumps({"id": "new", "text": "新文档"}, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    p = cli("index", str(tmp_path / "more.jsonl"))
    assert p.returncode == 2 and "Traceback" not in p.stderr  # an output that cannot be written: bad input
    assert "read-only" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_server_searches_an_index_on_a_read_only_mount(tmp_path: Path, can_mount: None, corpus: Corpus) -> None:
    pytest.importorskip("fastapi")
    import httpx

    from convsearch.testing.live_server import LiveServer

    data = tmp_path / "data"
    build(data, corpus)
    # the index read-only, the data dir around it writable (the SQLite history store lives there)
    with LiveServer(data, prefix=read_only(data / "index")) as srv:
        health = httpx.get(srv.url + "/healthz", timeout=10).json()
        assert (health["index"]["status"], health["index"]["documents"]) == ("ok", len(corpus))
        r = httpx.post(srv.url + "/v1/search", json={"query": "AnySearch 价格", "session_id": "s1"},
                       timeout=30)
        assert r.status_code == 200, r.text
        assert r.json()["results"][0]["id"] == "zh-any-price"
        assert srv.stderr_text().count("Lockfile") == 0


def test_read_only_opens_no_lock_and_no_writer(tmp_path: Path, corpus: Corpus) -> None:
    tdir = build(tmp_path, corpus)
    idx = LocalIndex(tmp_path / "index", read_only=True)
    assert [h.id for h in idx.search("NovaDB 价格", top_k=1)] == ["zh-nova-price"]
    assert not any((tdir / n).exists() for n in _LOCKS)  # tantivy's locks went to the private view
    assert not idx.capabilities.writable
    with pytest.raises(BackendError, match="read-only"):
        idx.add(corpus[:1])
    with pytest.raises(BackendError, match="read-only"):
        idx.delete(["zh-nova-price"])
    view = Path(idx._index_dir)
    idx.close()
    assert not view.exists()  # close() removes the private view
    assert idx.get("zh-nova-price") is not None  # a later search opens through a new one
    assert not any((tdir / n).exists() for n in _LOCKS)
    idx.close()
    idx.close()  # idempotent


def test_an_unwritable_directory_is_opened_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     corpus: Corpus) -> None:
    tdir = build(tmp_path, corpus)
    real = os.access
    monkeypatch.setattr("convsearch.backends.local.os.access",
                        lambda p, mode: False if Path(p) == tdir and mode & os.W_OK else real(p, mode))
    idx = LocalIndex(tmp_path / "index", create=False)
    assert idx.read_only and len(idx) == len(corpus)
    assert not any((tdir / n).exists() for n in _LOCKS)
    writable = LocalIndex(tmp_path / "index", read_only=False)
    assert not writable.read_only and writable.capabilities.writable


def test_the_private_view_goes_with_the_index(tmp_path: Path, corpus: Corpus) -> None:
    build(tmp_path, corpus)
    idx = LocalIndex(tmp_path / "index", read_only=True)
    view = Path(idx._index_dir)
    assert view.is_dir() and view != tmp_path / "index" / "tantivy"
    idx.close()  # at close, not whenever the garbage collector gets to it (a leak under load in make test)
    assert not view.exists()
    # never closed: removed by the time the process exits (weakref.finalize runs at exit), whatever the garbage
    # collector did meanwhile; in a process of its own, so no other test's references keep the object alive
    import subprocess
    import sys

    code = ("import sys; from convsearch.backends.local import LocalIndex; "
            "idx = LocalIndex(sys.argv[1], read_only=True); print(idx._index_dir); idx.get('x')")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "index")], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    view = Path(p.stdout.strip())
    assert view.name.startswith("convsearch-ro-") and not view.exists()

