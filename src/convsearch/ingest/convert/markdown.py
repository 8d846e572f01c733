"""Markdown to blocks with a line scanner: ATX and setext headings, fenced code (its ``#`` lines are code, not
headings), list items and table rows as their own blocks, YAML-style front matter into ``metadata``.

The text is kept as written apart from the structure marks: heading ``#``s, fence lines, table pipes and the
table's ``---`` row go; inline markup (``**``, links) stays, since it is what the author wrote and search
tokenisers skip punctuation anyway. HTML comments go, as a renderer hides them (Node.js's API docs carry a
``<!-- YAML added: v0.7.7 -->`` block under nearly every heading: 109 in process.md, each the start of a passage).
"""

from __future__ import annotations

import re

from ..encoding import decode
from ..types import Converted
from ._text import Blocks, collapse, preformatted
from .text import first_line

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_TABLE_RULE = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_FRONT_KEY = re.compile(r"([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)$")
_COMMENT = re.compile(r"<!--.*?-->", re.S)


def convert_markdown(raw: bytes, path: str) -> Converted:
    text = decode(raw, path)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    meta, start = front_matter(lines)
    blocks = Blocks()
    para: list[str] = []
    fence = ""  # the open fence's marker run, "" outside code
    code: list[str] = []

    def flush() -> None:
        if para:
            joined = "\n".join(para)
            if "<!--" in joined:  # a comment inside a paragraph (raw inline HTML)
                joined = _COMMENT.sub("", joined)
            blocks.add(collapse(joined))
            para.clear()

    comment = False  # inside an HTML comment block: its lines are hidden, up to the one holding "-->"
    for i in range(start, len(lines)):
        line = lines[i]
        if comment:
            comment = "-->" not in line
            continue
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                blocks.add(preformatted("\n".join(code)))
                code.clear()
                fence = ""
            else:
                code.append(line)
            continue
        s = line.strip()
        if not s:
            flush()
            continue
        first = s[0]
        if first == "<" and s.startswith("<!--") and len(line) - len(line.lstrip(" ")) <= 3:
            flush()  # an HTML block of CommonMark's second kind: the lines up to the one with "-->"
            comment = "-->" not in s[4:]
            continue
        if first in "`~" and (m := _FENCE.match(line)):
            flush()
            fence = m.group(1)
            continue
        if first == "#" and (m := _ATX.match(line)):
            flush()
            blocks.add(collapse(m.group(2) or ""), len(m.group(1)))
            continue
        if first in "=-" and para and _SETEXT.match(line) and not _LIST_ITEM.match(para[0]):
            heading = collapse("\n".join(para))
            para.clear()
            blocks.add(heading, 1 if first == "=" else 2)
            continue
        if first in "-*_" and _THEMATIC.match(line):
            flush()
            continue
        if first == "|":
            flush()
            if not _TABLE_RULE.match(s):
                cells = (collapse(c) for c in s.strip("|").split("|"))
                blocks.add(" | ".join(c for c in cells if c))
            continue
        if (first in "-*+" or first.isdigit()) and _LIST_ITEM.match(line):
            flush()
        para.append(line)
    flush()
    if code:  # an unclosed fence runs to the end of the file, as CommonMark says
        blocks.add(preformatted("\n".join(code)))
    body, headings = blocks.build()
    title = meta.get("title", "")
    if not title and headings:
        title = next((h for h in headings if h.level == 1), headings[0]).text
    if not title:
        title = first_line(body)
    lang = meta.get("lang") or None
    return Converted(text=body, title=title, headings=headings, lang=lang, kind="markdown", metadata=meta)


def front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    """``key: value`` pairs between a first line ``---`` and the next ``---`` (or ``...``) line, and the index of
    the first line after it; ({}, 0) when there is none. Values are scalars: quotes stripped, lists left as text."""
    if not lines or lines[0].rstrip() != "---":
        return {}, 0
    for end in range(1, min(len(lines), 200)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        return {}, 0
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        m = _FRONT_KEY.match(line)
        if m and m.group(2).strip():
            value = m.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            meta[m.group(1).lower()] = value
    return meta, end + 1
