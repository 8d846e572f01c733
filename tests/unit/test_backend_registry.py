"""The backend registry: built-ins by name, a comma list = fan-out, third parties through entry points."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from convsearch import ConfigError, IndexMissingError, InMemoryBackend, SearchBackend, Settings, config, plugins
from convsearch.backends import registry
from convsearch.backends.fanout import FanOut
from convsearch.backends.registry import known_backends, open_backend, parse_names
from convsearch.types import Document


@pytest.fixture
def add_backend():
    """Register a backend through an in-process plugin (``plugins.add``); it leaves with the test."""
    names: list[str] = []

    def add(name: str, target: str, **options: bool) -> None:
        class Plugin:
            @staticmethod
            def register(r: plugins.Registrar) -> None:
                r.backend(name, target, **options)

        names.append(plugins.add(Plugin, f"test:{name}"))

    yield add
    for n in names:
        plugins.remove(n)


def test_builtins_open_by_name(tmp_path: Path) -> None:
    b = open_backend(Settings(), "memory")
    assert isinstance(b, InMemoryBackend) and isinstance(b, SearchBackend)
    with pytest.raises(IndexMissingError):  # the local index is opened, not created, unless asked
        open_backend(Settings(data_dir=tmp_path, dense="off"))
    local = open_backend(Settings(data_dir=tmp_path, dense="off"), create=True)
    assert local.name == "local" and local.capabilities.writable
    local.add([Document("1", "AnySearch 支持混合检索"), Document("2", "SpaceX was founded in 2002")])
    assert [h.id for h in local.search("混合检索", top_k=2)] == ["1"]
    assert [h.id for h in open_backend(Settings(data_dir=tmp_path, dense="off")).search("SpaceX founded")] == ["2"]


def test_settings_select_and_a_comma_list_fans_out(tmp_path: Path) -> None:
    s = Settings.from_env({"CONVSEARCH_BACKENDS": "memory"})
    assert s.backends == "memory" and isinstance(open_backend(s), InMemoryBackend)
    open_backend(Settings(data_dir=tmp_path, dense="off"), create=True)
    fan = open_backend(Settings(data_dir=tmp_path, dense="off", backends=" memory , local,memory"))
    assert isinstance(fan, FanOut) and [b.name for b in fan.backends] == ["memory", "local"]
    fan.close()
    assert parse_names("Local, ,web") == ["local", "web"]


def test_unknown_or_empty_names_are_config_errors_listing_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown backend 'nope'.*known: .*local, memory"):
        open_backend(Settings(), "memory,nope")
    with pytest.raises(ConfigError, match="CONVSEARCH_BACKENDS"):
        Settings.from_env({"CONVSEARCH_BACKENDS": " , "})
    with pytest.raises(ConfigError, match="one backend at a time"):
        open_backend(Settings(), "memory,local", create=True)


def test_a_read_only_backend_cannot_be_indexed_into(add_backend) -> None:
    add_backend("ro", "convsearch.backends.base:from_settings")
    with pytest.raises(ConfigError, match="'ro' cannot be indexed into"):
        open_backend(Settings(), "ro", create=True)


def test_a_factory_whose_module_is_missing_names_it(add_backend) -> None:
    add_backend("ghost", "convsearch_no_such_module:from_settings")
    with pytest.raises(ConfigError, match="backend 'ghost' cannot be loaded.*convsearch_no_such_module"):
        open_backend(Settings(), "ghost")
    add_backend("typo", "convsearch.backends.base:no_such_factory")
    with pytest.raises(ConfigError, match="does not exist"):
        open_backend(Settings(), "typo")


def test_a_third_party_backend_registers_through_an_entry_point(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A real installed distribution (a dist-info with entry_points.txt) on sys.path, no mocking."""
    pkg = tmp_path / "acme_search"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        from convsearch.backends.base import InMemoryBackend
        from convsearch.types import Document

        class AcmeBackend(InMemoryBackend):
            name = "acme"

        def from_settings(settings):
            return AcmeBackend([Document("a1", "Acme 搜索 knows " + settings.data_dir.name)])
    '''), encoding="utf-8")
    dist = tmp_path / "acme_search-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-search\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[convsearch.backends]\nacme = acme_search:from_settings\n",
                                           encoding="utf-8")
    assert "acme" not in known_backends()
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        plugins.reload()  # installed after the first load (a lookup of its name alone would load it too)
        assert known_backends()["acme"] == "acme_search:from_settings"
        b = open_backend(Settings(data_dir=Path("kb-zh")), "acme")
        assert b.name == "acme" and [h.id for h in b.search("Acme 搜索", top_k=1)] == ["a1"]
        assert "kb-zh" in b.search("knows")[0].text
        fan = open_backend(Settings(), "memory,acme")
        assert [x.name for x in fan.backends] == ["memory", "acme"]
    finally:
        sys.modules.pop("acme_search", None)
        plugins.reset()


def test_a_new_web_provider_is_one_module_and_one_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      add_backend) -> None:
    """Issue 27 item 5: the module declares its settings (SECTION), the row marks it a web provider; nothing else
    changes for it to open behind the policy and the cache and to join the ``web`` chain."""
    (tmp_path / "acme_web.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass

        from convsearch.backends.base import Capabilities, InMemoryBackend
        from convsearch.backends.web._factory import ProviderSettings
        from convsearch.config import register
        from convsearch.types import Document

        @register
        @dataclass(frozen=True, slots=True)
        class AcmeWebSettings(ProviderSettings):
            name = "acmeweb"
            prefix = "CONVSEARCH_ACMEWEB_"
            base_url: str = "https://search.acme.example"

        SECTION = AcmeWebSettings

        class AcmeWeb(InMemoryBackend):
            capabilities = Capabilities(remote=True, web=True, paid=True)

        def from_settings(settings):
            conf = SECTION.of(settings)
            conf.secrets()
            b = AcmeWeb([Document("https://acme.example/p", "AnySearch 专业版每月 99 元", title="AnySearch 价格",
                                  url="https://acme.example/p")])
            b.name = "acmeweb"
            b.endpoint = conf.endpoint()
            return b
    '''), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("convsearch.config.SECTIONS", dict(config.SECTIONS))  # the section leaves with the test
    add_backend("acmeweb", "acme_web:from_settings", web=True)
    assert "acmeweb" in registry.web_providers(chain=True) and known_backends()["acmeweb"] == "acme_web:from_settings"
    from convsearch.backends.web import configured
    from convsearch.backends.web import from_settings as web_from_settings

    s = Settings.from_env({"CONVSEARCH_ACMEWEB_API_KEYS": "k-1", "CONVSEARCH_WEB_CACHE": "off"})
    assert configured(s) == ["acmeweb"] and configured(Settings()) == []
    b = open_backend(s, "acmeweb")
    assert type(b).__name__ == "Policed" and b.search("AnySearch 价格")[0].title == "AnySearch 价格"
    assert web_from_settings(s).search("AnySearch 价格")[0].id == "https://acme.example/p"
    with pytest.raises(ConfigError, match="CONVSEARCH_ACMEWEB_API_KEYS is not set"):
        open_backend(Settings(), "acmeweb")
    with pytest.raises(ConfigError, match="CONVSEARCH_ACMEWEB_API_KEYS"):
        web_from_settings(Settings())
    sys.modules.pop("acme_web", None)
