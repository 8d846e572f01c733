"""Rewriters: rules (offline, zh + en), the pass-through baseline, and the LLM path (``llm``, ``auto``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import plugins
from ..config import Switch
from ..errors import ConfigError
from .base import Passthrough, Rewriter, Scripted

if TYPE_CHECKING:
    from ..config import Settings
    from ..plugins import Registrar

REWRITERS = ("rules", "passthrough", "llm", "auto", "learned")
# third-party rewriters come through ``convsearch.plugins`` (``r.rewriter("acme", "package.module:factory")``,
# ``factory(settings) -> Rewriter``) or, as before, this one-part entry-point group (``name =
# "package.module:factory"``); the module may declare its own settings section (``r.settings``) with its own prefix
ENTRY_POINT_GROUP = "convsearch.rewriters"


def register(r: Registrar) -> None:
    """The built-in rewriters and the LLM settings section they read (the ``convsearch.plugins`` hook). A built-in
    factory is handed the caller's settings or None (then it reads the environment only if it needs to)."""
    for name in REWRITERS:
        r.rewriter(name, f"convsearch.rewrite:_{name}")
    r.settings("convsearch.llm:LLMSettings")


def _passthrough(settings: Settings | None) -> Rewriter:
    return Passthrough()


def _rules(settings: Settings | None) -> Rewriter:
    from ..resolve.rules import RuleRewriter

    return RuleRewriter()


def _learned(settings: Settings | None) -> Rewriter:
    from ..learned.rewriter import LearnedRewriter

    return LearnedRewriter()  # type: ignore[no-any-return]


def _llm(settings: Settings | None) -> Rewriter:
    return _with_llm("llm", settings)


def _auto(settings: Settings | None) -> Rewriter:
    return _with_llm("auto", settings)


def _with_llm(name: str, settings: Settings | None) -> Rewriter:
    from ..config import Settings
    from ..llm import llm_config, llm_configured

    s = settings if settings is not None else Settings.from_env()
    if name == "auto" and not llm_configured(s):
        return _rules(s)
    llm_config(s)  # ConfigError naming the variables, before any import of the [llm] extra
    return _llm_rewriter(name, s, _open_llm(s))


def get_rewriter(name: str, settings: Settings | None = None) -> Rewriter:
    """Return a rewriter by name: ``rules``, ``passthrough``, ``llm``, ``auto`` or ``learned`` (the trained gate
    and term selector with the rules where they are surer: ``learned.rewriter``), or one a plugin registers
    (``convsearch.plugins``: an installed package's entry point in ``convsearch.plugins`` or
    ``convsearch.rewriters``).

    ``llm`` needs an OpenAI-compatible endpoint in ``settings`` (default: ``Settings.from_env()``) and raises a
    ConfigError naming the variables to set otherwise. ``auto`` is gate → LLM → guard → rules → original when
    an LLM is configured, and the rule rewriter itself when not; with CONVSEARCH_LLM_UNSURE_BELOW >= 0 and the
    learned model file present, the learned answer, and the LLM only on turns whose confidence is below it
    (``learned.auto``). The caller owns what it gets: LLM rewriters have ``close()``.
    """
    entry = plugins.find("rewriter", name)
    if entry is None:
        table = plugins.rewriters()
        known = [*(n for n, e in table.items() if e.builtin), *sorted(n for n, e in table.items() if not e.builtin)]
        raise ConfigError(f"unknown rewriter {name!r}; choose one of: {', '.join(known)}")
    try:
        factory = entry.load()
    except ConfigError as exc:
        raise ConfigError(f"rewriter {name!r} cannot be loaded from {entry.where} (plugin {entry.plugin}): "
                          f"{exc}") from exc
    if entry.builtin:
        return factory(settings)  # type: ignore[no-any-return]
    from ..config import Settings

    try:
        return factory(settings if settings is not None else Settings.from_env())  # type: ignore[no-any-return]
    except ConfigError:
        raise
    except Exception as exc:  # a broken plug-in is a configuration problem: one line, exit 3
        raise ConfigError(f"rewriter {name!r} from {entry.where} (plugin {entry.plugin}) failed to open: "
                          f"{type(exc).__name__}: {exc}") from exc


