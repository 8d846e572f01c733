"""The history tables (SQLAlchemy Core). Alembic migrations in ``migrations/versions`` create them; a test
checks that the migrated database and this metadata agree (``alembic.autogenerate.compare_metadata``).

Table names carry a ``cs_`` prefix and the migration table is ``cs_alembic_version``, so the history can
live in a database an application already uses (and migrates with its own Alembic).
"""

from __future__ import annotations

from sqlalchemy import (BigInteger, Boolean, Column, DateTime, Index, Integer, MetaData, String, Table, Text,
                        UniqueConstraint)

VERSION_TABLE = "cs_alembic_version"

# SQLite only auto-increments an INTEGER PRIMARY KEY (the rowid alias); PostgreSQL gets a bigint identity.
SeqType = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData(naming_convention={
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "pk": "pk_%(table_name)s",
})

messages = Table(
    "cs_messages", metadata,
    Column("seq", SeqType, primary_key=True, autoincrement=True),
    Column("tenant", String(128), nullable=False),
    Column("agent", String(128), nullable=False),
    Column("session", String(256), nullable=False),
    Column("msg_id", String(128), nullable=False),
    Column("role", String(16), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("partial", Boolean(), nullable=False),
    Column("blank", Boolean(), nullable=False),
    Column("name", String(128), nullable=True),
    Column("speaker", String(128), nullable=True),
    Column("thread", String(128), nullable=True),
    Column("reply_to", String(128), nullable=True),
    Column("content", Text(), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("tenant", "agent", "session", "msg_id"),
    Index(None, "tenant", "agent", "session", "seq"),
)

summaries = Table(
    "cs_summaries", metadata,
    Column("tenant", String(128), primary_key=True),
    Column("agent", String(128), primary_key=True),
    Column("session", String(256), primary_key=True),
    Column("thread", String(128), primary_key=True),  # "" for the whole session
    Column("text", Text(), nullable=False),
    Column("through", BigInteger(), nullable=False),
    Column("folded", Integer(), nullable=False),
    Column("method", String(64), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

results = Table(
    "cs_results", metadata,
    Column("id", SeqType, primary_key=True, autoincrement=True),
    Column("tenant", String(128), nullable=False),
    Column("agent", String(128), nullable=False),
    Column("session", String(256), nullable=False),
    Column("turn_id", String(128), nullable=False),
    Column("thread", String(128), nullable=True),
    Column("n", Integer(), nullable=False),
    Column("doc_id", String(512), nullable=False),
    Column("title", Text(), nullable=False),
    Column("url", Text(), nullable=False),
    Column("snippet", Text(), nullable=False),
    Column("cited", Boolean(), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("tenant", "agent", "session", "turn_id", "n"),
    Index(None, "tenant", "agent", "session", "id"),
)

facts = Table(
    "cs_facts", metadata,
    Column("tenant", String(128), primary_key=True),
    Column("agent", String(128), primary_key=True),
    Column("user_id", String(128), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("value", Text(), nullable=False),
    Column("source", String(128), nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
