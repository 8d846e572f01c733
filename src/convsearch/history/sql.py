"""``SqlStore``: the history on SQLAlchemy 2 Core: SQLite by default (WAL, under the data dir), PostgreSQL
through psycopg 3. The schema is migrated with Alembic (``upgrade head``) when the store opens.

Transactions: every append is one transaction, so a message is stored whole or not at all. On SQLite we
take over BEGIN from the sqlite3 module (its legacy mode skips BEGIN for DDL and SELECT) and open write
transactions with ``BEGIN IMMEDIATE``, so a writer waits for the lock up front instead of failing on a
lock upgrade; WAL lets readers run beside the writer. ``synchronous=NORMAL`` keeps every committed
transaction across a killed process (only an OS crash or power loss can drop the last commits).

Writers in one process queue on a per-file ``threading.Lock`` (shared by every ``SqlStore`` on that file in
the process), taken before ``BEGIN IMMEDIATE`` and released after COMMIT or ROLLBACK: SQLite's busy handler
sleeps and polls, so 32 threads contending on it wait far longer than their turn (p99 ~1 s in
``bench/serve.py``), while the lock hands over as soon as the writer is done. Readers never take it (WAL).
Writers in *other processes* (``--workers 2``, a CLI beside the server) still queue on ``busy_timeout`` only.
A write therefore waits up to ``timeout`` for this process's writers, then up to ``timeout`` for other
processes'. PostgreSQL takes no such lock (row locks and ``lock_timeout`` do the job).

Faults: a locked, unreachable or unreadable database raises :class:`HistoryUnavailable` (the turn then
runs statelessly); a store that could not migrate when it opened tries again on its next call.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import (Connection, Engine, and_, bindparam, create_engine, delete, event, func, select, text,
                        update)
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, make_url

from ..errors import ConfigError, HistoryUnavailable, MessageIdConflict
from ..types import Message
from ..window import KEPT_ROLES, in_window
from . import schema as t
from .base import CitedResult, Fact, HistorySettings, Scope, StoredMessage, Summary, check_id, check_size, checked_append
from .memory_store import resolve_thread

log = logging.getLogger("convsearch.history")

SQLITE_FILE = "history.sqlite3"
_PG_LOCK_KEY = 0x63_73_68_69  # "cshi": serialises concurrent migrations on PostgreSQL

# one write lock per SQLite file in this process (see the module docstring); weak values: a lock lives as long
# as a store on its file does
_WRITE_LOCKS: "weakref.WeakValueDictionary[str, threading.Lock]" = weakref.WeakValueDictionary()
_WRITE_LOCKS_GUARD = threading.Lock()


def _sqlite_key(database: str | None) -> str | None:
    """The file a SQLite database lives in, as one canonical path; None for a private in-memory database."""
    if not database or database == ":memory:":
        return None
    if database.startswith("file:"):  # a URI: the path before the query (a named shared memory db keeps its name)
        path, _, query = database[len("file:"):].partition("?")
        if path == ":memory:" or "mode=memory" in query:
            return database
        database = path
    return os.path.realpath(database)


def _write_lock(database: str | None) -> threading.Lock:
    key = _sqlite_key(database)
    if key is None:
        return threading.Lock()
    with _WRITE_LOCKS_GUARD:
        lock = _WRITE_LOCKS.get(key)
        if lock is None:
            lock = _WRITE_LOCKS[key] = threading.Lock()
        return lock


def _fresh_locks_after_fork() -> None:
    # a lock held by a parent's thread at fork() would never be released in the child
    global _WRITE_LOCKS, _WRITE_LOCKS_GUARD
    _WRITE_LOCKS, _WRITE_LOCKS_GUARD = weakref.WeakValueDictionary(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_locks_after_fork)


# --- statements built once (the hot path binds parameters instead of building expressions per call) ---

def _in_scope(table: Any) -> Any:
    return and_(table.c.tenant == bindparam("tenant"), table.c.agent == bindparam("agent"),
                table.c.session == bindparam("session"))


def _window_stmt(thread: bool, limited: bool) -> Any:
    mt = t.messages
    conds = [_in_scope(mt), mt.c.seq > bindparam("after"), mt.c.role.in_(sorted(KEPT_ROLES)), mt.c.kind == "text",
             mt.c.partial.is_(False), mt.c.blank.is_(False)]
    if thread:
        conds.append(mt.c.thread == bindparam("thread"))
    q = select(mt).where(*conds).order_by(mt.c.seq.desc())
    return q.limit(bindparam("n")) if limited else q


def _cited_stmt(thread: bool) -> Any:
    rt = t.results
    conds = [_in_scope(rt)] + ([rt.c.thread == bindparam("thread")] if thread else [])
    recent = (select(rt.c.turn_id).where(*conds).group_by(rt.c.turn_id).order_by(func.max(rt.c.id).desc())
              .limit(bindparam("rounds")))
    return select(rt).where(*conds, rt.c.cited.is_(True), rt.c.turn_id.in_(recent.scalar_subquery()))


_WINDOW = {(th, lim): _window_stmt(th, lim) for th in (False, True) for lim in (False, True)}
_CITED = {th: _cited_stmt(th) for th in (False, True)}
_SUMMARY = select(t.summaries).where(_in_scope(t.summaries), t.summaries.c.thread == bindparam("thread"))
_THREAD_OF = select(t.messages.c.thread).where(_in_scope(t.messages), t.messages.c.msg_id == bindparam("msg_id"))
_LATEST_USER_THREAD = (select(t.messages.c.thread).where(_in_scope(t.messages), t.messages.c.role == "user")
                       .order_by(t.messages.c.seq.desc()).limit(1))


def _scope_params(scope: Scope) -> dict[str, str]:
    return {"tenant": scope.tenant, "agent": scope.agent, "session": scope.session}


def normalize_url(url: str | URL) -> URL:
    """A SQLAlchemy URL for SQLite or PostgreSQL; ``postgres://`` and ``postgresql://`` use psycopg 3."""
    if isinstance(url, str) and url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://"):]
    try:
        u = make_url(url)
    except sa_exc.ArgumentError as exc:
        raise ConfigError(f"CONVSEARCH_DB_URL is not a database URL ({exc})") from exc
    backend = u.get_backend_name()
    if backend == "postgresql":
        if u.drivername == "postgresql":
            u = u.set(drivername="postgresql+psycopg")
        if u.get_driver_name() != "psycopg":
            raise ConfigError(f"PostgreSQL is supported through psycopg 3 only (postgresql+psycopg://), not {u.drivername}")
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise ConfigError("PostgreSQL history needs psycopg 3: pip install 'convsearch[postgres]'") from exc
    elif backend != "sqlite":
        raise ConfigError(f"the history store supports SQLite and PostgreSQL, not {backend}")
    return u


