"""config.py: the settings by area. Every variable keeps its name (the frozen list below) and has its row in a
documented env table; modes are enums with one clear error line; secrets stay secrets; a section declared outside
config.py (a test module here, an entry point's module in real life) is read, checked and passed on like a built-in
one; config.py imports no area."""

from __future__ import annotations

import logging
import re
import sys
import textwrap
from dataclasses import dataclass, field
from enum import StrEnum

import pytest

import convsearch.config as config_mod
import convsearch.ingest.settings  # noqa: F401 - registers the ingest section (read lazily by a sync)
from convsearch.config import SECTIONS, AutoSwitch, Section, Settings, Switch, named, register, unregister
from convsearch.errors import ConfigError
from convsearch.fuse import Fusion
from convsearch.secret import Secret

# Every variable before settings moved to their areas (config.py's table at d8d9fd2, and bocha's), unprefixed:
# moving a setting to its area must not rename what deployments already set.
FROZEN = {f"CONVSEARCH_{n}" for n in (
    "AGENT_ANSWER_RESERVE_S", "AGENT_CACHE_SIZE", "AGENT_CACHE_TTL_S", "AGENT_COMPRESS", "AGENT_CONTEXT_TOKENS",
    "AGENT_DEADLINE_S", "AGENT_DYNAMIC_COUNT", "AGENT_LLM_TIMEOUT_S", "AGENT_MAX_ANSWER_CHARS", "AGENT_MAX_SEARCHES",
    "AGENT_MAX_STEPS", "AGENT_NO_SEARCH_CHECK", "AGENT_PARALLEL", "AGENT_STRICT", "AGENT_TOP_K",
    "AGENT_TOP_K_COMPARE", "AGENT_TOP_K_FIXED", "API_KEYS", "API_KEYS_FILE", "BACKENDS", "BOCHA_API_KEYS",
    "BOCHA_BASE_URL", "BOCHA_RATE", "BOCHA_SUMMARY", "BRAVE_API_KEYS", "BRAVE_BASE_URL", "BRAVE_RATE", "CACHE_SIZE",
    "CACHE_TTL_S", "CACHE_URL", "CHAT_PROFILES", "DATA_DIR", "DB_TIMEOUT", "DB_URL", "DEADLINE_S", "DENSE", "FUSION",
    "HISTORY_TOKENS", "HYDE", "INLINE_TURNS", "LLM_API_KEY", "LLM_BASE_URL", "LLM_BLOCKED_WORDS", "LLM_CACHE_SIZE",
    "LLM_MAX_CONCURRENCY", "LLM_MAX_EN_WORDS", "LLM_MAX_RETRIES", "LLM_MAX_ZH_CHARS", "LLM_MODEL", "LLM_STRUCTURED",
    "LLM_TEMPERATURE", "LLM_TIMEOUT_S", "LLM_UNCERTAIN_BELOW", "LLM_UNSURE_BELOW", "LLM_VARIANTS", "LLM_WINDOW",
    "MAX_BODY_BYTES", "MAX_MESSAGE_BYTES", "MAX_QUERY_CHARS", "MAX_VARIANTS", "MCP_TENANT", "MILVUS_PREFIX",
    "MILVUS_TOKEN", "MILVUS_URI", "MIXED_VARIANTS", "MODE", "NEAR_DUP_BITS", "NEAR_DUP_JACCARD", "PROFILE",
    "RATE_BURST", "RATE_LIMIT", "REWRITER", "SEARXNG_BASE_URL", "SEARXNG_RATE", "SENSITIVE_TERMS", "SERPAPI_API_KEYS",
    "SERPAPI_BASE_URL", "SERPAPI_ENGINE", "SERPAPI_RATE", "SERVER_AUTH", "SERVER_HOST", "SERVER_PORT", "SITE_POLICY",
    "SNIPPET_TOKENS", "STALE_DAYS", "SUMMARY_CHARS", "SUMMARY_KEEP", "SUMMARY_THRESHOLD", "TASK_ROUNDS",
    "TAVILY_API_KEYS", "TAVILY_BASE_URL", "TAVILY_RATE", "TAVILY_TOPIC", "TOP_K", "WEB_BREAKER_COOLDOWN_S",
    "WEB_BREAKER_FAILURES", "WEB_CACHE", "WEB_MAX_RETRIES", "WEB_MAX_WAIT_S", "WEB_PROVIDERS", "WEB_RESULT_COUNT",
    "WEB_TIMEOUT_S", "WEB_VARIANTS", "WINDOW",
)} | {"CONVSEARCH_PASSAGE_TOKENS", "CONVSEARCH_PER_DOC",  # added since (issue 34: whole-passage citations, grouping,
   "CONVSEARCH_HISTORY_VARIANT", "CONVSEARCH_WIDEN_TOP", "CONVSEARCH_VECTOR_DTYPE"}                         # the follow-up's history variant)
