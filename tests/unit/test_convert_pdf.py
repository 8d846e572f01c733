# ruff: noqa: E501 (fixture documents are written as they would appear in a file)
"""PDF converter on PDFs made with reportlab: pages, paragraphs, running footers, outline headings, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("reportlab", reason="reportlab (dev extra) makes the PDF fixtures")

from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.pdfbase import pdfmetrics  # noqa: E402
from reportlab.pdfbase.cidfonts import UnicodeCIDFont  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402

from convsearch.ingest.convert import convert  # noqa: E402
from convsearch.ingest.types import ConvertError  # noqa: E402

EN_WRAPPED = [
    "Networking on a modern desktop is configured by a daemon that watches the links and",
    "brings interfaces up when a cable is plugged in or a wireless network comes into range",
    "without any manual step from the user, which is what most laptops need.",
]
ZH_WRAPPED = ["现代桌面系统的网络通常由一个守护进程来配置，它会监视链路状态并在插入网线或者进入无线网络覆盖范围",
              "时自动启用网络接口，用户不需要手工操作。"]


def _lines(c: canvas.Canvas, lines: list[str], y: float, font: str = "Helvetica", size: int = 11) -> float:
    c.setFont(font, size)
    for line in lines:
        c.drawString(72, y, line)
        y -= size * 1.4
    return y - size


def _make_pdf(path: Path, *, encrypt: str | None = None, title: str | None = "Network Guide") -> Path:
    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    c = canvas.Canvas(str(path), pagesize=A4, encrypt=encrypt)
    if title:
        c.setTitle(title)
    height = A4[1]
    pages = [
        ("1 Introduction", EN_WRAPPED + ["A second para-", "graph follows after the hyphenated line break in this sentence."]),
        ("2 Configuration", EN_WRAPPED),
        ("3 中文网络设置", None),
    ]
    for n, (heading, body) in enumerate(pages, start=1):
        c.setFont("Helvetica", 9)
        c.drawString(72, height - 40, "Network Guide - draft")  # running header
        c.bookmarkPage(f"p{n}")
        c.addOutlineEntry(heading, f"p{n}", level=0)
        y = height - 100
        if body is None:
            y = _lines(c, [heading], y, "STSong-Light", 16)
            _lines(c, ZH_WRAPPED, y, "STSong-Light", 11)
        else:
            y = _lines(c, [heading], y, "Helvetica-Bold", 16)
            _lines(c, body, y)
        c.setFont("Helvetica", 9)
        c.drawString(A4[0] / 2, 30, str(n))  # page-number footer
        c.showPage()
    c.save()
    return path


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _make_pdf(tmp_path_factory.mktemp("pdf") / "guide.pdf")


def test_pdf_pages_title_and_paragraphs(guide: Path) -> None:
    c = convert(guide)
    assert c.kind == "pdf" and c.title == "Network Guide"
    assert len(c.pages) == 3 and c.pages[0] == 0 and list(c.pages) == sorted(c.pages)
    page1 = c.text[c.pages[0]:c.pages[1]]
    assert " ".join(EN_WRAPPED) in page1  # wrapped English lines joined with spaces
    assert "A second paragraph follows" in page1  # "para-\ngraph" un-hyphenated
    assert c.text[c.pages[1]:].startswith("2 Configuration")
    assert c.text[c.pages[2]:].startswith("3 中文网络设置")


def test_pdf_chinese_lines_join_without_spaces(guide: Path) -> None:
    c = convert(guide)
    assert "".join(ZH_WRAPPED) in c.text


def test_pdf_running_header_and_page_numbers_dropped(guide: Path) -> None:
    c = convert(guide)
    assert "draft" not in c.text
    assert not any(block.strip().isdigit() for block in c.text.split("\n\n"))


def test_pdf_outline_headings_located_in_text(guide: Path) -> None:
    c = convert(guide)
    assert [(h.level, h.text) for h in c.headings] == [(1, "1 Introduction"), (1, "2 Configuration"),
                                                       (1, "3 中文网络设置")]
    for h, page_start in zip(c.headings, c.pages):
        assert h.start == page_start and c.text[h.start:h.start + len(h.text)] == h.text


def test_pdf_title_falls_back_to_first_line(tmp_path: Path) -> None:
    c = convert(_make_pdf(tmp_path / "untitled.pdf", title=None))
    assert c.title == "1 Introduction"


def test_pdf_encrypted_needs_password(tmp_path: Path) -> None:
    p = _make_pdf(tmp_path / "locked.pdf", encrypt="s3cret")
    with pytest.raises(ConvertError, match=r"encrypted PDF \(needs a password\)$"):
        convert(p)


def test_pdf_truncated(guide: Path, tmp_path: Path) -> None:
    raw = guide.read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(raw[: len(raw) // 3])
    with pytest.raises(ConvertError, match=r"not a readable PDF \(corrupt or truncated\)$"):
        convert(cut)
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.4 this is not really a pdf")
    with pytest.raises(ConvertError, match=r"not a readable PDF"):
        convert(junk)


def test_pdf_without_text_layer(tmp_path: Path) -> None:
    p = tmp_path / "scan.pdf"
    c = canvas.Canvas(str(p), pagesize=A4)
    for _ in range(2):
        c.rect(72, 72, 200, 300, fill=1)  # drawn shapes only, as a scan's image page has no text
        c.showPage()
    c.save()
    with pytest.raises(ConvertError, match=r"no text layer \(scanned\?\)$"):
        convert(p)
