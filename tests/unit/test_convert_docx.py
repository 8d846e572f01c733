"""DOCX converter on documents made with python-docx: title, headings (also localised styles), tables, order."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE

from convsearch.ingest.convert import convert
from convsearch.ingest.types import ConvertError


def _doc(path: Path) -> Path:
    d = docx.Document()
    d.core_properties.title = "Core title (not used: a Title paragraph wins)"
    d.add_paragraph("Network Guide", style="Title")
    d.add_heading("Setting up", level=1)
    d.add_paragraph("The basic   network infrastructure.")
    d.add_heading("Host names", level=2)
    table = d.add_table(rows=2, cols=2)
    for r, row in enumerate([("Package", "Size"), ("ifupdown", "199")]):
        for col, value in enumerate(row):
            table.cell(r, col).text = value
    d.add_paragraph("")
    d.add_paragraph("After the table.")
    d.save(str(path))
    return path


def test_docx_title_headings_table_in_order(tmp_path: Path) -> None:
    c = convert(_doc(tmp_path / "guide.docx"))
    assert c.kind == "docx" and c.title == "Network Guide" and c.pages == ()
    assert c.text.split("\n\n") == ["Network Guide", "Setting up", "The basic network infrastructure.", "Host names",
                                    "Package | Size", "ifupdown | 199", "After the table."]
    assert [(h.level, h.text) for h in c.headings] == [(1, "Setting up"), (2, "Host names")]
    for h in c.headings:
        assert c.text[h.start:h.start + len(h.text)] == h.text


def test_docx_localised_heading_style_by_outline_level(tmp_path: Path) -> None:
    d = docx.Document()
    style = d.styles.add_style("标题一级", WD_STYLE_TYPE.PARAGRAPH)
    ppr = style.element.get_or_add_pPr()
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    lvl = OxmlElement("w:outlineLvl")
    lvl.set(qn("w:val"), "0")
    ppr.append(lvl)
    d.add_paragraph("网络设置", style="标题一级")
    d.add_paragraph("正文内容。")
    d.core_properties.title = "核心标题"
    p = tmp_path / "zh.docx"
    d.save(str(p))
    c = convert(p)
    assert [(h.level, h.text) for h in c.headings] == [(1, "网络设置")]
    assert c.title == "核心标题"  # no Title paragraph: the core property


def test_docx_title_falls_back_to_first_heading(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("intro")
    d.add_heading("Only heading", level=2)
    p = tmp_path / "h.docx"
    d.save(str(p))
    assert convert(p).title == "Only heading"


def test_docx_merged_cells_counted_once(tmp_path: Path) -> None:
    d = docx.Document()
    t = d.add_table(rows=1, cols=3)
    merged = t.cell(0, 0).merge(t.cell(0, 1))
    merged.text = "wide"
    t.cell(0, 2).text = "narrow"
    p = tmp_path / "m.docx"
    d.save(str(p))
    assert convert(p).text == "wide | narrow"


def test_docx_corrupt(tmp_path: Path) -> None:
    notzip = tmp_path / "a.docx"
    notzip.write_bytes(b"this is plain text, not a zip archive")
    with pytest.raises(ConvertError, match=r"not a readable DOCX \(.+\)$"):
        convert(notzip)
    nodoc = tmp_path / "b.docx"
    with zipfile.ZipFile(nodoc, "w") as z:
        z.writestr("hello.txt", "no document here")
    with pytest.raises(ConvertError, match=r"not a readable DOCX \(.+\)$"):
        convert(nodoc)
    good = _doc(tmp_path / "g.docx").read_bytes()
    cut = tmp_path / "cut.docx"
    cut.write_bytes(good[: len(good) // 2])
    with pytest.raises(ConvertError, match=r"not a readable DOCX"):
        convert(cut)


def test_docx_empty_document(tmp_path: Path) -> None:
    p = tmp_path / "empty.docx"
    docx.Document().save(str(p))
    with pytest.raises(ConvertError, match="the file is empty"):
        convert(p)