FROZEN |= {"CONVSEARCH_EMBEDDER"} | {f"CONVSEARCH_EMBED_{n}" for n in (  # issue 35: embedders as registry rows
    "BASE_URL", "MODEL", "API_KEY", "BATCH", "CONCURRENCY", "TIMEOUT_S", "MAX_RETRIES", "DIM", "WORKERS")}
FROZEN |= {f"CONVSEARCH_INGEST_{n}" for n in ("MAX_MB", "PASSAGE_TOKENS", "BATCH", "PROGRESS_S")}  # issue 34
FROZEN |= {"CONVSEARCH_RERANKER"} | {f"CONVSEARCH_RERANK_{n}" for n in (  # issue 35: rerankers as registry rows
    "BASE_URL", "MODEL", "API_KEY", "CANDIDATES", "TIMEOUT_S")}


def _builtin_sections() -> list[type[Section]]:
    return [c for c in config_mod.sections().values() if c.__module__.startswith("convsearch.")]


def _variables() -> dict[str, type]:
    """variable → the class that reads it (Settings for the core fields)."""
    out: dict[str, type] = {n[0]: Settings for n in config_mod._core_variables().values()}
    for cls in _builtin_sections():
        out.update({names[0]: cls for names in cls.variables().values()})
    return out


def _documented(text: str | None) -> set[str]:
    return set(re.findall(r"^\|\s*(CONVSEARCH_[A-Z0-9_]+)\s*\|", text or "", re.MULTILINE))


def test_every_environment_name_is_kept():
    assert set(_variables()) == FROZEN


def test_every_variable_is_in_an_env_table():
    """config.py's table, or the docstring of the module that declares the section (bocha's)."""
    central = _documented(config_mod.__doc__)
    missing = [v for v, cls in _variables().items()
               if v not in central and v not in _documented(sys.modules[cls.__module__].__doc__)]
    assert missing == [], "add a row to config.py's table (or the declaring module's) for each of these"
    assert central - set(_variables()) == set(), "these rows of config.py's table document no setting"


def test_each_area_owns_its_section():
    where = {c.name: c.__module__ for c in _builtin_sections()}
    assert where == {"llm": "convsearch.llm", "history": "convsearch.history.base", "cache": "convsearch.infra.cache",
                     "server": "convsearch.server.settings", "agent": "convsearch.agent.settings",
                     "web": "convsearch.backends.web._factory", "milvus": "convsearch.backends.milvus",
                     "embed": "convsearch.embed.settings",
                     "rerank": "convsearch.rerank.settings", "ingest": "convsearch.ingest.settings",
                     **{p: f"convsearch.backends.web.{p}" for p in ("tavily", "brave", "serpapi", "searxng", "bocha")}}
    s = Settings.from_env({"CONVSEARCH_LLM_MODEL": "m", "CONVSEARCH_AGENT_TOP_K": "3", "CONVSEARCH_DB_TIMEOUT": "2"})
    assert (s.section("llm").model, s.section("agent").top_k, s.section("history").db_timeout) == ("m", 3, 2.0)
    assert not hasattr(s, "llm_model") and not hasattr(s, "agent_top_k")  # no flat alias left behind


