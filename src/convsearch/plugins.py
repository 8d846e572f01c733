"""One registration path for every pluggable part: backends (web providers among them), rewriters, embedders,
rerankers, languages and settings sections.

A plugin is a module with ``register(r)``; ``r`` is a ``Registrar`` whose typed methods record where each part
lives, as a ``"module:attr"`` string (nothing is imported until that part is opened)::

    def register(r):
        r.backend("acme", "acme_search:from_settings")                  # factory(settings) -> SearchBackend
        r.backend("acmeweb", "acme_search.web:from_settings", web=True)  # a web provider (policy + cache)
        r.rewriter("acme", "acme_search.rewrite:make")                  # factory(settings) -> Rewriter
        r.embedder("acme", "acme_search.embed:from_settings")           # factory(settings) -> Embedder
        r.reranker("acme", "acme_search.rerank:from_settings", remote=True)
        r.language("acme_search.lang:LANGUAGE")                          # an object with a ``code``
        r.settings("acme_search.settings:AcmeSettings")                 # a config.Section subclass

The built-in parts register the same way: ``BUILT_IN_PLUGINS`` names their modules, and ``load()`` runs those
first, then every installed package's entry point in the group ``convsearch.plugins`` (``name = "module"``, or
``"module:object"`` with a ``register``), as simonw/llm loads its default plugins through its plugin hook. For
compatibility the older one-part groups go through the same loader: ``convsearch.backends`` (``name =
"module:factory"``, a backend) and ``convsearch.rewriters`` (a rewriter). A name already taken keeps its first
registration: the built-ins win over a plugin, an earlier entry point over a later one.

Loading happens once per process, on the first lookup, and costs the plugins' ``register`` calls plus one read of
the installed packages' entry points; a lookup of a name nobody registered reads the entry points again (a package
installed since) before it fails. The settings sections are imported when settings are first read
(``config.Settings`` asks ``sections()``), so ``import convsearch`` imports no area for its settings. A plugin
that cannot be imported or whose ``register`` fails is one ConfigError line naming it and its package (exit 3).

``add(plugin)`` registers a plugin object or module in this process (an application's own parts, tests);
``remove(name)`` takes it out again, ``reset()`` forgets what was loaded.

>>> "memory" in backends() and "rules" in rewriters() and "heuristic" in rerankers()
True
>>> sorted(k for k in KINDS)
['backend', 'embedder', 'language', 'reranker', 'rewriter', 'settings']
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from types import MappingProxyType
from typing import Any

from .errors import ConfigError

BUILT_IN_PLUGINS: tuple[str, ...] = (
    "convsearch.lang.plugin",
    "convsearch.backends.registry",
    "convsearch.rewrite",
    "convsearch.embed.registry",
    "convsearch.rerank.registry",
    "convsearch.history.plugin",
    "convsearch.infra.plugin",
    "convsearch.server.plugin",
    "convsearch.agent.plugin",
    "convsearch.ingest.plugin",
)
ENTRY_POINT_GROUP = "convsearch.plugins"
# the one-part groups of earlier releases, read by the same loader: group → the kind its entries register
COMPAT_GROUPS: dict[str, str] = {"convsearch.backends": "backend", "convsearch.rewriters": "rewriter"}
KINDS = ("backend", "rewriter", "embedder", "reranker", "language", "settings")


@dataclass(frozen=True, slots=True)
class Entry:
    """One registered part: ``target`` is ``"module:attr"`` (or the object itself), ``plugin`` the plugin that
    registered it, ``builtin`` whether that plugin ships with convsearch; ``options`` are the kind's own flags
    (a backend's ``web`` / ``chain``, a reranker's ``remote`` / ``example_url``, a language's ``code``)."""

    kind: str
    name: str
    target: Any
    plugin: str
    builtin: bool
    options: Mapping[str, Any] = field(default_factory=dict)

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)

    @property
    def where(self) -> str:
        """The target as text: ``"module:attr"``, or the object's module and name."""
        if isinstance(self.target, str):
            return self.target
        mod = getattr(self.target, "__module__", None) or type(self.target).__module__
        name = getattr(self.target, "__qualname__", None) or type(self.target).__qualname__
        return f"{mod}:{name}"

    def load(self) -> Any:
        """The object ``target`` names (imported now); ConfigError naming the part when it cannot be."""
        return resolve(self.target, f"{self.kind} {self.name!r}")


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """A loaded plugin: its name, where it came from (a module, ``entry point NAME (DIST)``, ``add()``)."""

    name: str
    source: str
    builtin: bool