def sqlite_url(data_dir: Path) -> URL:
    """The SQLite file under ``data_dir``, made absolute now (a later chdir must not move the history)."""
    return URL.create("sqlite", database=str((Path(data_dir) / SQLITE_FILE).absolute()))


def _utc(d: datetime | None) -> datetime | None:
    if d is not None and d.tzinfo is None:  # SQLite keeps no offset; we only ever write UTC
        return d.replace(tzinfo=timezone.utc)
    return d


def _row_message(r: Any) -> StoredMessage:
    return StoredMessage(id=r.msg_id, seq=r.seq, role=r.role, content=r.content, kind=r.kind, partial=bool(r.partial),
                         name=r.name, speaker=r.speaker, thread=r.thread, reply_to=r.reply_to,
                         created_at=_utc(r.created_at))


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    return f"{type(orig).__name__}: {first}"[:300]


class SqlStore:
    """HistoryStore + MemoryStore on SQLite or PostgreSQL.

    >>> import tempfile
    >>> store = SqlStore(f"sqlite:///{tempfile.mkdtemp()}/history.sqlite3")   # or postgresql+psycopg://…
    >>> store.append(Scope("acme", "bot", "s1"), {"role": "user", "content": "AnySearch 支持哪些检索方式？"},
    ...              message_id="m1").seq
    1
    """

    def __init__(self, url: str | URL, *, timeout: float = 1.0, max_message_bytes: int = 65536,
                 migrate: bool = True) -> None:
        self.url = normalize_url(url)
        self.timeout = timeout
        self.max_message_bytes = max_message_bytes
        self.dialect = self.url.get_backend_name()
        self.name = self.dialect
        self._ready = False
        self._ready_lock = threading.Lock()
        self._local = threading.local()
        self._write_lock: threading.Lock | None = None
        self._write_lock_pid = 0
        self.engine = self._make_engine()
        mt = t.messages
        self._append_stmt = self._insert(mt).on_conflict_do_nothing(
            index_elements=[mt.c.tenant, mt.c.agent, mt.c.session, mt.c.msg_id]).returning(mt.c.seq)
        st, rt = t.summaries, t.results
        ins = self._insert(st)
        self._summary_stmt = ins.on_conflict_do_update(
            index_elements=[st.c.tenant, st.c.agent, st.c.session, st.c.thread],
            set_={k: ins.excluded[k] for k in ("text", "through", "folded", "method", "updated_at")},
            where=st.c.through < ins.excluded.through).returning(st.c.through)
        self._results_stmt = self._insert(rt).on_conflict_do_nothing(
            index_elements=[rt.c.tenant, rt.c.agent, rt.c.session, rt.c.turn_id, rt.c.n])
        if migrate:
            try:
                self.migrate()
            except HistoryUnavailable as exc:  # e.g. PostgreSQL not up yet: retried on the next call
                log.info("history store %s not ready: %s", self.display_url, exc)

    @classmethod
    def from_settings(cls, settings: Any) -> "SqlStore":
        """The store ``Settings`` describe: CONVSEARCH_DB_URL, else SQLite under ``data_dir``."""
        h = HistorySettings.of(settings)
        url = h.db_url.reveal() if h.db_url else sqlite_url(settings.data_dir)
        return cls(url, timeout=h.db_timeout, max_message_bytes=h.max_message_bytes)

    @property
    def display_url(self) -> str:
        return self.url.render_as_string(hide_password=True)

    def __repr__(self) -> str:
        return f"SqlStore({self.display_url!r})"

    # --- engine and transactions ------------------------------------------------------------------
    def _make_engine(self) -> Engine:
        if self.dialect == "sqlite":
            engine = create_engine(self.url, connect_args={"timeout": self.timeout})
            busy_ms = int(self.timeout * 1000)

            @event.listens_for(engine, "connect")
            def _sqlite_connect(dbapi_conn: Any, _rec: Any) -> None:
                dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see the module docstring)
                cur = dbapi_conn.cursor()
                cur.execute(f"PRAGMA busy_timeout = {busy_ms}")
                cur.execute("PRAGMA journal_mode = WAL")
                cur.execute("PRAGMA synchronous = NORMAL")
                cur.close()

            @event.listens_for(engine, "begin")
            def _sqlite_begin(conn: Connection) -> None:
                write = conn.get_execution_options().get("convsearch_write")
                conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

            return engine
        engine = create_engine(self.url, pool_pre_ping=True,
                               connect_args={"connect_timeout": max(1, math.ceil(self.timeout))})
        lock_ms = max(1, int(self.timeout * 1000))

        @event.listens_for(engine, "connect")
        def _pg_connect(dbapi_conn: Any, _rec: Any) -> None:
            with dbapi_conn.cursor() as cur:
                cur.execute(f"SET lock_timeout = {lock_ms}")
            dbapi_conn.commit()

        return engine

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except HistoryUnavailable:
            raise
        except (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError) as exc:
            raise HistoryUnavailable(f"history store unavailable ({self.display_url}): {_reason(exc)}") from exc
        except sa_exc.DBAPIError as exc:
            if isinstance(exc, sa_exc.IntegrityError):
                raise
            raise HistoryUnavailable(f"history store unavailable ({self.display_url}): {_reason(exc)}") from exc
        except OSError as exc:
            raise HistoryUnavailable(f"history store unavailable ({self.display_url}): {exc}") from exc

    @contextmanager
    def _writing(self, write: bool) -> Iterator[None]:
        """Hold this process's write lock on the SQLite file (a no-op for reads and on PostgreSQL)."""
        if not write or self.dialect != "sqlite":
            yield
            return
        if self._write_lock_pid != os.getpid():  # first write, or first in a forked child
            self._write_lock, self._write_lock_pid = _write_lock(self.url.database), os.getpid()
        lock = self._write_lock
        if not lock.acquire(timeout=self.timeout):
            raise HistoryUnavailable(f"history store unavailable ({self.display_url}): database is locked (other "
                                     f"writers in this process held it for over {self.timeout:g} s)")
        try:
            yield
        finally:
            lock.release()

    @contextmanager
    def _tx(self, write: bool = False) -> Iterator[Connection]:
        joined = getattr(self._local, "conn", None)
        if joined is not None:  # inside batch(): one transaction for the whole block
            yield joined
            return
        with self._guard():
            if not self._ready:
                self.migrate()
            with self._writing(write), self.engine.connect() as conn:
                if write:
                    conn = conn.execution_options(convsearch_write=True)
                with conn.begin():
                    yield conn

    @contextmanager
    def batch(self, *, write: bool = False) -> Iterator[None]:
        """Run the store calls inside the block, on this thread, in one transaction: one connection
        checkout and one BEGIN/COMMIT instead of one per call (a turn's reads; a turn's writes, with
        ``write=True`` so SQLite takes the write lock up front). Nested blocks join the outer one."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        with self._tx(write) as conn:
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    def migrate(self) -> str:
        """Run the Alembic migrations up to head (safe to call from several processes at once); returns
        the revision the database is at."""
        from alembic import command
        from alembic.config import Config
        from alembic.runtime.migration import MigrationContext
        from alembic.util import CommandError

        with self._ready_lock, self._guard():
            db = self.url.database
            if self.dialect == "sqlite" and db and db != ":memory:" and not db.startswith("file:"):
                Path(db).parent.mkdir(parents=True, exist_ok=True)
            with self._writing(True), self.engine.connect() as conn:
                conn = conn.execution_options(convsearch_write=True)
                with conn.begin():
                    if self.dialect == "postgresql":
                        conn.execute(text("SET LOCAL lock_timeout = '30s'"))
                        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
                    cfg = Config()
                    cfg.set_main_option("script_location", "convsearch.history:migrations")
                    cfg.attributes["connection"] = conn
                    try:
                        command.upgrade(cfg, "head")
                    except CommandError as exc:  # e.g. a database migrated by a newer convsearch
                        raise HistoryUnavailable(f"history store unavailable ({self.display_url}): cannot migrate "
                                                 f"the schema: {exc}") from exc
                    rev = MigrationContext.configure(conn, opts={"version_table": t.VERSION_TABLE}).get_current_revision()
            self._ready = True
            return rev or ""

    def close(self) -> None:
        self.engine.dispose()

    def _insert(self, table: Any) -> Any:
        if self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        return insert(table)

    @staticmethod
    def _scoped(table: Any, scope: Scope) -> Any:
        return and_(table.c.tenant == scope.tenant, table.c.agent == scope.agent, table.c.session == scope.session)

    # --- messages ---------------------------------------------------------------------------------
    def append(self, scope: Scope, message: Message | dict[str, Any], *, message_id: str | None = None,
               speaker: str | None = None, reply_to: str | None = None) -> StoredMessage:
        m = checked_append(message, max_bytes=self.max_message_bytes, message_id=message_id, speaker=speaker,
                           reply_to=reply_to)
        mt = t.messages
        mid = message_id or uuid.uuid4().hex
        sp = _scope_params(scope)
        with self._tx(write=True) as conn:
            replied = latest_user = None
            if m.role == "assistant":
                if reply_to:
                    r = conn.execute(_THREAD_OF, {**sp, "msg_id": reply_to}).first()
                    replied = StoredMessage(reply_to, 0, "user", "", thread=r.thread) if r else None
                if replied is None and speaker is None:
                    r = conn.execute(_LATEST_USER_THREAD, sp).first()
                    latest_user = StoredMessage("", 0, "user", "", thread=r.thread) if r else None
            now = datetime.now(timezone.utc)
            values = dict(sp, msg_id=mid, role=m.role, kind=m.kind, partial=m.partial, blank=not m.content.strip(),
                          name=m.name, speaker=speaker, thread=resolve_thread(m.role, speaker, replied, latest_user),
                          reply_to=reply_to, content=m.content, created_at=now)
            seq = conn.execute(self._append_stmt, values).scalar()
            if seq is None:  # the id is taken: an idempotent retry, or a conflict
                old = _row_message(conn.execute(select(mt).where(self._scoped(mt, scope), mt.c.msg_id == mid)).one())
                if (old.role, old.content, old.kind, old.partial) != (m.role, m.content, m.kind, m.partial):
                    raise MessageIdConflict(f"message id {mid!r} already holds a different message")
                return old
        return StoredMessage(id=mid, seq=seq, role=m.role, content=m.content, kind=m.kind, partial=m.partial,
                             name=m.name, speaker=speaker, thread=values["thread"], reply_to=reply_to, created_at=now)

    def messages(self, scope: Scope, *, after: int = 0, limit: int | None = None) -> list[StoredMessage]:
        mt = t.messages
        q = select(mt).where(self._scoped(mt, scope), mt.c.seq > after)
        if limit:
            q = q.order_by(mt.c.seq.desc()).limit(limit)
        else:
            q = q.order_by(mt.c.seq)
        with self._tx() as conn:
            rows = [_row_message(r) for r in conn.execute(q)]
        return sorted(rows, key=lambda r: r.seq) if limit else rows

    def window(self, scope: Scope, n: int | None, *, speaker: str | None = None, after: int = 0) -> list[StoredMessage]:
        if n is not None and n <= 0:
            return []
        params: dict[str, Any] = {**_scope_params(scope), "after": after, "n": n or 0, "thread": speaker}
        with self._tx() as conn:
            rows = [_row_message(r) for r in conn.execute(_WINDOW[(speaker is not None, bool(n))], params)]
        rows.reverse()
        return [r for r in rows if in_window(r.as_message())]  # the window's own rule, re-applied

    def summary(self, scope: Scope, *, speaker: str | None = None) -> Summary | None:
        with self._tx() as conn:
            r = conn.execute(_SUMMARY, {**_scope_params(scope), "thread": speaker or ""}).first()
        if r is None:
            return None
        return Summary(r.text, r.through, r.folded, r.method, _utc(r.updated_at))

    def save_summary(self, scope: Scope, summary: Summary, *, speaker: str | None = None) -> bool:
        st = t.summaries
        values = dict(tenant=scope.tenant, agent=scope.agent, session=scope.session, thread=speaker or "",
                      text=summary.text, through=summary.through, folded=summary.folded, method=summary.method[:64],
                      updated_at=summary.updated_at or datetime.now(timezone.utc))
        with self._tx(write=True) as conn:  # RETURNING, not rowcount: psycopg reports -1 for upserts
            return conn.execute(self._summary_stmt, values).first() is not None

    def delete_session(self, scope: Scope) -> int:
        with self._tx(write=True) as conn:
            n = conn.execute(delete(t.messages).where(self._scoped(t.messages, scope))).rowcount
            conn.execute(delete(t.summaries).where(self._scoped(t.summaries, scope)))
            conn.execute(delete(t.results).where(self._scoped(t.results, scope)))
        return n

    # --- task stack -------------------------------------------------------------------------------
    def record_results(self, scope: Scope, turn_id: str, results: Sequence[CitedResult], *,
                       speaker: str | None = None) -> None:
        check_id("turn id", turn_id)
        if not results:
            return
        rt = t.results
        now = datetime.now(timezone.utc)
        rows = [dict(tenant=scope.tenant, agent=scope.agent, session=scope.session, turn_id=turn_id, thread=speaker,
                     n=r.n, doc_id=r.id[:512], title=r.title, url=r.url, snippet=r.snippet, cited=False, created_at=now)
                for r in results]
        with self._tx(write=True) as conn:
            conn.execute(self._results_stmt, rows)

    def mark_cited(self, scope: Scope, ns: Sequence[int], *, turn_id: str | None = None,
                   speaker: str | None = None) -> int:
        rt = t.results
        conds = [self._scoped(rt, scope)]
        if speaker is not None:
            conds.append(rt.c.thread == speaker)
        with self._tx(write=True) as conn:
            if turn_id is None:
                turn_id = conn.execute(select(rt.c.turn_id).where(*conds).order_by(rt.c.id.desc()).limit(1)).scalar()
                if turn_id is None:
                    return 0
            stmt = update(rt).where(*conds, rt.c.turn_id == turn_id, rt.c.n.in_(list(ns)),
                                    rt.c.cited.is_(False)).values(cited=True)
            return conn.execute(stmt).rowcount

    def cited(self, scope: Scope, *, rounds: int = 3, speaker: str | None = None) -> list[CitedResult]:
        if rounds <= 0:
            return []
        params = {**_scope_params(scope), "rounds": rounds, "thread": speaker}
        with self._tx() as conn:
            rows = conn.execute(_CITED[speaker is not None], params).all()
        last: dict[str, int] = {}
        for r in rows:
            last[r.turn_id] = max(r.id, last.get(r.turn_id, 0))
        rows.sort(key=lambda r: (-last[r.turn_id], r.n))  # newest round first
        return [CitedResult(r.turn_id, r.n, r.doc_id, r.title, r.url, r.snippet) for r in rows]

    # --- profile ----------------------------------------------------------------------------------
    def _user(self, scope: Scope, user: str) -> Any:
        ft = t.facts
        return and_(ft.c.tenant == scope.tenant, ft.c.agent == scope.agent, ft.c.user_id == user)

    def facts(self, scope: Scope, user: str) -> list[Fact]:
        check_id("user", user)
        ft = t.facts
        with self._tx() as conn:
            rows = conn.execute(select(ft).where(self._user(scope, user)).order_by(ft.c.key)).all()
        return [Fact(r.key, r.value, r.source, _utc(r.updated_at)) for r in rows]

    def remember(self, scope: Scope, user: str, facts: Sequence[Fact]) -> None:
        check_id("user", user)
        for f in facts:
            check_id("fact key", f.key)
            check_size(f.value, self.max_message_bytes)
        if not facts:
            return
        ft = t.facts
        now = datetime.now(timezone.utc)
        rows = [dict(tenant=scope.tenant, agent=scope.agent, user_id=user, key=f.key, value=f.value, source=f.source,
                     updated_at=f.updated_at or now) for f in facts]
        ins = self._insert(ft)
        stmt = ins.on_conflict_do_update(index_elements=[ft.c.tenant, ft.c.agent, ft.c.user_id, ft.c.key],
                                         set_={k: ins.excluded[k] for k in ("value", "source", "updated_at")})
        with self._tx(write=True) as conn:
            for row in rows:  # one statement per fact: a batch upsert may not touch one key twice
                conn.execute(stmt, row)

    def forget(self, scope: Scope, user: str, keys: Sequence[str] | None = None) -> int:
        check_id("user", user)
        ft = t.facts
        conds = [self._user(scope, user)]
        if keys is not None:
            conds.append(ft.c.key.in_(list(keys)))
        with self._tx(write=True) as conn:
            return conn.execute(delete(ft).where(*conds)).rowcount


__all__ = ["SQLITE_FILE", "SqlStore", "normalize_url", "sqlite_url"]