def test_every_documented_variable_is_read():
    s = Settings.from_env({"CONVSEARCH_TOP_K": "7", "CONVSEARCH_MODE": "dual"})
    assert (s.top_k, s.mode) == (7, "dual")


def test_modes_are_enums_whose_values_are_the_words():
    s = Settings.from_env({"CONVSEARCH_FUSION": "MAX", "CONVSEARCH_DENSE": "off", "CONVSEARCH_HYDE": "on",
                           "CONVSEARCH_TAVILY_TOPIC": "news", "CONVSEARCH_SERVER_AUTH": "on"})
    assert s.fusion is Fusion.MAX and s.dense is AutoSwitch.OFF and s.section("llm").hyde is Switch.ON
    assert s.section("tavily").topic == "news" and f"{s.section('server').auth}" == "on"
    assert s.to_env()["CONVSEARCH_FUSION"] == "max" and Settings(fusion="rrf").fusion is Fusion.RRF


@pytest.mark.parametrize("var, value, allowed", [
    ("CONVSEARCH_FUSION", "sum", "rrf, max"), ("CONVSEARCH_DENSE", "maybe", "auto, on, off"),
    ("CONVSEARCH_LLM_STRUCTURED", "xml", "json_schema, json_object, tools, prompt"),
    ("CONVSEARCH_AGENT_STRICT", "yes", "on, off"), ("CONVSEARCH_SERPAPI_ENGINE", "yahoo", "google, bing"),
    ("CONVSEARCH_INLINE_TURNS", "on", "auto, off"), ("CONVSEARCH_WEB_RESULT_COUNT", "all", "dynamic, fixed"),
    ("CONVSEARCH_BOCHA_SUMMARY", "1", "on, off")])
def test_a_bad_mode_is_one_line_naming_the_variable_and_the_allowed_values(var, value, allowed):
    with pytest.raises(ConfigError) as e:
        Settings.from_env({var: value})
    assert str(e.value) == f"{var} must be one of {allowed}, not {value!r}"


@pytest.mark.parametrize("var, value", [("CONVSEARCH_TOP_K", "0"), ("CONVSEARCH_LLM_TIMEOUT_S", "0"),
                                        ("CONVSEARCH_AGENT_PARALLEL", "-1"), ("CONVSEARCH_SERVER_PORT", "70000"),
                                        ("CONVSEARCH_TAVILY_RATE", "fast"), ("CONVSEARCH_CACHE_URL", "http://x"),
                                        ("CONVSEARCH_WINDOW", "eight")])
def test_a_bad_value_names_its_variable(var, value):
    with pytest.raises(ConfigError, match=var):
        Settings.from_env({var: value})


@pytest.mark.parametrize("section, name, var", [("history", "db_url", "CONVSEARCH_DB_URL"),
                                                ("server", "api_keys", "CONVSEARCH_API_KEYS"),
                                                ("llm", "api_key", "CONVSEARCH_LLM_API_KEY"),
                                                ("tavily", "api_keys", "CONVSEARCH_TAVILY_API_KEYS"),
                                                ("cache", "url", "CONVSEARCH_CACHE_URL"),
                                                ("milvus", "token", "CONVSEARCH_MILVUS_TOKEN")])
def test_secret_settings_never_print_their_value(section, name, var, caplog):
    value = {"db_url": "postgresql://app:hunter2-Zx9@db/app",
             "url": "redis://:hunter2-Zx9@127.0.0.1:6379/0"}.get(name, "acme:sk-live-Zx9hunter2")
    cls = SECTIONS[section]
    from_env = Settings.from_env({var: value})
    in_code = Settings().with_sections(cls(**{name: value}))
    overridden = Settings.from_env({}, **{var.removeprefix("CONVSEARCH_").lower(): value})
    for s in (from_env, in_code, overridden):
        secret = getattr(s.section(cls), name)
        assert isinstance(secret, Secret) and secret.reveal() == value
        with caplog.at_level(logging.DEBUG):
            logging.getLogger("convsearch.test").info("settings: %s %r %r", s, s, s.section(cls))
        for text in (repr(s), str(s), repr(s.section(cls)), repr(secret), f"{secret}", caplog.text):
            assert "hunter2" not in text
    assert getattr(from_env.section(cls), name).env_var == var
    assert getattr(Settings().section(cls), name) is None and getattr(cls(**{name: " "}), name) is None


