"""PDF converter layout rules on PDFs made with reportlab: paragraphs of Chinese beside long Latin lines."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("reportlab", reason="reportlab (dev extra) makes the PDF fixtures")

from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.pdfbase import pdfmetrics  # noqa: E402
from reportlab.pdfbase.cidfonts import UnicodeCIDFont  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402

from convsearch.ingest.convert import convert  # noqa: E402
from convsearch.ingest.convert._text import width  # noqa: E402

# one sentence set on three lines: two full ones (about 430 pt of 10 pt characters) and a short last one
ZH_SENTENCE = ("如果远程站点的连接突然停止工作这也许是系统管理员在维护时改变了主机密钥的结果"
               "在确认这个情况以后并且没有人试图冒充远程主机你可以在本机的已知主机文件里"
               "删除旧的条目来重新获得连接这样下次登录时会再次询问是否信任新的密钥。")
# a line of Latin letters as wide as a full Chinese line holds twice the characters
EN_LINES = ["Use the -p option if you are root and have trouble with a firewall; this avoids the use of the",
            "server ports below 1024."]


def _font() -> None:
    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))


def _page(c: canvas.Canvas, lines: list[str], *, header: str | None = None, footer: str | None = None) -> None:
    y = A4[1] - 90
    if header:
        c.setFont("Helvetica", 9)
        c.drawString(60, A4[1] - 50, header)
    for line in lines:
        c.setFont("Helvetica" if line.isascii() else "STSong-Light", 10)
        c.drawString(60, y, line)
        y -= 15
    if footer:
        c.setFont("Helvetica", 9)
        c.drawString(60, 40, footer)
    c.showPage()


def test_width_counts_a_chinese_character_as_two_cells() -> None:
    assert width("apt-get install") == 15
    assert width("软件包 vim") == 10
    assert width("ｖｉｍ") == 6  # full-width forms are set as wide as Chinese


def test_a_full_line_of_chinese_does_not_end_its_paragraph_beside_long_latin_lines(tmp_path: Path) -> None:
    _font()
    path = tmp_path / "mixed.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    zh_lines = [ZH_SENTENCE[:43], ZH_SENTENCE[43:86], ZH_SENTENCE[86:]]
    # long Latin lines make the page's full-line length (in characters) twice a full Chinese line's
    _page(c, EN_LINES + ["", *zh_lines, "", *EN_LINES])
    c.save()
    text = convert(path).text
    assert ZH_SENTENCE in text  # one paragraph: no break (and no space) inside the sentence
    assert text.count("\n\n") == 2  # English paragraph, Chinese paragraph, English paragraph

