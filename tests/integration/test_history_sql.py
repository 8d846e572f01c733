"""The SQL history store on real databases: the shared contract on SQLite and PostgreSQL, Alembic
migrations, and faults (a locked SQLite file, an unreachable server, an unreadable file)."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, event, inspect

from convsearch import InMemoryBackend, Settings, search_with_context
from convsearch.errors import ConfigError, HistoryUnavailable
from convsearch.history import Conversation, Scope, open_store
from convsearch.history.schema import VERSION_TABLE, metadata
from convsearch.history.sql import SQLITE_FILE, SqlStore, normalize_url
from convsearch.history.testing import HistoryStoreContract

pytestmark = pytest.mark.integration

A = Scope("acme", "bot", "s1")
TABLES = {"cs_messages", "cs_summaries", "cs_results", "cs_facts", VERSION_TABLE}


class TestSqliteStore(HistoryStoreContract):
    @pytest.fixture
    def store(self, tmp_path):
        s = SqlStore(f"sqlite:///{tmp_path / SQLITE_FILE}")
        yield s
        s.close()


class TestPostgresStore(HistoryStoreContract):
    @pytest.fixture
    def store(self, pg_url):
        s = SqlStore(pg_url)
        yield s
        s.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / SQLITE_FILE}"
    return request.getfixturevalue("pg_url")


# --- migrations -------------------------------------------------------------------------------------

def test_open_migrates_to_head_and_the_schema_matches_the_models(db_url):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    store = SqlStore(db_url)
    assert store.migrate() == "0001"
    assert store.migrate() == "0001"  # idempotent
    with store.engine.connect() as conn:
        assert TABLES <= set(inspect(conn).get_table_names())
        ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE, "compare_type": True})
        assert compare_metadata(ctx, metadata) == []
    store.close()


def test_downgrade_to_base_and_back(db_url):
    from alembic import command
    from alembic.config import Config

    store = SqlStore(db_url)
    store.append(A, {"role": "user", "content": "hi"})
    with store.engine.connect() as conn:
        with conn.begin():
            cfg = Config()
            cfg.set_main_option("script_location", "convsearch.history:migrations")
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "base")
        assert not (TABLES - {VERSION_TABLE}) & set(inspect(conn).get_table_names())
    store.close()
    again = SqlStore(db_url)
    assert again.messages(A) == []
    again.close()


def test_many_processes_may_open_a_fresh_database_at_once(db_url):
    stores: list[SqlStore] = []
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            s = SqlStore(db_url, timeout=10)
            s.append(A, {"role": "user", "content": "hello"}, message_id="same")
            stores.append(s)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert [m.id for m in stores[0].messages(A)] == ["same"]
    for s in stores:
        s.close()


def test_sqlite_lives_under_the_data_dir_in_wal_mode(tmp_path):
    store = open_store(Settings(data_dir=tmp_path / "data"))
    store.append(A, {"role": "user", "content": "hi"})
    path = tmp_path / "data" / SQLITE_FILE
    assert path.is_file()
    with sqlite3.connect(path) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_settings_db_url_wins_over_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVSEARCH_DB_URL", f"sqlite:///{tmp_path / 'elsewhere.db'}")
    store = open_store(Settings.from_env(data_dir=tmp_path / "data"))
    store.append(A, {"role": "user", "content": "hi"})
    assert (tmp_path / "elsewhere.db").is_file() and not (tmp_path / "data" / SQLITE_FILE).exists()
    store.close()


@pytest.mark.parametrize("url,driver", [("postgresql://u:p@h/db", "postgresql+psycopg"),
                                        ("postgres://u:p@h/db", "postgresql+psycopg"),
                                        ("postgresql+psycopg://u:p@h/db", "postgresql+psycopg"),
                                        ("sqlite:///x.db", "sqlite")])
def test_urls_are_normalised_to_psycopg3(url, driver):
    assert normalize_url(url).drivername == driver


@pytest.mark.parametrize("url,match", [("mysql://u@h/db", "SQLite and PostgreSQL"),
                                       ("postgresql+psycopg2://u@h/db", "psycopg 3"),
                                       ("not a url", "not a database URL")])
def test_unsupported_urls_are_config_errors(url, match):
    with pytest.raises(ConfigError, match=match):
        SqlStore(url)


def test_the_password_never_shows(tmp_path):
    store = SqlStore("postgresql://app:hunter2@127.0.0.1:1/db", timeout=0.2, migrate=False)
    assert "hunter2" not in repr(store) and "hunter2" not in store.display_url
    with pytest.raises(HistoryUnavailable) as e:
        store.window(A, 8)
    assert "hunter2" not in str(e.value)
    s = Settings.from_env({}, db_url="postgresql://app:hunter2@h/db")
    assert "hunter2" not in repr(s) + repr(s.section("history"))


# --- faults -----------------------------------------------------------------------------------------

DOCS = InMemoryBackend()


def _backend():
    from convsearch.types import Document

    return InMemoryBackend([Document("p", "AnySearch 专业版每月收费 99 元。", title="AnySearch 价格"),
                            Document("n", "NovaDB 按节点收费。", title="NovaDB 价格")])


def test_locked_sqlite_times_out_as_unavailable_and_the_turn_runs(tmp_path):
    path = tmp_path / SQLITE_FILE
    store = SqlStore(f"sqlite:///{path}", timeout=0.2)
    conv = Conversation(store, A, refresh="off")
    search_with_context("AnySearch 支持哪些检索方式？", backend=_backend(), session=conv)
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")  # another process in the middle of a long write
    try:
        t0 = time.perf_counter()
        with pytest.raises(HistoryUnavailable, match="locked"):
            store.append(A, {"role": "user", "content": "x"})
        assert time.perf_counter() - t0 < 2.0
        r = search_with_context("价格呢？", backend=_backend(), session=conv)
        assert r.standalone_query == "AnySearch 的价格"  # WAL: the read still works
        assert any("not recorded" in n and "locked" in n for n in r.trace.notes), r.trace.notes
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert [m.content for m in store.messages(A)] == ["AnySearch 支持哪些检索方式？"]
    store.close()


def test_unreachable_postgres_runs_the_turn_statelessly():
    store = SqlStore("postgresql://app:pw@127.0.0.1:9/db", timeout=0.5)  # opening does not raise
    conv = Conversation(store, A)
    t0 = time.perf_counter()
    r = search_with_context("价格呢？", [{"role": "user", "content": "NovaDB 怎么样？"}], backend=_backend(), session=conv)
    assert time.perf_counter() - t0 < 5
    assert r.standalone_query == "NovaDB 的价格" and r.memory is None
    assert len(r.trace.notes) == 1 and "history store unavailable" in r.trace.notes[0]
    assert "ran statelessly with the 1 given messages" in r.trace.notes[0]
    store.close()


def test_unreadable_sqlite_file_runs_the_turn_statelessly(tmp_path):
    path = tmp_path / SQLITE_FILE
    path.write_bytes(b"not a database, just bytes " * 200)
    store = SqlStore(f"sqlite:///{path}")
    r = search_with_context("NovaDB 价格", backend=_backend(), session=Conversation(store, A))
    assert r.citations[0].id == "n" and "history store unavailable" in r.trace.notes[0]
    store.close()


def test_a_store_that_could_not_migrate_on_open_retries_later(tmp_path):
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data dir should be")
    store = SqlStore(f"sqlite:///{blocker / SQLITE_FILE}")
    with pytest.raises(HistoryUnavailable):
        store.messages(A)
    blocker.unlink()
    store.append(A, {"role": "user", "content": "now it works"})
    assert [m.content for m in store.messages(A)] == ["now it works"]
    store.close()


def test_a_newer_schema_is_reported_not_clobbered(tmp_path):
    path = tmp_path / SQLITE_FILE
    SqlStore(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as c:
        c.execute(f"UPDATE {VERSION_TABLE} SET version_num = '9999'")
    store = SqlStore(f"sqlite:///{path}")
    with pytest.raises(HistoryUnavailable, match="cannot migrate"):
        store.window(A, 8)
    store.close()


def test_sqlite_reads_run_beside_a_writer(tmp_path):
    """WAL: a long write transaction in another connection does not block readers."""
    path = tmp_path / SQLITE_FILE
    store = SqlStore(f"sqlite:///{path}", timeout=0.2)
    store.append(A, {"role": "user", "content": "before"})
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as other:
        other.exec_driver_sql("BEGIN IMMEDIATE")
        other.exec_driver_sql("INSERT INTO cs_facts VALUES ('x','y','z','k','v',NULL,'2025-01-01 00:00:00')")
        assert [m.content for m in store.window(A, 8)] == ["before"]
        other.rollback()
    engine.dispose()
    store.close()


# --- writers in one process -------------------------------------------------------------------------

def test_concurrent_appends_are_each_stored_once_in_order(tmp_path):
    """Many threads, over two stores on one SQLite file, append to one shared session and to a session of
    their own: every acknowledged append is stored exactly once, each writer's messages keep its order, and
    the writers queue in the process (one BEGIN IMMEDIATE at a time) instead of on SQLite's busy handler."""
    url = f"sqlite:///{tmp_path / SQLITE_FILE}"
    stores = [SqlStore(url, timeout=10), SqlStore(url, timeout=10)]
    at_begin, peak, count_lock = [0], [0], threading.Lock()

    def began(conn, cursor, statement, *args) -> None:
        if statement == "BEGIN IMMEDIATE":
            with count_lock:
                at_begin[0] += 1
                peak[0] = max(peak[0], at_begin[0])

    def ended(conn) -> None:
        if conn.get_execution_options().get("convsearch_write"):
            with count_lock:
                at_begin[0] -= 1

    for st in stores:
        event.listen(st.engine, "before_cursor_execute", began)  # a writer about to wait for SQLite's lock
        event.listen(st.engine, "commit", ended)
        event.listen(st.engine, "rollback", ended)
    shared = Scope("acme", "bot", "shared")
    n_threads, per_thread = 16, 25
    acked: dict[int, list] = {w: [] for w in range(n_threads)}
    errors: list[BaseException] = []
    start = threading.Barrier(n_threads)

    def writer(w: int) -> None:
        store, own = stores[w % 2], Scope("acme", "bot", f"own-{w}")
        try:
            start.wait()
            for i in range(per_thread):
                scope = shared if i % 2 == 0 else own
                row = store.append(scope, {"role": "user", "content": f"w{w} m{i}"}, message_id=f"w{w}-{i}")
                acked[w].append((scope, row))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(n_threads)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # hand the GIL over often, so that transactions really overlap
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors
    assert peak[0] == 1, peak  # one writer at BEGIN IMMEDIATE at a time, across both stores
    reader = stores[0]
    stored_shared = reader.messages(shared)
    assert len(stored_shared) == len({m.id for m in stored_shared})  # no id twice
    assert [m.seq for m in stored_shared] == sorted({m.seq for m in stored_shared})
    by_id = {m.id: m for m in stored_shared}
    for w in range(n_threads):
        mine_shared = [row for scope, row in acked[w] if scope == shared]
        mine_own = [row for scope, row in acked[w] if scope != shared]
        assert len(mine_shared) + len(mine_own) == per_thread
        assert all(by_id[r.id].seq == r.seq and by_id[r.id].content == r.content for r in mine_shared)
        in_session = [m.id for m in stored_shared if m.id.startswith(f"w{w}-")]
        assert in_session == [r.id for r in mine_shared]  # the writer's order, kept
        assert [(m.id, m.seq, m.content) for m in reader.messages(Scope("acme", "bot", f"own-{w}"))] == \
            [(r.id, r.seq, r.content) for r in mine_own]
    assert len(stored_shared) == sum(1 for w in acked for scope, _ in acked[w] if scope == shared)
    for s in stores:
        s.close()