def test_an_unknown_override_is_refused():
    with pytest.raises(TypeError, match="no setting 'llm_modle'"):
        Settings.from_env({}, llm_modle="m")


def test_to_env_round_trips_every_section():
    env = {"CONVSEARCH_WINDOW": "3", "CONVSEARCH_LLM_MODEL": "m", "OPENAI_API_KEY": "sk-1",
           "CONVSEARCH_AGENT_STRICT": "on", "CONVSEARCH_BOCHA_SUMMARY": "off", "CONVSEARCH_DB_TIMEOUT": "2.5",
           "CONVSEARCH_SOMEONE_ELSES": "kept"}
    s = Settings.from_env(env)
    back = Settings.from_env(s.to_env())
    assert back.to_env() == s.to_env() and back.section("llm").api_key.reveal() == "sk-1"
    assert back.section("agent").strict is Switch.ON and back.section("bocha").summary is Switch.OFF
    assert s.to_env()["CONVSEARCH_SOMEONE_ELSES"] == "kept"


def test_the_db_url_secret_reaches_the_store(tmp_path):
    from convsearch.history.sql import SqlStore

    url = f"sqlite:///{tmp_path / 'h.db'}"
    store = SqlStore.from_settings(Settings.from_env({}, db_url=url, data_dir=tmp_path / "unused"))
    try:
        assert str(store.url) == url
    finally:
        store.close()


# --- a section declared outside config.py, as a backend or rewriter added by entry point declares its own ------
class Region(StrEnum):
    EU = "eu"
    US = "us"


def _acme() -> type[Section]:
    @dataclass(frozen=True, slots=True)
    class AcmeSettings(Section):
        name = "acme"
        prefix = "CONVSEARCH_ACME_"
        api_key: Secret | None = field(default=None, repr=False)
        region: Region = Region.US
        shards: int = 2
        legacy: str = named("CONVSEARCH_ACME_OLD_NAME", "")

        def check(self) -> None:
            self._require("shards")

    return AcmeSettings


def test_a_section_declared_in_another_module_joins_the_settings():
    env = {"CONVSEARCH_ACME_REGION": "eu", "CONVSEARCH_ACME_API_KEY": "ak-hunter2", "CONVSEARCH_ACME_OLD_NAME": "x"}
    before = Settings.from_env(env)  # read before the module declaring the section was loaded (an entry point)
    acme = register(_acme())
    try:
        assert SECTIONS["acme"] is acme and "hunter2" not in repr(before)
        late = acme.of(before)  # read from the variables no section claimed then
        assert (late.region, late.shards, late.legacy, late.api_key.reveal()) == (Region.EU, 2, "x", "ak-hunter2")
        s = Settings.from_env(env)  # registered now: read and checked with every other section
        assert s.section("acme") == late and s.section(acme) is s.section("acme")
        assert Settings.from_env(s.to_env()).section(acme) == s.section(acme) and s.to_env()["CONVSEARCH_ACME_SHARDS"] == "2"
        with pytest.raises(ConfigError, match="CONVSEARCH_ACME_REGION must be one of eu, us, not 'mars'"):
            Settings.from_env({"CONVSEARCH_ACME_REGION": "mars"})
        with pytest.raises(ConfigError, match="CONVSEARCH_ACME_SHARDS must be positive"):
            Settings.from_env({"CONVSEARCH_ACME_SHARDS": "0"})
        assert Settings.from_env({}, acme_shards=5).section(acme).shards == 5
    finally:
        unregister("acme")
    assert "acme" not in SECTIONS


