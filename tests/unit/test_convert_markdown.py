"""Markdown converter: front matter, ATX and setext headings, code fences, lists and tables as blocks."""

from __future__ import annotations

from pathlib import Path

from convsearch.ingest.convert import convert

DOC = """---
title: "Network guide"
id: net-1
url: https://example.org/net
date: 2024-05-01
lang: en
---
# Setting up the network

The basic   network
infrastructure is described here.

Setext heading
--------------

- first item
  continues here
- second item

```bash
# not a heading
echo hi

echo after a blank line
```

| Package | Size |
|---------|-----:|
| ifupdown | 199 |

## Closing ##
Last line.
"""


def _md(tmp_path: Path, text: str, name: str = "doc.md") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_markdown_front_matter_goes_to_metadata_and_title_wins(tmp_path: Path) -> None:
    c = convert(_md(tmp_path, DOC))
    assert c.kind == "markdown" and c.title == "Network guide" and c.lang == "en"
    assert c.metadata["id"] == "net-1" and c.metadata["url"] == "https://example.org/net"
    assert c.metadata["date"] == "2024-05-01"
    assert "title:" not in c.text


def test_markdown_blocks_and_headings(tmp_path: Path) -> None:
    c = convert(_md(tmp_path, DOC))
    blocks = c.text.split("\n\n")
    assert blocks == [
        "Setting up the network",
        "The basic network infrastructure is described here.",
        "Setext heading",
        "- first item continues here",
        "- second item",
        "# not a heading\necho hi\necho after a blank line",
        "Package | Size",
        "ifupdown | 199",
        "Closing",
        "Last line.",
    ]
    assert [(h.level, h.text) for h in c.headings] == [(1, "Setting up the network"), (2, "Setext heading"),
                                                       (2, "Closing")]
    for h in c.headings:
        assert c.text[h.start:h.start + len(h.text)] == h.text


def test_markdown_title_from_first_heading_without_front_matter(tmp_path: Path) -> None:
    c = convert(_md(tmp_path, "intro text\n\n# 网络设置\n\n中文段落\n换行继续。\n", "zh.markdown"))
    assert c.title == "网络设置"
    assert c.text == "intro text\n\n网络设置\n\n中文段落换行继续。"
    assert c.metadata == {}


def test_markdown_hash_without_space_is_text_and_unclosed_fence_runs_to_end(tmp_path: Path) -> None:
    c = convert(_md(tmp_path, "#hashtag here\n\n~~~\ncode # x\n\n  more"))
    assert c.headings == ()
    assert c.text == "#hashtag here\n\ncode # x\n  more"


def test_markdown_crlf_and_thematic_break(tmp_path: Path) -> None:
    c = convert(_md(tmp_path, "Title\r\n=====\r\n\r\npara one\r\n\r\n***\r\n\r\npara two\r\n"))
    assert c.text == "Title\n\npara one\n\npara two"
    assert c.headings[0].level == 1


def test_markdown_html_comments_are_hidden_as_a_renderer_hides_them(tmp_path: Path) -> None:
    # Node.js's API docs: a comment block under nearly every heading, and one-line comments before the first
    text = ("# Process\n\n<!-- introduced_in=v0.10.0 -->\n\n<!-- type=global -->\n"
            "The `process` object provides information.\n\n"
            "## `process.availableMemory()`\n\n<!-- YAML\nadded: v20.13.0\n-->\n\n"
            "Gets the amount of free memory <!-- inline note --> still available.\n\n"
            "```html\n<!-- a comment in code is code -->\n```\n")
    c = convert(_md(tmp_path, text))
    assert c.text.split("\n\n") == [
        "Process",
        "The `process` object provides information.",
        "`process.availableMemory()`",
        "Gets the amount of free memory still available.",
        "<!-- a comment in code is code -->",
    ]
    assert [h.text for h in c.headings] == ["Process", "`process.availableMemory()`"]
