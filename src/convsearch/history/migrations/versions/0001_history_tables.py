"""History tables: messages, rolling summaries, cited results (task stack), profile facts.

Revision ID: 0001
Revises:
Create Date: 2025-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# Frozen copies of the types in schema.py as of this revision (migrations never import the live schema).
Seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "cs_messages",
        sa.Column("seq", Seq, primary_key=True, autoincrement=True),
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("agent", sa.String(128), nullable=False),
        sa.Column("session", sa.String(256), nullable=False),
        sa.Column("msg_id", sa.String(128), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("partial", sa.Boolean(), nullable=False),
        sa.Column("blank", sa.Boolean(), nullable=False),
        sa.Column("name", sa.String(128), nullable=True),
        sa.Column("speaker", sa.String(128), nullable=True),
        sa.Column("thread", sa.String(128), nullable=True),
        sa.Column("reply_to", sa.String(128), nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_cs_messages"),
        sa.UniqueConstraint("tenant", "agent", "session", "msg_id", name="uq_cs_messages_tenant_agent_session_msg_id"),
    )
    op.create_index("ix_cs_messages_tenant_agent_session_seq", "cs_messages", ["tenant", "agent", "session", "seq"])
    op.create_table(
        "cs_summaries",
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("agent", sa.String(128), nullable=False),
        sa.Column("session", sa.String(256), nullable=False),
        sa.Column("thread", sa.String(128), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("through", sa.BigInteger(), nullable=False),
        sa.Column("folded", sa.Integer(), nullable=False),
        sa.Column("method", sa.String(64), nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("tenant", "agent", "session", "thread", name="pk_cs_summaries"),
    )
    op.create_table(
        "cs_results",
        sa.Column("id", Seq, primary_key=True, autoincrement=True),
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("agent", sa.String(128), nullable=False),
        sa.Column("session", sa.String(256), nullable=False),
        sa.Column("turn_id", sa.String(128), nullable=False),
        sa.Column("thread", sa.String(128), nullable=True),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.String(512), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("snippet", sa.Text(), nullable=False),
        sa.Column("cited", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_cs_results"),
        sa.UniqueConstraint("tenant", "agent", "session", "turn_id", "n",
                            name="uq_cs_results_tenant_agent_session_turn_id_n"),
    )
    op.create_index("ix_cs_results_tenant_agent_session_id", "cs_results", ["tenant", "agent", "session", "id"])
    op.create_table(
        "cs_facts",
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("agent", sa.String(128), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("source", sa.String(128), nullable=True),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("tenant", "agent", "user_id", "key", name="pk_cs_facts"),
    )


def downgrade() -> None:
    op.drop_table("cs_facts")
    op.drop_index("ix_cs_results_tenant_agent_session_id", table_name="cs_results")
    op.drop_table("cs_results")
    op.drop_table("cs_summaries")
    op.drop_index("ix_cs_messages_tenant_agent_session_seq", table_name="cs_messages")
    op.drop_table("cs_messages")