def test_a_section_may_not_take_another_sections_variable():
    @dataclass(frozen=True, slots=True)
    class Thief(Section):
        name = "thief"
        prefix = "CONVSEARCH_LLM_"
        model: str = ""

    with pytest.raises(TypeError, match="CONVSEARCH_LLM_MODEL already belong"):
        register(Thief)
    assert "thief" not in SECTIONS


def test_a_rewriter_name_is_the_rewriters_registry_s_to_check():
    """CONVSEARCH_REWRITER names a rewriter that may come from an entry point: config.py keeps no list of names."""
    assert Settings.from_env({"CONVSEARCH_REWRITER": "learned"}).rewriter == "learned"
    from convsearch.rewrite import get_rewriter

    with pytest.raises(ConfigError, match="unknown rewriter 'nope'"):
        get_rewriter("nope", Settings())


def test_a_rewriter_from_an_entry_point_declares_its_own_section(tmp_path, monkeypatch):
    """A real installed distribution (a dist-info with entry_points.txt) on sys.path: its rewriter module declares a
    section with its own prefix; CONVSEARCH_REWRITER names it; nothing in convsearch is edited."""
    (tmp_path / "acme_rewrite.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass
        from enum import StrEnum

        from convsearch.config import Section, register
        from convsearch.rewrite.base import Passthrough
        from convsearch.types import RewriteResult

        class Style(StrEnum):
            TERSE = "terse"
            LOUD = "loud"

        @register
        @dataclass(frozen=True, slots=True)
        class AcmeRewriteSettings(Section):
            name = "acme_rewrite"
            prefix = "CONVSEARCH_ACMERW_"
            style: Style = Style.TERSE
            suffix: str = ""

        class AcmeRewriter(Passthrough):
            def __init__(self, conf):
                self.conf = conf

            def rewrite(self, history, query, **kw):
                text = (query.upper() if self.conf.style is Style.LOUD else query) + self.conf.suffix
                return RewriteResult(query, text, "acme", f"acme: {self.conf.style}", False)

        def make(settings):
            return AcmeRewriter(AcmeRewriteSettings.of(settings))
    '''), encoding="utf-8")
    dist = tmp_path / "acme_rewrite-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-rewrite\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[convsearch.rewriters]\nacme = acme_rewrite:make\n", encoding="utf-8")
    monkeypatch.setattr("convsearch.config.SECTIONS", dict(SECTIONS))  # the section leaves with the test
    from convsearch.pipeline import Pipeline
    from convsearch.rewrite import get_rewriter

    with pytest.raises(ConfigError, match="unknown rewriter 'acme'; choose one of: rules, passthrough, llm, auto, learned$"):
        get_rewriter("acme", Settings())
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        s = Settings.from_env({"CONVSEARCH_REWRITER": "acme", "CONVSEARCH_ACMERW_STYLE": "loud",
                               "CONVSEARCH_ACMERW_SUFFIX": " 价格", "CONVSEARCH_BACKENDS": "memory"})
        assert "acme_rewrite" not in config_mod.SECTIONS  # not loaded yet: its variables wait, unclaimed
        with Pipeline.from_settings(s) as p:
            r = p.plan("and its price?", [{"role": "user", "content": "What is AnySearch?"},
                                          {"role": "assistant", "content": "AnySearch is a search engine."}])
        assert r.rewrite.rewritten == "AND ITS PRICE? 价格" and r.rewrite.method == "acme"
        conf = s.section("acme_rewrite")
        assert conf.style == "loud" and Settings.from_env(s.to_env()).section("acme_rewrite") == conf
        with pytest.raises(ConfigError, match="CONVSEARCH_ACMERW_STYLE must be one of terse, loud, not 'soft'"):
            Settings.from_env({"CONVSEARCH_ACMERW_STYLE": "soft"})  # registered now: checked with the others
    finally:
        sys.modules.pop("acme_rewrite", None)
