"""Writing documents into a writable backend (the local index or Milvus), for the CLI's ``copy-index`` and
``index --delete``: upsert by id in batches with a progress bar, delete by id, copy one backend into another (a
folder goes through ``sync.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ..backends.base import batches
from ..config import Settings
from ..errors import ConfigError
from ..types import Document

BATCH = 256


class WriteInterrupted(KeyboardInterrupt):
    """Ctrl-C during ``write``: ``written`` documents were committed (whole batches; the batch in flight was
    rolled back), of ``total`` (None when unknown). Upsert by id makes a rerun finish the job."""

    def __init__(self, written: int, total: int | None) -> None:
        super().__init__(f"{written} of {total if total is not None else '?'} documents written")
        self.written = written
        self.total = total


def open_writable(settings: Settings, name: str | None = None, *, create: bool = True) -> Any:
    """The writable backend called ``name`` (default ``CONVSEARCH_BACKENDS``; e.g. ``local``, ``milvus``)
    through the registry; ``create=False`` opens an existing store only."""
    from ..backends.registry import open_backend

    if create:
        return open_backend(settings, name, create=True)
    if (name or settings.backends).strip().lower() == "local":
        from ..backends.factory import open_local

        return open_local(settings, create=False)
    return open_backend(settings, name)



def write(backend: Any, docs: Iterable[Document], *, total: int | None = None, batch: int = BATCH,
          desc: str = "indexing") -> int:
    """Upsert ``docs`` into ``backend`` in batches of ``batch``, with a progress bar on stderr (off when not a
    terminal); returns how many were written. Ctrl-C raises WriteInterrupted, saying how many were."""
    from tqdm import tqdm

    n = 0
    with tqdm(total=total, unit="doc", desc=desc, file=sys.stderr, disable=None) as bar:
        try:
            for b in batches(docs, batch):
                written = backend.add(b)
                n += written
                bar.update(written)
        except WriteInterrupted:
            raise
        except KeyboardInterrupt as exc:  # LocalIndex.add says how much of its batch was committed
            raise WriteInterrupted(n + getattr(exc, "written", 0), total) from exc
    return n


def documents_of(backend: Any) -> tuple[Iterable[Document], int]:
    """Every document stored in ``backend`` (its ``iter_documents``) and how many there are (for copying)."""
    it = getattr(backend, "iter_documents", None)
    if it is None:
        raise ConfigError(f"the {getattr(backend, 'name', '?')} backend cannot list its documents to be copied")
    return it(), len(backend)


def delete(backend: Any, ids: Sequence[str]) -> int:
    return int(backend.delete(list(ids)))
