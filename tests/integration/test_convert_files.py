"""Converters on real documents installed on this machine (Debian packages: debian-reference, postgresql-doc-15,
python3.11-doc); each test skips, naming the package, when its files are absent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from convsearch.ingest.convert import convert

pytestmark = pytest.mark.integration

DEBREF = Path("/usr/share/debian-reference")
PG_HTML = Path("/usr/share/doc/postgresql-doc-15/html")
PY_LIBRARY = Path("/usr/share/doc/python3.11/html/library")
# whole blocks that are navigation, never content, on these sites
NAV_BLOCKS = {"Prev", "Next", "Up", "Home", "上一页", "下一页", "起始页", "Table of Contents", "目录", "Quick search",
              "Navigation", "index", "modules", "next", "previous"}


def _need(path: Path, package: str) -> Path:
    if not path.exists():
        pytest.skip(f"{path} not installed (apt-get install {package})")
    return path


def _check_contract(c) -> None:  # noqa: ANN001 - a Converted
    assert c.text == c.text.strip() and "\n\n\n" not in c.text
    for h in c.headings:
        assert c.text[h.start:h.start + len(h.text)] == h.text
        assert h.start == 0 or c.text[h.start - 2:h.start] == "\n\n"
    assert not NAV_BLOCKS & set(c.text.split("\n\n"))


@pytest.mark.parametrize(("name", "chapter", "section"), [
    ("ch05.zh-cn.html", "第 5 章 网络设置", "5.1. 基本网络架构"),
    ("ch05.en.html", "Chapter 5. Network setup", "5.1. The basic network infrastructure"),
])
def test_debian_reference_docbook_chapter(name: str, chapter: str, section: str) -> None:
    c = convert(_need(DEBREF / name, "debian-reference"))
    _check_contract(c)
    assert c.title == chapter
    levels = {h.text: h.level for h in c.headings}
    assert levels[chapter] == 1 and levels[section] == 2
    assert any(re.match(r"5\.1\.1\. ", h.text) and h.level == 3 for h in c.headings)
    assert "| " in c.text  # the package tables became rows
    if "zh" in name:
        assert "主机名解析" in c.text and "上一页" not in c.text and "下一页" not in c.text
    else:
        assert "Prev" not in c.text.split("\n\n")[0]


def test_postgresql_docbook_pages_all_convert() -> None:
    files = sorted(_need(PG_HTML, "postgresql-doc-15").glob("*.html"))
    assert len(files) > 1000
    sample = files[:: max(1, len(files) // 120)]
    for f in sample:
        _check_contract(convert(f))
    select = convert(PG_HTML / "sql-select.html")
    assert select.title == "SELECT" and "Synopsis" in {h.text for h in select.headings}
    assert "[ WITH [ RECURSIVE ] with_query [, ...] ]\nSELECT" in select.text  # <pre> lines kept


def test_python_sphinx_page_without_sidebar() -> None:
    c = convert(_need(PY_LIBRARY / "json.html", "python3.11-doc"))
    _check_contract(c)
    assert c.lang == "en" and c.headings[0].text == "json — JSON encoder and decoder" and c.headings[0].level == 1
    assert "¶" not in c.text and "Quick search" not in c.text and "Table of Contents" not in c.text
    assert "Basic Usage" in {h.text for h in c.headings if h.level == 2}


def test_debian_reference_pdf_chinese() -> None:
    c = convert(_need(DEBREF / "debian-reference.zh-cn.pdf", "debian-reference-zh-cn"))
    _check_contract(c)
    assert c.title == "Debian 参考手册" and len(c.pages) > 200
    cjk = sum(1 for ch in c.text if "\u4e00" <= ch <= "\u9fff")
    assert cjk > 90_000  # real Chinese text, not mojibake (97,000 once the contents pages are dropped)
    assert "Debian 参考手册 13 / " not in c.text  # the running header is gone
    assert ". . . . . . . . . ." not in c.text  # so are the 18 pages of contents and lists of tables
    assert any(h.text.endswith("命名管道（先进先出）") for h in c.headings)


def test_debian_reference_pdf_english_pages_and_headings() -> None:
    c = convert(_need(DEBREF / "debian-reference.en.pdf", "debian-reference-en"))
    _check_contract(c)
    assert len(c.pages) > 200 and list(c.pages) == sorted(c.pages)
    links = next(h for h in c.headings if h.text == "1.2.7 Links")
    page = max(i for i, start in enumerate(c.pages) if start <= links.start)
    assert c.text[c.pages[page]:].startswith("1.2.7 Links")
    assert "Debian Reference 13 / 233" not in c.text
