"""The package's imports form no circle, and the follow-up resolver's layers import downward only.

The imports are read from the source (an AST walk over src/convsearch): every ``import`` and ``from … import``,
at the top of a module or inside a function (a function-level import that closes a circle is a circle all the
same). Imports under ``if TYPE_CHECKING:`` are left out: they never run (a step's annotation may name the analysis
that is built above it). The layers are written down in docs/ARCHITECTURE.md; this test is what keeps them true.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PKG = SRC / "convsearch"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PKG.rglob("*.py")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ((isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING") or (
                isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            out.update(id(n) for body in node.body for n in ast.walk(body))
    return out


def _known(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, *, typing: bool = False) -> set[str]:
    """What module ``name`` imports; with ``typing``, its imports under ``if TYPE_CHECKING:`` too."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if typing else _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(t for a in node.names if (t := _known(a.name)) and a.name.startswith("convsearch"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("convsearch"):
                continue
            for a in node.names:  # "from . import lexicon" imports the module lexicon
                t = _known(f"{target}.{a.name}") if f"{target}.{a.name}" in MODULES else _known(target)
                if t:
                    out.add(t)
    out.discard(name)
    return out


GRAPH = {name: _imports(name) for name in MODULES}
TYPED_GRAPH = {name: _imports(name, typing=True) for name in MODULES}  # type-checking imports counted


def _circles(graph: dict[str, set[str]] | None = None) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), in ``graph`` (default: runtime imports)."""
    g = GRAPH if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def test_the_walk_reads_the_imports() -> None:
    assert len(MODULES) > 100
    assert "convsearch.resolve.gate" in GRAPH["convsearch.resolve.rules"]  # a top-level import
    assert "convsearch.demo" in GRAPH["convsearch.cli"]  # a function-level import counts
    assert "convsearch.resolve.analysis" not in GRAPH["convsearch.resolve.checks"]  # TYPE_CHECKING does not


def test_no_import_circles() -> None:
    assert _circles() == []


def test_no_import_circles_even_counting_type_checking_imports() -> None:
    """A type named under ``if TYPE_CHECKING:`` is an import too: the analysis, the language and the steps that
    read them name each other's types without going round (issue 36)."""
    assert _circles(TYPED_GRAPH) == []


# The follow-up resolver, bottom to top. A module may import its own layer and the ones below, never one above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("lang", ("convsearch.lang", "convsearch.lang.base", "convsearch.lang.timeref", "convsearch.lang.zh",
              "convsearch.lang.zh.mentions", "convsearch.lang.zh.markers", "convsearch.lang.en",
              "convsearch.lang.en.mentions", "convsearch.lang.en.markers", "convsearch.lang.zh.texts",
              "convsearch.lang.en.texts", "convsearch.lang.zh.stated", "convsearch.lang.en.stated",
              "convsearch.lang.zh.ordinal", "convsearch.lang.en.ordinal",
              "convsearch.lang.zh.focus", "convsearch.lang.en.focus", "convsearch.lang.zh.frame",
              "convsearch.lang.en.frame")),
    ("primitives", ("convsearch.resolve.entities", "convsearch.resolve.focus", "convsearch.resolve.frame",
                    "convsearch.resolve.introduced", "convsearch.resolve.stated", "convsearch.resolve.ordinal",
                    "convsearch.resolve.offer", "convsearch.resolve.reply", "convsearch.resolve.passage_name",
                    "convsearch.resolve.similar", "convsearch.resolve.shapes", "convsearch.resolve.compose",
                    "convsearch.resolve.guard", "convsearch.resolve.checks")),
    ("language", ("convsearch.resolve.language",)),
    ("decision", ("convsearch.resolve.analysis", "convsearch.resolve.turn", "convsearch.resolve.gate",
                  "convsearch.resolve.scoring", "convsearch.lang.zh.steps", "convsearch.lang.en.steps",
                  "convsearch.lang.zh.language", "convsearch.lang.en.language")),
    ("rewriters", ("convsearch.resolve.rules", "convsearch.rewrite.llm", "convsearch.rewrite.enhance",
                   "convsearch.rewrite", "convsearch.learned.tokens", "convsearch.learned.features",
                   "convsearch.learned.model", "convsearch.learned.compose", "convsearch.learned.resolver",
                   "convsearch.learned.oof", "convsearch.learned.rewriter", "convsearch.learned.ask",
                   "convsearch.learned.auto", "convsearch.learned.scorer")),
    ("pipeline", ("convsearch.pipeline", "convsearch.batch")),
    ("shells", ("convsearch.server.app", "convsearch.cli")),
]
LAYER_OF = {m: i for i, (_, mods) in enumerate(LAYERS) for m in mods}


def test_every_layer_module_exists() -> None:
    assert set(LAYER_OF) <= set(MODULES), set(LAYER_OF) - set(MODULES)


@pytest.mark.parametrize("module", sorted(LAYER_OF))
def test_the_resolver_imports_downward_only(module: str) -> None:
    up = sorted(m for m in GRAPH[module] if LAYER_OF.get(m, -1) > LAYER_OF[module])
    assert up == [], f"{module} ({LAYERS[LAYER_OF[module]][0]}) imports a layer above it: {up}"


def test_language_packs_import_nothing_of_the_rule_layer() -> None:
    for module in LAYERS[0][1]:
        outside = sorted(m for m in GRAPH[module] if m.startswith(("convsearch.rewrite", "convsearch.resolve.gate",
                                                                     "convsearch.pipeline", "convsearch.lang.zh.steps",
                                                                     "convsearch.lang.en.steps")))
        assert outside == [], f"{module} imports {outside}"


def _reach(module: str) -> set[str]:
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(GRAPH[m])
    return seen


def test_settings_import_no_area() -> None:
    """config.py is the machinery of settings: the areas declare their sections and import it, never the reverse
    (issue 27: it imported llm, the web backends and variants). What it reaches is the bottom of the package: with
    the plugins' registry (issue 36), which imports only errors, for the sections the parts declare."""
    assert _reach("convsearch.config") == {"convsearch.config", "convsearch.errors", "convsearch.secret",
                                           "convsearch.fuse", "convsearch.types", "convsearch.plugins"}
    assert _reach("convsearch.plugins") == {"convsearch.plugins"} | _reach("convsearch.errors")
