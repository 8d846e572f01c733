# ruff: noqa: E501 (fixture documents are written as they would appear in a file)
"""PDF contents and index pages are dropped, body text that merely looks like them (numbered lists, tables of
numbers, one dotted line) is kept, and passage offsets still point at their text. PDFs made with reportlab."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("reportlab", reason="reportlab (dev extra) makes the PDF fixtures")

from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.pdfbase import pdfmetrics  # noqa: E402
from reportlab.pdfbase.cidfonts import UnicodeCIDFont  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402

from convsearch.ingest.convert import CONVERTER_VERSION, convert  # noqa: E402
from convsearch.ingest.convert.pdf import _drop_contents  # noqa: E402
from convsearch.ingest.passages import split  # noqa: E402
from convsearch.ingest.sync import MANIFEST_VERSION, Manifest, splitter_id  # noqa: E402

LEADER = " ." * 40
TOC_EN = [
    "Contents",
    "1 Getting started 2",  # no leader: certain because the outline names "Getting started"
    f"1.1 Installing the server{LEADER} 2",
    f"1.2 When bugs are closed by new uploads{LEADER} 2",
    f"1.3 Keeping the clock in sync{LEADER} 2",
    "2 Packages 3",
    f"2.1 Release figures{LEADER} 3",
    "A very long contents entry whose title wraps onto a second line of the",
    f"contents page before its leader{LEADER} 3",
]
TOC_ZH = [
    "目录",
    f"3.1 网络设置{LEADER} 4",
    f"6.3 安装 Debian Edu{LEADER} 4",
    "6.4 屏幕快照观览 ........................................ 4",
    "6.5 升级…………………… 4",
]
BODY_EN = [
    "1 Getting started",
    "The installer asks three questions before it copies anything to the disk.",
    "Follow these steps in order:",
    "1 Download the netinst image of 650",
    "2 Write it to a USB stick of 8",
    "3 Boot from the stick and pick profile 2",
    "Release figures per architecture:",
    "1 amd64 64231",
    "2 i386 61002",
    "3 arm64 63510",
    "4 armhf 58020",
    f"Total{LEADER} 246763",
    "Versions 1, 2, 3",
    "The server keeps its clock in sync with the school's time source.",
]
BODY_ZH = ["3.1 网络设置", "主服务器提供 DHCP、DNS 和 LDAP 服务，所有工作站都从它获得地址。",
           "1 主服务器 10", "2 工作站 25", "3 瘦客户端 40"]
INDEX = ["Index", "A", f"apt-get{LEADER} 2", "aptitude, 3, 5", "archive, 2-3", "B", "backports, 3",
         f"bugs{LEADER} 2", "C", "clock, 2"]


def _draw(c: canvas.Canvas, lines: list[str], n: int, *, font: str = "Helvetica") -> None:
    y = A4[1] - 80
    for line in lines:
        c.setFont("STSong-Light" if not line.isascii() else font, 10)
        c.drawString(60, y, line)
        y -= 15
    c.setFont("Helvetica", 9)
    c.drawString(A4[0] / 2, 30, str(n))  # page-number footer
    c.showPage()


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    path = tmp_path_factory.mktemp("pdf") / "book.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    c.setTitle("School Server Guide")
    pages = [(None, TOC_EN + TOC_ZH), ("Getting started", BODY_EN), ("网络设置", BODY_ZH), ("Index", INDEX)]
    for n, (outline, lines) in enumerate(pages, start=1):
        if outline:
            c.bookmarkPage(f"p{n}")
            c.addOutlineEntry(outline, f"p{n}", level=0)
        _draw(c, lines, n)
    c.save()
    return path


GONE = ("Contents", "Installing the server", "When bugs are closed", "Keeping the clock", "wraps onto", "目录",
        "安装 Debian Edu", "屏幕快照观览", "升级", "apt-get", "aptitude", "backports", "archive")


def test_contents_and_index_pages_dropped(book: Path) -> None:
    c = convert(book)
    for gone in GONE:
        assert gone not in c.text, gone
    assert re.search(r"(?:\. ){3}\d{1,2}\b", c.text) is None  # a leader before a page number (the body's total kept)
    assert "……" not in c.text and "...." not in c.text
    assert len(c.pages) == 4 and c.pages[0] == c.pages[1] == 0  # the contents page is empty, its offset kept


def test_numbered_list_table_and_dotted_line_in_body_kept(book: Path) -> None:
    c = convert(book)
    body = c.text.replace("\n\n", " ")
    for kept in BODY_EN[1:] + BODY_ZH[1:]:
        assert " ".join(kept.split()) in body, kept
    assert c.text[c.pages[1]:].startswith("1 Getting started")
    assert [h.text for h in c.headings] == ["1 Getting started", "3.1 网络设置", "Index"]


def test_passage_offsets_point_at_their_text(book: Path) -> None:
    c = convert(book)
    docs = split(c, source=str(book), doc_id="book", max_tokens=40)
    assert len(docs) >= 4 and not any(gone in d.text for d in docs for gone in GONE)
    for d in docs:
        start, end = d.metadata["start"], d.metadata["end"]
        assert c.text[start:end].strip() == d.text
    first = next(d for d in docs if "The installer asks" in d.text)
    assert first.metadata["page"] == 2 and first.metadata["section"] == "1 Getting started"
    zh = next(d for d in docs if "主服务器提供" in d.text)
    assert zh.metadata["page"] == 3 and zh.metadata["lang"] == "zh"
    table = next(d for d in docs if "2 i386 61002" in d.text)
    assert table.metadata["page"] == 2


def test_runs_need_three_certain_entries() -> None:
    # a table of numbered rows (title + number) alone is no contents, neither are two dotted lines
    table = [["Figures:", "1 amd64 64231", "2 i386 61002", "3 arm64 63510", f"Sum{LEADER} 1", f"Mean{LEADER} 2"]]
    assert _drop_contents(table, {}) == 0 and len(table[0]) == 6
    # the same rows become contents when the outline names their titles
    named = [["1 amd64 4", "2 i386 5", "3 arm64 6"]]
    assert _drop_contents(named, {0: [(1, "amd64"), (1, "i386"), (1, "arm64")]}) == 3 and named == [[]]
    # prose between entries ends the run: three sentences are no contents
    prose = [[f"a{LEADER} 1", "This is a sentence.", f"b{LEADER} 2", "Another one here.", f"c{LEADER} 3"]]
    assert _drop_contents(prose, {}) == 0


def test_contents_continuing_on_the_next_page() -> None:
    pages = [["Contents", f"1 Intro{LEADER} 1", f"2 Setup{LEADER} 2", f"3 Use{LEADER} 3"],
             [f"4 Index{LEADER} 9", "Appendix notes"],
             ["1 Intro", "Text of the introduction."]]
    assert _drop_contents(pages, {}) == 5
    assert pages == [[], ["Appendix notes"], ["1 Intro", "Text of the introduction."]]


def test_converter_version_invalidates_old_manifests(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    def manifest(splitter: str) -> Manifest:
        path.write_text(json.dumps({"version": MANIFEST_VERSION, "root": str(tmp_path), "splitter": splitter,
                                    "files": {"a.pdf": {"doc_id": "a", "n": 1}}}))
        return Manifest(path, tmp_path, splitter=splitter_id(400))

    assert splitter_id(400).endswith(f"/c{CONVERTER_VERSION}")
    assert manifest("1/400").resplit  # made before converters had a version: every file is converted again
    assert not manifest(splitter_id(400)).resplit