class Registry:
    """The parts every loaded plugin registered, per kind (name → Entry, in registration order)."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Entry]] = {k: {} for k in KINDS}
        self.plugins: dict[str, PluginInfo] = {}
        self.shadowed: list[Entry] = []  # registrations a name's earlier owner kept
        self.version = 0  # counts registrations: a reader's cache of a table is fresh while it stays the same

    def put(self, entry: Entry) -> None:
        self.version += 1
        table = self.tables[entry.kind]
        if entry.name in table:
            self.shadowed.append(entry)
        else:
            table[entry.name] = entry

    def table(self, kind: str) -> Mapping[str, Entry]:
        return MappingProxyType(self.tables[kind])


class Registrar:
    """What a plugin's ``register(r)`` is handed: one typed method per kind. Names are case-insensitive."""

    def __init__(self, registry: Registry, plugin: str, *, builtin: bool = False) -> None:
        self._registry = registry
        self.plugin = plugin
        self.builtin = builtin

    def _put(self, kind: str, name: str, target: Any, **options: Any) -> None:
        if isinstance(target, str) and ":" not in target and kind != "settings":
            raise ConfigError(f"plugin {self.plugin!r}: {kind} {name!r} must name 'module:attr', not {target!r}")
        key = name.strip().lower()
        if not key:
            raise ConfigError(f"plugin {self.plugin!r}: a {kind} needs a name")
        self._registry.put(Entry(kind, key, target, self.plugin, self.builtin, MappingProxyType(dict(options))))

    def backend(self, name: str, target: str | Callable[..., Any], *, web: bool = False, chain: bool = True) -> None:
        """A search backend: ``target`` is ``factory(settings, [create=True]) -> SearchBackend``. ``web=True``
        marks a web search provider (opened behind the web policy and cache; in the ``web`` chain unless
        ``chain=False``)."""
        self._put("backend", name, target, web=web, chain=chain)

    def rewriter(self, name: str, target: str | Callable[..., Any]) -> None:
        """A rewriter: ``target`` is ``factory(settings) -> Rewriter`` (``convsearch.rewrite.base``)."""
        self._put("rewriter", name, target)

    def embedder(self, name: str, target: str | Callable[..., Any]) -> None:
        """An embedder: ``target`` is ``factory(settings) -> Embedder`` (``convsearch.embed.base``)."""
        self._put("embedder", name, target)

    def reranker(self, name: str, target: str | Callable[..., Any], *, remote: bool = False,
                 example_url: str = "") -> None:
        """A reranker: ``target`` is ``factory(settings) -> Reranker``; ``remote`` ones need
        CONVSEARCH_RERANK_BASE_URL (``example_url`` shows one in the error when it is missing)."""
        self._put("reranker", name, target, remote=remote, example_url=example_url)

    def language(self, target: Any, *, code: str | None = None) -> None:
        """A language: ``"module:attr"`` of an object with a ``code`` (or the object). ``code`` may be given here
        so that the registry knows it without importing the object."""
        key = code or getattr(target, "code", None) or (target if isinstance(target, str) else repr(target))
        self._put("language", str(key), target, code=code or getattr(target, "code", None))

    def settings(self, section: str | type) -> None:
        """A settings section: a ``config.Section`` subclass or ``"module:Class"``; imported when settings are
        read, and read with every other section."""
        name = section if isinstance(section, str) else f"{section.__module__}:{section.__qualname__}"
        self._put("settings", name, section)


def resolve(target: Any, what: str) -> Any:
    """``"module:attr.attr"`` → the object (anything else is returned as is); ConfigError naming ``what``."""
    if not isinstance(target, str):
        return target
    mod_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(mod_name)
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
    except ImportError as exc:
        raise ConfigError(f"{what} cannot be loaded: {exc} (is its extra or package installed?)") from exc
    except AttributeError as exc:
        raise ConfigError(f"{what}: {target} does not exist") from exc
    return obj


# in-process plugins (``add``): name → the object with ``register``
_ADDED: dict[str, Any] = {}
_LOCK = threading.RLock()
_STATE: dict[str, Registry] = {}


