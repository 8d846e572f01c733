"""Alembic environment for the history tables.

convsearch runs ``upgrade head`` itself when a store opens (``SqlStore.migrate``), handing Alembic an open
connection in ``config.attributes["connection"]``. To write a new revision by hand::

    from alembic import command
    from alembic.config import Config
    cfg = Config(); cfg.set_main_option("script_location", "convsearch.history:migrations")
    cfg.set_main_option("sqlalchemy.url", "sqlite:///scratch.sqlite3")
    command.revision(cfg, "add a column", rev_id="0002")   # then edit versions/0002_*.py
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from convsearch.history.schema import VERSION_TABLE, metadata


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, version_table=VERSION_TABLE,
                      render_as_batch=connection.dialect.name == "sqlite", compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
elif context.is_offline_mode():
    context.configure(url=context.config.get_main_option("sqlalchemy.url"), target_metadata=metadata,
                      version_table=VERSION_TABLE, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    engine = create_engine(context.config.get_main_option("sqlalchemy.url") or "sqlite://")
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()
