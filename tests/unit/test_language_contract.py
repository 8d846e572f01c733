"""The shipped language packs (zh, en) and the third-pack test's Spanish pack through the language-pack contract
(``convsearch.testing.languages``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from convsearch.lang.en import PACK as EN
from convsearch.lang.zh import PACK as ZH
from convsearch.testing.languages import LanguagePackContract, placeholders


class TestChinese(LanguagePackContract):
    samples = ("AnySearch 支持哪些检索方式？", "价格呢？", "番禺最近三天适合露营吗？")
    foreign = ("Who founded SpaceX?", "¿Qué tiempo hace en Sevilla?")
    named = (("AnySearch 的价格是多少？", "AnySearch"), ("华为 Mate 60 和小米 14 哪个好？", "华为"))
    with_pronoun = ("它的价格呢？", "这个多少钱？")
    without_pronoun = ("AnySearch 支持哪些检索方式？", "番禺最近三天适合露营吗？")

    @pytest.fixture
    def pack(self):
        return ZH


class TestEnglish(LanguagePackContract):
    fallback = True  # claims every text at 0.5: what no other pack claims more surely is read as English
    samples = ("Who founded SpaceX?", "When did it first launch a rocket?", "how much does it cost?")
    foreign = ("AnySearch 支持哪些检索方式？", "价格呢？")
    named = (("Who founded SpaceX?", "SpaceX"), ("Is the Galaxy S23 Ultra waterproof?", "Galaxy S23 Ultra"))
    with_pronoun = ("When did it first launch a rocket?", "How much is that one?")
    without_pronoun = ("Who founded SpaceX?", "What is the capital of France?")

    @pytest.fixture
    def pack(self):
        return EN


def _third_pack_module(tmp_path: Path):
    """The Spanish pack of ``examples/convsearch-es`` (the third-pack test's language), imported from its source."""
    spec = importlib.util.spec_from_file_location("third_pack_test", Path(__file__).with_name("test_third_pack.py"))
    assert spec is not None and spec.loader is not None
    test_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(test_module)
    test_module.install_example(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module("convsearch_es")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("convsearch_es", None)


@pytest.fixture(scope="module")
def spanish_pack(tmp_path_factory):
    return _third_pack_module(tmp_path_factory.mktemp("es")).PACK


class TestThirdPackSpanish(LanguagePackContract):
    samples = ("¿Qué tiempo hace en Sevilla?", "¿Y en Madrid?")
    foreign = ("Who founded SpaceX?", "AnySearch 支持哪些检索方式？")
    named = (("¿Qué tiempo hace en Sevilla?", "Sevilla"),)
    with_pronoun = ("¿Y ella?", "¿Cuánto cuesta eso?")
    without_pronoun = ("¿Qué tiempo hace en Sevilla?",)

    @pytest.fixture
    def pack(self, spanish_pack):
        return spanish_pack


def test_a_template_with_a_placeholder_no_reader_fills_is_caught():
    assert placeholders("Rewrite in {max_zh_chars} chars; JSON like {{\"q\": 1}}") == {"max_zh_chars"}
    assert placeholders("{topic.name} and {n[0]}") == {"topic", "n"}


def test_the_contract_fails_a_pack_that_breaks_it():
    from convsearch.lang.base import Pack

    bad = Pack("xx", "Bad", claims=lambda t: 2.0, words=lambda t: t.split(" "), mentions=lambda t: (),
               has_pronoun=lambda t: "it" in t)
    suite = TestChinese()
    with pytest.raises(AssertionError):
        suite.test_never_raises_on_odd_input(bad, "a b")  # a claim above 1
    with pytest.raises(AssertionError):
        suite.test_words(bad)  # "AnySearch" is not lower case
    with pytest.raises(AssertionError):
        suite.test_mentions(bad)  # finds no name