def _why(exc: BaseException) -> str:
    """``exc`` as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _run(registry: Registry, name: str, source: str, plugin: Any, *, builtin: bool) -> None:
    fn = getattr(plugin, "register", None)
    if not callable(fn):
        raise ConfigError(f"plugin {name!r} ({source}) has no register(r) function")
    try:
        fn(Registrar(registry, name, builtin=builtin))
    except ConfigError:
        raise
    except Exception as exc:  # a broken plugin is a configuration problem: one line, exit 3
        raise ConfigError(f"plugin {name!r} ({source}) failed to register: {_why(exc)}") from exc
    registry.plugins[name] = PluginInfo(name, source, builtin)


def _dist(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown package"


class _OnePart:
    """An entry point of an older one-part group as a plugin: registers that one part."""

    def __init__(self, kind: str, ep: metadata.EntryPoint) -> None:
        self.kind, self.ep = kind, ep

    def register(self, r: Registrar) -> None:
        getattr(r, self.kind)(self.ep.name, self.ep.value)


def _entry_points() -> list[tuple[str, metadata.EntryPoint]]:
    groups = (ENTRY_POINT_GROUP, *COMPAT_GROUPS)
    eps = metadata.entry_points()
    return [(g, ep) for g in groups for ep in eps.select(group=g)]


def _build() -> Registry:
    registry = Registry()
    for mod in BUILT_IN_PLUGINS:
        _run(registry, mod, mod, importlib.import_module(mod), builtin=True)
    seen: set[str] = set()
    for group, ep in _entry_points():
        source = f"entry point {ep.name} in {group}, from {_dist(ep)}"
        if group in COMPAT_GROUPS:
            _run(registry, f"{group}:{ep.name}", source, _OnePart(COMPAT_GROUPS[group], ep), builtin=False)
            continue
        if ep.name in seen:
            continue
        seen.add(ep.name)
        try:
            plugin = ep.load()
        except Exception as exc:  # ImportError, a SyntaxError in it, whatever its import raised
            raise ConfigError(f"plugin {ep.name!r} ({source}) cannot be loaded: {_why(exc)}") from exc
        _run(registry, ep.name, source, plugin, builtin=False)
    for name, plugin in _ADDED.items():
        _run(registry, name, "added in this process", plugin, builtin=False)
    return registry


def load() -> Registry:
    """The registry, every plugin loaded (the first call loads them; later ones return the same registry)."""
    got = _STATE.get("registry")
    if got is not None:
        return got
    with _LOCK:
        got = _STATE.get("registry")
        if got is None:
            got = _STATE.setdefault("registry", _build())
    return got


def reload() -> Registry:
    """Load every plugin again (a package installed since the first load). When that fails, the registry loaded
    before is forgotten too: every later lookup loads again and says what is broken, not only this one."""
    with _LOCK:
        _STATE.pop("registry", None)
        _STATE["registry"] = _build()
        return _STATE["registry"]


def reset() -> None:
    """Forget the loaded registry; the next lookup loads again (tests)."""
    with _LOCK:
        _STATE.pop("registry", None)


def add(plugin: Any, name: str | None = None) -> str:
    """Register ``plugin`` (a module or object with ``register(r)``) in this process, after the built-ins and
    the entry points; returns its name (for ``remove``)."""
    key = name or getattr(plugin, "__name__", None) or type(plugin).__qualname__
    with _LOCK:
        try:
            _run(load(), key, "added in this process", plugin, builtin=False)
        except ConfigError:
            _STATE.pop("registry", None)  # what it registered before it failed goes too
            raise
        _ADDED[key] = plugin
    return key


def remove(name: str) -> None:
    """Take a plugin ``add`` registered out again."""
    with _LOCK:
        _ADDED.pop(name, None)
        _STATE.pop("registry", None)


def table(kind: str) -> Mapping[str, Entry]:
    """Every registered part of ``kind`` (``KINDS``), name → Entry, in registration order (built-ins first)."""
    if kind not in KINDS:
        raise ValueError(f"no plugin kind {kind!r}; kinds: {', '.join(KINDS)}")
    return load().table(kind)


def find(kind: str, name: str) -> Entry | None:
    """The part of ``kind`` registered as ``name``; None when no plugin registers it (after reading the installed
    packages' entry points again)."""
    key = name.strip().lower()
    got = table(kind).get(key)
    if got is None:
        got = reload().table(kind).get(key)
    return got


def backends() -> Mapping[str, Entry]:
    return table("backend")


def rewriters() -> Mapping[str, Entry]:
    return table("rewriter")


def embedders() -> Mapping[str, Entry]:
    return table("embedder")


def rerankers() -> Mapping[str, Entry]:
    return table("reranker")


def languages() -> dict[str, Any]:
    """Every registered language, imported: its code → the object."""
    out: dict[str, Any] = {}
    for entry in table("language").values():
        obj = entry.load()
        code = entry.option("code") or getattr(obj, "code", None)
        if not code:
            raise ConfigError(f"language {entry.where} (plugin {entry.plugin!r}) has no code")
        out.setdefault(str(code), obj)
    return out


def sections() -> list[type]:
    """Every settings section the plugins declare, imported (in registration order). ``config`` reads them; this
    module imports nothing of it (it is below config: errors only), so a section is checked by its shape."""
    out: list[type] = []
    for entry in table("settings").values():
        cls = entry.load()
        prefix: Any = getattr(cls, "prefix", "")
        if not (isinstance(cls, type) and callable(getattr(cls, "variables", None)) and prefix):
            raise ConfigError(f"plugin {entry.plugin!r}: settings {entry.where} is not a config.Section")
        out.append(cls)
    return out


__all__ = ["BUILT_IN_PLUGINS", "COMPAT_GROUPS", "ENTRY_POINT_GROUP", "Entry", "KINDS", "PluginInfo", "Registrar",
           "Registry", "add", "backends", "embedders", "find", "languages", "load", "reload", "remove", "rerankers",
           "reset", "resolve", "rewriters", "sections", "table"]
