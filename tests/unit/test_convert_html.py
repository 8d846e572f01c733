# ruff: noqa: E501 (fixture documents are written as they would appear in a file)
"""HTML converter: main text without navigation, headings with levels, tables as rows, declared charsets."""

from __future__ import annotations

from pathlib import Path

import pytest

from convsearch.ingest.convert import convert
from convsearch.ingest.types import ConvertError

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Network setup</title>
<style>body { color: red }</style><script>var tracking = "SCRIPT-TEXT";</script></head>
<body>
<header class="site-header"><a href="/">Home</a> <a href="/about">About us</a></header>
<nav><ul><li><a href="a.html">Prev</a></li><li><a href="b.html">Next</a></li></ul></nav>
<div class="breadcrumbs">Docs » Networking</div>
<main>
  <h1>Network   setup</h1>
  <p>The basic   network
     infrastructure is described here.</p>
  <div class="sidebar">SIDEBAR-TEXT</div>
  <h2>5.1. Host names</h2>
  <p>Name resolution uses <code>/etc/hosts</code> first.</p>
  <ul><li>first item</li><li>second item</li></ul>
  <table><tr><th>Package</th><th>Size</th></tr><tr><td>ifupdown</td><td>199</td></tr></table>
  <h3>5.1.1. Details</h3>
  <pre>line one
    indented line two</pre>
  <form><input name="q"><button>Search</button></form>
</main>
<footer>Copyright FOOTER-TEXT</footer>
</body></html>"""


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_html_keeps_main_text_and_drops_navigation(tmp_path: Path) -> None:
    c = convert(_write(tmp_path, "page.html", PAGE.encode()))
    assert c.kind == "html" and c.title == "Network setup" and c.lang == "en"
    for noise in ("SCRIPT-TEXT", "color: red", "About us", "Prev", "Next", "Docs »", "SIDEBAR-TEXT", "FOOTER-TEXT",
                  "Search"):
        assert noise not in c.text, noise
    blocks = c.text.split("\n\n")
    assert blocks[0] == "Network setup"
    assert "The basic network infrastructure is described here." in blocks
    assert "first item" in blocks and "second item" in blocks
    assert "Package | Size" in blocks and "ifupdown | 199" in blocks
    assert "line one\n    indented line two" in blocks  # <pre> keeps its line breaks and indentation


def test_html_headings_point_at_their_blocks(tmp_path: Path) -> None:
    c = convert(_write(tmp_path, "page.html", PAGE.encode()))
    assert [(h.level, h.text) for h in c.headings] == [(1, "Network setup"), (2, "5.1. Host names"),
                                                       (3, "5.1.1. Details")]
    for h in c.headings:
        assert c.text[h.start:h.start + len(h.text)] == h.text
        assert h.start == 0 or c.text[h.start - 2:h.start] == "\n\n"
    assert "\n\n\n" not in c.text and c.text == c.text.strip()


def test_html_text_contract_no_blank_blocks(tmp_path: Path) -> None:
    html = "<html><body><div>  </div><p>a</p>\n\n<div><p>b</p><p>  </p></div><p>c<br>d</p></body></html>"
    c = convert(_write(tmp_path, "x.htm", html.encode()))
    assert c.text == "a\n\nb\n\nc d"


def test_html_chinese_wrapped_lines_join_without_spaces(tmp_path: Path) -> None:
    html = "<html lang='zh-CN'><body><p>虽然这些是为 Linux 2.4\n写的，命令和内核\n  功能都能实现。</p></body></html>"
    c = convert(_write(tmp_path, "zh.html", html.encode()))
    assert c.text == "虽然这些是为 Linux 2.4 写的，命令和内核功能都能实现。"
    assert c.lang == "zh-CN"


def test_html_declared_gbk_charset(tmp_path: Path) -> None:
    html = '<html><head><meta charset="gbk"><title>网络设置</title></head><body><h1>网络设置</h1><p>主机名解析。</p></body></html>'
    c = convert(_write(tmp_path, "gbk.html", html.encode("gbk")))
    assert c.title == "网络设置" and "主机名解析。" in c.text


def test_html_http_equiv_charset(tmp_path: Path) -> None:
    html = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=big5"></head>'
            '<body><p>這是繁體中文。</p></body></html>')
    c = convert(_write(tmp_path, "big5.html", html.encode("big5")))
    assert c.text == "這是繁體中文。"


def test_html_bytes_invalid_for_declared_charset_name_the_charset(tmp_path: Path) -> None:
    raw = b'<html><head><meta charset="shift_jis"></head><body><p>ok \x85\xff\xff</p></body></html>'
    with pytest.raises(ConvertError, match=r"declared charset shift_jis at byte \d+"):
        convert(_write(tmp_path, "bad.html", raw))


def test_html_title_falls_back_to_first_h1(tmp_path: Path) -> None:
    c = convert(_write(tmp_path, "t.html", b"<body><h2>Intro</h2><h1>Main title</h1><p>x</p></body>"))
    assert c.title == "Main title"


def test_html_docbook_navigation_and_toc_dropped(tmp_path: Path) -> None:
    html = """<html><head><title>Chapter 5</title></head><body>
<div class="navheader"><table><tr><td><a href="ch04.html">Prev</a></td><td><a href="ch06.html">Next</a></td></tr></table></div>
<div class="chapter"><div class="titlepage"><h1 class="title">第 5 章 网络设置</h1></div>
<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc"><dt><a href="#a">5.1. 基本网络架构</a></dt></dl></div>
<div class="section"><h2 class="title">5.1. 基本网络架构</h2><p>正文。</p></div></div>
<div class="navfooter"><a href="index.html">Home</a><a href="ch06.html">上一页</a></div></body></html>"""
    c = convert(_write(tmp_path, "ch05.html", html.encode()))
    assert c.text == "第 5 章 网络设置\n\n5.1. 基本网络架构\n\n正文。"
    assert [(h.level, h.text) for h in c.headings] == [(1, "第 5 章 网络设置"), (2, "5.1. 基本网络架构")]


def test_html_sphinx_body_preferred_and_headerlinks_dropped(tmp_path: Path) -> None:
    html = """<html><body><div class="related" role="navigation"><a href="x">modules</a> | <a>next</a></div>
<div class="document"><div class="body" role="main"><h1>json — JSON<a class="headerlink" href="#j">¶</a></h1>
<p>Encode it.</p></div></div><div class="sphinxsidebar"><h3>Quick search</h3><form><input/></form></div></body></html>"""
    c = convert(_write(tmp_path, "json.html", html.encode()))
    assert c.text == "json — JSON\n\nEncode it."


def test_html_apache_permalinks_dropped_from_headings(tmp_path: Path) -> None:
    html = """<html><body><div id="page-content"><div id="preamble"><h1>Authentication and Authorization</h1></div>
<h2 id="gettingitworking">Getting it working <a title="Permanent link" href="#gettingitworking" class="permalink">&para;</a></h2>
<p>Run htpasswd.</p></div></body></html>"""
    c = convert(_write(tmp_path, "auth.html", html.encode()))
    assert c.text == "Authentication and Authorization\n\nGetting it working\n\nRun htpasswd."
    assert [h.text for h in c.headings] == ["Authentication and Authorization", "Getting it working"]


def test_html_empty_body_is_empty(tmp_path: Path) -> None:
    from convsearch.ingest.types import NoTextError

    with pytest.raises(NoTextError, match="no text once markup and navigation are removed"):
        convert(_write(tmp_path, "e.html", b"<html><head><title>t</title></head><body><nav>x</nav></body></html>"))
