"""PDF converter layout rules on PDFs made with reportlab: paragraphs of Chinese beside long Latin lines, running
headers that carry the page number (arabic or roman) and a chapter title."""

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


BODY = {
    "1 Basics": ["A field server keeps its configuration in one file that the installer writes once.",
                 "Edit it with care and keep a copy before each change."],
    "2 Networking": ["The main server answers DHCP requests on the school network and hands out addresses.",
                     "Workstations ask it for their address when they boot."],
}

ENDS = ["The web service listens on port 8080", "Backups are kept for 14", "The disk quota in gigabytes is 20",
        "Thin clients boot from the server image version 3", "The print queue holds at most 50",
        "LDAP answers on port 389"]


def _book(path: Path) -> Path:
    """Three front-matter pages numbered i-iii in their header, then two chapters whose header is the chapter's
    title and the page number (as texinfo and LaTeX book headers are); each chapter begins on a new page with its
    numbered title, whose number happens to fit the page numbering too."""
    c = canvas.Canvas(str(path), pagesize=A4)
    c.setTitle("Field Server Guide")
    for n, roman in enumerate(["i", "ii", "iii"], start=1):
        _page(c, [f"Front matter paragraph {n} says who wrote the guide."], header=f"Field Server Guide {roman}")
    page = 1
    for title, body in BODY.items():
        for k in range(3):
            c.bookmarkPage(f"p{page}")
            if k == 0:
                c.addOutlineEntry(title, f"p{page}", level=0)
            lines = ([title] if k == 0 else []) + [f"{line} (part {k + 1})" for line in body]
            lines.append(ENDS[page - 1])  # a last line that ends in a number
            _page(c, lines, header=f"Chapter {title[0]}: {title[2:]} {page}" if k else None)
            page += 1
    c.save()
    return path


def test_running_headers_with_the_page_number_dropped_headings_kept(tmp_path: Path) -> None:
    converted = convert(_book(tmp_path / "book.pdf"))
    text = converted.text
    assert "Field Server Guide i" not in text and "Field Server Guide ii" not in text  # roman: the same header
    assert "Chapter 1: Basics" not in text and "Chapter 2: Networking" not in text  # a title that changes
    assert [h.text for h in converted.headings] == ["1 Basics", "2 Networking"]
    for h in converted.headings:
        assert text[h.start:h.start + len(h.text)] == h.text  # found on its page, not added from the outline
    for line in ENDS:
        assert line in text  # body lines that end in a number stay
    assert text.count("Front matter paragraph") == 3


def test_a_hyphen_at_a_line_end_is_kept_when_the_word_has_it(tmp_path: Path) -> None:
    # pdfium marks every hyphen that ends a line alike; the document's other spellings and digits tell them apart
    path = tmp_path / "hyphens.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    _page(c, ["Security updates come from the debian-", "security archive, and the whole configu-",
              "ration is read from one file encoded in UTF-", "32 or UTF-8.", "",
              "Add the debian-security suite to sources.list."])
    c.save()
    text = convert(path).text
    assert "from the debian-security archive" in text  # spelled so elsewhere in the document
    assert "whole configuration is read" in text  # a word hyphenated to fit the line
    assert "encoded in UTF-32 or" in text  # a digit beside the hyphen


def test_a_wrapped_code_line_is_joined_at_its_continuation_mark(tmp_path: Path) -> None:
    _font()
    path = tmp_path / "code.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    y = A4[1] - 90
    for line, mark in [("$ ssh user@example.org /usr/sbin/sendmail -ti < mail_data", True), (".txt", False),
                       ("deb http://deb.debian.org/debian bookworm main non-free-firmware", True),
                       ("contrib non-free", False), ("The first command sends the mail.", False)]:
        c.setFont("Courier", 9)
        c.drawString(60, y, line)
        if mark:  # as DocBook's dblatex sets it at the right margin
            c.setFont("STSong-Light", 9)
            c.drawString(60 + c.stringWidth(line, "Courier", 9) + 6, y, "←-")
        y -= 13
    c.showPage()
    c.save()
    text = convert(path).text
    assert "←" not in text
    assert "sendmail -ti < mail_data.txt" in text  # broken inside a file name: no space
    assert "main non-free-firmware contrib non-free" in text  # broken at a space


def test_an_outline_title_is_found_where_the_page_typesets_it_otherwise(tmp_path: Path) -> None:
    # the outline is plain text ('The "$HOME" variable'); the page has typeset quotes, its own spaces, "Appendix"
    _font()  # _page sets a line that is not ASCII in the CID font: registered here, not by whichever test ran first
    path = tmp_path / "outline.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    for key, (title, level) in enumerate([("1.5.3 The \"$PATH\" variable", 0), ("The \"$HOME\" variable", 1),
                                          ("Flex — a better Lex", 1)]):
        c.bookmarkPage(f"k{key}")
        c.addOutlineEntry(title, f"k{key}", level=level)
    _page(c, ["1.5.3 The \u201d$PATH\u201d variable", "The shell searches the folders of $PATH in order.",
              "1.5.4 The \u201d$HOME\u201d variable", "Many commands keep their settings under $HOME.",
              "12.3.3 Flex \u2014a better Lex", "Flex writes fast lexical analysers."])
    c.bookmarkPage("p2")
    c.addOutlineEntry("A Copying Information", "p2", level=0)
    _page(c, ["Appendix A Copying Information", "The manual may be copied under the licence below."])
    c.save()
    converted = convert(path)
    text = converted.text
    placed = {h.text: h.start for h in converted.headings}
    assert list(placed) == ["1.5.3 The \u201d$PATH\u201d variable", "1.5.4 The \u201d$HOME\u201d variable",
                            "12.3.3 Flex \u2014a better Lex", "Appendix A Copying Information"]
    assert placed["1.5.4 The \u201d$HOME\u201d variable"] == text.index("1.5.4")  # where it is, not at the page top
    assert "\n\nThe \"$HOME\" variable" not in text  # no second, outline-made heading


def _quoted(path: Path, lines: list[str]) -> str:
    _font()
    c = canvas.Canvas(str(path), pagesize=A4)
    _page(c, lines)
    c.save()
    return convert(path).text


def test_quotes_a_font_set_curly_are_straight_again(tmp_path: Path) -> None:
    # DocBook's dblatex sets every ASCII quote as a closing curly one: a command is then no command
    commands = [f"Run \u201dapt-get install pkg{n}\u201d and \u201dapt-get remove pkg{n}\u201d." for n in range(4)]
    awk = [f"Check with awk \u2019{{ print ${n} }}\u2019 and it\u2019s done." for n in range(4)]
    text = _quoted(tmp_path / "curly.pdf", [*commands, *awk, "So-called \u201csmart quotes\u201d stay as they are."])
    assert 'Run "apt-get install pkg0" and "apt-get remove pkg0".' in text
    assert "awk '{ print $3 }' and it's done" in text
    assert "\u201csmart quotes\u201d stay" in text  # a real pair, opened and closed


def test_quotes_are_left_alone_where_the_document_has_straight_ones(tmp_path: Path) -> None:
    lines = [f"Run \u201dapt-get install pkg{n}\u201d and \u201dapt-get remove pkg{n}\u201d." for n in range(4)]
    text = _quoted(tmp_path / "mixed.pdf", [*lines, 'Type "yes" to go on.'])
    assert "\u201dapt-get install pkg0\u201d" in text