def test_a_writer_held_up_in_this_process_times_out_as_unavailable(tmp_path, caplog):
    """Another thread's long write transaction: a second store on the same file (spelled differently) waits its
    timeout for the process's write lock, then raises HistoryUnavailable; readers, another file's writers and
    everything already stored are unaffected."""
    path = tmp_path / SQLITE_FILE
    holder = SqlStore(f"sqlite:///{path}", timeout=5)
    holder.append(A, {"role": "user", "content": "AnySearch 支持哪些检索方式？"}, message_id="m1")
    store = SqlStore(f"sqlite:///{tmp_path / 'sub' / '..' / SQLITE_FILE}", timeout=0.3)
    other_file = SqlStore(f"sqlite:///{tmp_path / 'other.sqlite3'}", timeout=0.3)
    in_tx, release = threading.Event(), threading.Event()

    def long_write() -> None:
        with holder.batch(write=True):
            holder.append(A, {"role": "assistant", "content": "BM25 and dense."}, message_id="m2")
            in_tx.set()
            release.wait(10)

    t = threading.Thread(target=long_write)
    t.start()
    try:
        assert in_tx.wait(10)
        t0 = time.perf_counter()
        with pytest.raises(HistoryUnavailable) as e:
            store.append(A, {"role": "user", "content": "价格呢？"}, message_id="m3")
        waited = time.perf_counter() - t0
        assert 0.25 <= waited < 1.5, waited
        msg = str(e.value)
        assert msg.startswith("history store unavailable (sqlite:///") and "database is locked" in msg, msg
        assert "other writers in this process" in msg and "0.3 s" in msg and "\n" not in msg, msg
        assert e.value.__cause__ is None  # not a wrapped driver error: the lock timed out before SQLite was asked
        r = search_with_context("价格呢？", backend=_backend(), session=Conversation(store, A, refresh="off"))
        assert r.standalone_query == "AnySearch 的价格"  # readers never take the lock
        notes = [n for n in r.trace.notes if "not recorded" in n]
        assert len(notes) == 1 and "database is locked" in notes[0] and "Traceback" not in notes[0], r.trace.notes
        assert not [rec for rec in caplog.records if rec.exc_info], caplog.records
        other_file.append(A, {"role": "user", "content": "elsewhere"})  # another file: another lock
    finally:
        release.set()
        t.join()
    assert [m.id for m in holder.messages(A)] == ["m1", "m2"]  # nothing stored is lost
    store.append(A, {"role": "user", "content": "价格呢？"}, message_id="m3")  # the lock is free again
    assert [m.id for m in store.messages(A)] == ["m1", "m2", "m3"]
    for s in (holder, store, other_file):
        s.close()


