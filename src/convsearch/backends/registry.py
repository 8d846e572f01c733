"""Backends by name: ``open_backend(settings)`` builds what ``CONVSEARCH_BACKENDS`` names.

A name maps to a lazy ``"module:function"`` factory, imported only when that backend is opened, so an
optional extra is needed only by whoever uses it. Every backend module exposes ``from_settings(settings) ->
SearchBackend`` and raises ConfigError with one line naming the missing variable or extra. A writable backend's
factory may also take ``create=True`` (make the store when it does not exist yet: ``convsearch index``).

Built-ins are in ``BUILTINS``; third-party packages add theirs through the entry-point group
``convsearch.backends`` (``name = "package.module:from_settings"`` in their packaging metadata). A built-in name
wins over an entry point of the same name. A comma list (``local,web``) opens each and returns a
``backends.fanout.FanOut`` over them (searched concurrently, fused by RRF).

Adding a backend: one module with ``from_settings`` (+ its class), one line in ``BUILTINS`` (or an entry
point), and a test that runs the contract suite of ``convsearch.backends.testing`` over it.

>>> from convsearch.config import Settings
>>> open_backend(Settings(), "memory").name
'memory'
>>> {"local", "memory", "web"} <= set(known_backends())
True
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .base import SearchBackend

if TYPE_CHECKING:
    from ..config import Settings

ENTRY_POINT_GROUP = "convsearch.backends"

# name → "module:function"; the web and Milvus backends add their lines here when they land
BUILTINS: dict[str, str] = {
    "local": "convsearch.backends.local:from_settings",
    "memory": "convsearch.backends.base:from_settings",
    "tavily": "convsearch.backends.web:open_tavily",
    "brave": "convsearch.backends.web:open_brave",
    "serpapi": "convsearch.backends.web:open_serpapi",
    "bing": "convsearch.backends.web:open_bing",
    "searxng": "convsearch.backends.web:open_searxng",
    "web": "convsearch.backends.web:from_settings",
    "milvus": "convsearch.backends.milvus:from_settings",
}

Factory = Callable[..., SearchBackend]


def parse_names(value: str | Iterable[str]) -> list[str]:
    """``"local, web"`` or ``["local", "web"]`` → ``["local", "web"]`` (order kept, duplicates and blanks dropped)."""
    items = value.split(",") if isinstance(value, str) else list(value)
    names = list(dict.fromkeys(n.strip().lower() for n in items if n and n.strip()))
    if not names:
        raise ConfigError("CONVSEARCH_BACKENDS names no backend; e.g. CONVSEARCH_BACKENDS=local")
    return names


def _entry_points() -> dict[str, metadata.EntryPoint]:
    return {ep.name.lower(): ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def known_backends() -> dict[str, str]:
    """Every name that can be opened → where its factory lives (built-ins first, then entry points)."""
    out = {name: ep.value for name, ep in _entry_points().items()}
    out.update(BUILTINS)
    return dict(sorted(out.items()))


def _load(target: str, name: str) -> Factory:
    mod_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(mod_name)
        for part in (attr or "from_settings").split("."):
            obj = getattr(obj, part)
    except ImportError as exc:
        raise ConfigError(f"backend {name!r} cannot be loaded: {exc} (is its extra installed?)") from exc
    except AttributeError as exc:
        raise ConfigError(f"backend {name!r}: {target} does not exist") from exc
    if not callable(obj):
        raise ConfigError(f"backend {name!r}: {target} is not a factory")
    return obj  # type: ignore[no-any-return]


def backend_factory(name: str) -> Factory:
    """The factory for ``name``; ConfigError listing the known names when there is none."""
    key = name.strip().lower()
    if key in BUILTINS:
        return _load(BUILTINS[key], key)
    eps = _entry_points()
    if key in eps:
        try:
            fn = eps[key].load()
        except ImportError as exc:
            raise ConfigError(f"backend {key!r} cannot be loaded: {exc} (is its package installed?)") from exc
        except AttributeError as exc:
            raise ConfigError(f"backend {key!r}: entry point {eps[key].value} does not exist") from exc
        return fn  # type: ignore[no-any-return]
    raise ConfigError(f"unknown backend {name!r} in CONVSEARCH_BACKENDS; known: {', '.join(known_backends())}")


def _build(name: str, settings: Settings, create: bool) -> SearchBackend:
    fn = backend_factory(name)
    if not create:
        return fn(settings)
    try:
        takes_create = "create" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes_create = False
    if not takes_create:
        raise ConfigError(f"backend {name!r} cannot be indexed into (it is read-only); "
                          "set CONVSEARCH_BACKENDS to a writable backend such as local")
    return fn(settings, create=True)


def open_backend(settings: Settings, names: str | Iterable[str] | None = None, *,
                 create: bool = False) -> SearchBackend:
    """The backend ``names`` (default ``settings.backends``) name: one backend, or a FanOut over several.

    ``create=True`` is for writing (``convsearch index``): one writable backend, its store created when
    missing. The caller owns what it gets (``close()`` it)."""
    wanted = parse_names(settings.backends if names is None else names)
    if create and len(wanted) > 1:
        raise ConfigError(f"index into one backend at a time, not {', '.join(wanted)} "
                          "(set CONVSEARCH_BACKENDS to one name)")
    opened: list[SearchBackend] = []
    try:
        for n in wanted:
            opened.append(_build(n, settings, create))
    except BaseException:
        for b in opened:
            b.close()
        raise
    if len(opened) == 1:
        return opened[0]
    from .fanout import FanOut

    return FanOut(opened, deadline_s=settings.deadline_s)


__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "backend_factory", "known_backends", "open_backend", "parse_names"]