def _open_llm(settings: "Settings") -> Any:
    """A handle on the process's one client for the configured endpoint (closed by its owner's close())."""
    from ..llm import shared_llm

    return shared_llm(settings)


def _llm_rewriter(name: str, s: "Settings", llm: Any) -> Rewriter:
    try:
        from ..infra.cache import MemoryCache
        from .enhance import auto_rewriter
        from .llm import GuardLimits, LLMRewriter
    except ImportError as exc:  # pydantic / openai: the [llm] extra
        raise ConfigError(f"the LLM rewriter needs the [llm] extra ({exc.name} is missing): "
                          "pip install 'convsearch[llm]'") from exc
    from ..llm import LLMSettings

    c = LLMSettings.of(s)
    kw = dict(window=c.window, cache=MemoryCache(c.cache_size), budget_s=c.timeout_s,
              limits=GuardLimits(c.max_zh_chars, c.max_en_words, c.blocked))
    if name == "llm":
        return LLMRewriter(llm, uncertain_below=c.uncertain_below, **kw)
    if c.unsure_below >= 0:  # the learned answer, the LLM only where it is unsure (None: no model file)
        from ..learned.auto import learned_auto

        learned = learned_auto(llm, below=c.unsure_below, **kw)
        if learned is not None:
            return learned
    return auto_rewriter(llm, uncertain_below=c.uncertain_below, **kw)


def make_variant_maker(settings: "Settings") -> Any:
    """A new ``HybridVariants`` (LLM + heuristic, its own cache; the process's shared client) when
    CONVSEARCH_LLM_VARIANTS=on and an LLM is configured, else None (the heuristic table alone). The caller (a
    Pipeline) owns it: ``close()``."""
    from ..llm import LLMSettings

    c = LLMSettings.of(settings)
    if c.variants is not Switch.ON or not c.configured:
        return None
    from ..infra.cache import MemoryCache
    from .llm import GuardLimits, HybridVariants, LLMVariants

    limits = GuardLimits(c.max_zh_chars, c.max_en_words, c.blocked)
    return HybridVariants(LLMVariants(_open_llm(settings), limits=limits, cache=MemoryCache(c.cache_size),
                                      budget_s=c.timeout_s))


class HydeWriter:
    """``(query) -> (hypothetical answer or None, reason)`` with the settings' LLM, budget, cache and blocked words."""

    def __init__(self, llm: Any, *, budget_s: float, cache: Any, blocked: tuple[str, ...] = ()) -> None:
        self.llm = llm
        self.budget_s = budget_s
        self.cache = cache
        self.blocked = blocked

    def __call__(self, query: str, *, calls: list[Any] | None = None) -> tuple[str | None, str]:
        """``calls`` collects the LLM call (with its tokens) for the turn's trace."""
        from .llm import hypothetical_answer

        return hypothetical_answer(self.llm, query, budget_s=self.budget_s, cache=self.cache, blocked=self.blocked,
                                   calls=calls)

    def close(self) -> None:
        close = getattr(self.llm, "close", None)
        if close:
            close()


def make_hyde(settings: "Settings") -> HydeWriter | None:
    """A new HyDE writer (its own cache; the process's shared client) when CONVSEARCH_HYDE=on and an LLM is
    configured, else None (no dense rewrite). The caller (a Pipeline) owns it: ``close()``."""
    from ..llm import LLMSettings

    c = LLMSettings.of(settings)
    if c.hyde is not Switch.ON or not c.configured:
        return None
    from ..infra.cache import MemoryCache

    return HydeWriter(_open_llm(settings), budget_s=c.timeout_s, cache=MemoryCache(c.cache_size), blocked=c.blocked)


__all__ = ["REWRITERS", "HydeWriter", "Passthrough", "Rewriter", "Scripted", "get_rewriter", "make_hyde",
           "make_variant_maker", "register"]