def test_store_path_is_created_on_first_use(tmp_path):
    store = SqlStore(f"sqlite:///{tmp_path / 'a' / 'b' / SQLITE_FILE}")
    assert Path(tmp_path / "a" / "b" / SQLITE_FILE).is_file()
    store.close()


def test_a_batch_is_one_transaction(db_url):
    store = SqlStore(db_url)
    with pytest.raises(RuntimeError):
        with store.batch(write=True):
            store.append(A, {"role": "user", "content": "first"})
            store.record_results(A, "t1", [])
            raise RuntimeError("the turn failed half-way")
    assert store.messages(A) == []  # rolled back together
    with store.batch(write=True):
        store.append(A, {"role": "user", "content": "kept"}, message_id="k1")
        with store.batch():  # nested blocks join the outer one
            assert [m.id for m in store.window(A, 8)] == ["k1"]
    assert [m.content for m in store.messages(A)] == ["kept"]
    store.close()


def test_a_queued_refresh_still_runs_when_the_process_exits(tmp_path):
    """A one-shot CLI turn exits right after the turn: the throttled refresh it queued runs at exit."""
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / SQLITE_FILE}"
    store = SqlStore(url)
    for i in range(16):
        store.append(A, {"role": "user" if i % 2 == 0 else "assistant", "content": f"AnySearch question {i}"})
    store.close()
    code = ("import sys; from convsearch.history import Conversation, Scope; from convsearch.history.sql import SqlStore; "
            "Conversation(SqlStore(sys.argv[1]), Scope('acme', 'bot', 's1')).record_turn('价格呢？', [])")
    subprocess.run([sys.executable, "-c", code, url], check=True, timeout=60)
    store = SqlStore(url)
    assert store.summary(A) is not None and store.summary(A).folded == 9
    store.close()
