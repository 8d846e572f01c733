"""Backends by name: ``open_backend(settings)`` builds what ``CONVSEARCH_BACKENDS`` names.

A name maps to a lazy ``"module:function"`` factory, imported only when that backend is opened, so an
optional extra is needed only by whoever uses it. Every backend module exposes ``from_settings(settings) ->
SearchBackend`` and raises ConfigError with one line naming the missing variable or extra. A writable backend's
factory may also take ``create=True`` (make the store when it does not exist yet: ``convsearch index``).

Built-ins are the rows of ``BUILTINS``, registered by this module's ``register(r)``, a plugin like any other
(``convsearch.plugins``): third-party packages add theirs the same way, through the entry-point group
``convsearch.plugins`` (``r.backend("acme", "acme.search:from_settings")``) or, as before, ``convsearch.backends``
(``name = "package.module:from_settings"``). A built-in name wins over a plugin's of the same name. A comma list
(``local,web``) opens each and returns a ``backends.fanout.FanOut`` over them (searched concurrently, fused by RRF).

Web search providers are rows like any other, marked ``Row(…, web=True)``: the registry opens them behind the
web policy and the tiered cache (``backends.web.guarded``), and the ``web`` backend chains the configured ones
in row order (a row with ``chain=False``, like ``bing``, only when named). A provider's module declares its own
settings (``SECTION``, see ``backends/web/_factory.py``).

Adding a backend: one module with ``from_settings`` (+ its class; a web provider also its ``SECTION``), one line
in ``BUILTINS`` (or a plugin's ``r.backend``), and a test that runs the contract suite of
``convsearch.backends.testing`` over it (a web provider: against its replay server, ``convsearch.testing.web_replay``).

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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..errors import ConfigError
from ..plugins import Entry, Registrar
from .base import SearchBackend

if TYPE_CHECKING:
    from ..config import Settings

ENTRY_POINT_GROUP = "convsearch.backends"  # the one-part group of earlier releases (plugins.COMPAT_GROUPS)


@dataclass(frozen=True, slots=True)
class Row:
    """A registry row: ``target`` is the factory (``"module:function"``); ``web`` marks a web search provider
    (opened behind the policy and the cache; a member of the ``web`` chain unless ``chain`` is False)."""

    target: str
    web: bool = False
    chain: bool = True


# name → "module:function", or a Row saying more about it
BUILTINS: dict[str, str | Row] = {
    "local": "convsearch.backends.factory:from_settings",
    "memory": "convsearch.backends.base:from_settings",
    "tavily": Row("convsearch.backends.web.tavily:from_settings", web=True),
    "brave": Row("convsearch.backends.web.brave:from_settings", web=True),
    "serpapi": Row("convsearch.backends.web.serpapi:from_settings", web=True),
    "bing": Row("convsearch.backends.web.serpapi:bing_from_settings", web=True, chain=False),  # serpapi's key
    "searxng": Row("convsearch.backends.web.searxng:from_settings", web=True),
    "bocha": Row("convsearch.backends.web.bocha:from_settings", web=True),
    "web": "convsearch.backends.web:from_settings",
    "milvus": "convsearch.backends.milvus:from_settings",
}


def _entry(name: str) -> Entry | None:
    return plugins.find("backend", name)


def register(r: Registrar) -> None:
    """The built-in backends and web providers, and their settings sections (the ``convsearch.plugins`` hook)."""
    modules: list[str] = []
    for name, row in BUILTINS.items():
        row = Row(row) if isinstance(row, str) else row
        r.backend(name, row.target, web=row.web, chain=row.chain)
        if row.web and (mod := row.target.partition(":")[0]) not in modules:
            modules.append(mod)
    r.settings("convsearch.backends.web._factory:WebSettings")
    for mod in modules:
        r.settings(f"{mod}:SECTION")  # each provider's module declares its own (backends/web/_factory.py)
    r.settings("convsearch.backends.milvus:MilvusSettings")


def web_providers(*, chain: bool = False) -> list[str]:
    """The web search providers' names, in row order (``chain=True``: those the ``web`` chain may take unnamed)."""
    return [n for n, e in plugins.backends().items() if e.option("web") and (e.option("chain") or not chain)]


def web_provider_module(name: str) -> Any:
    """The module of web provider ``name`` (its ``SECTION``, its ``from_settings``)."""
    entry = _entry(name)
    if entry is None or not entry.option("web"):
        raise ConfigError(f"unknown web provider {name!r}; known: {', '.join(web_providers())}")
    if not isinstance(entry.target, str):
        return importlib.import_module(entry.target.__module__)
    return importlib.import_module(entry.target.partition(":")[0])

Factory = Callable[..., SearchBackend]


def parse_names(value: str | Iterable[str]) -> list[str]:
    """``"local, web"`` or ``["local", "web"]`` → ``["local", "web"]`` (order kept, duplicates and blanks dropped)."""
    items = value.split(",") if isinstance(value, str) else list(value)
    names = list(dict.fromkeys(n.strip().lower() for n in items if n and n.strip()))
    if not names:
        raise ConfigError("CONVSEARCH_BACKENDS names no backend; e.g. CONVSEARCH_BACKENDS=local")
    return names


def known_backends() -> dict[str, str]:
    """Every name that can be opened → where its factory lives (every plugin's, built-ins included)."""
    return dict(sorted((name, e.where) for name, e in plugins.backends().items()))


def backend_factory(name: str) -> Factory:
    """The factory for ``name``; ConfigError listing the known names when there is none."""
    key = name.strip().lower()
    entry = _entry(key)
    if entry is None:
        raise ConfigError(f"unknown backend {name!r} in CONVSEARCH_BACKENDS; known: {', '.join(known_backends())}")
    try:
        fn = entry.load()
    except ConfigError as exc:
        hint = "" if entry.builtin else f" (registered by plugin {entry.plugin})"
        raise ConfigError(f"{exc}{hint}") from exc
    if not callable(fn):
        raise ConfigError(f"backend {key!r}: {entry.where} is not a factory")
    return fn  # type: ignore[no-any-return]


def _build(name: str, settings: Settings, create: bool) -> SearchBackend:
    fn = backend_factory(name)
    entry = _entry(name)
    if entry is not None and entry.option("web") and not create:
        from .web.guard import guarded

        return guarded(settings, fn(settings))
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


__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "Row", "backend_factory", "known_backends", "open_backend", "parse_names",
           "register", "web_provider_module", "web_providers"]
