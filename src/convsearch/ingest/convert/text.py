"""Plain text to blocks: paragraphs are separated by blank lines; the first non-blank line is the title."""

from __future__ import annotations

import re

from ..encoding import decode
from ..types import Converted
from ._text import Blocks, collapse

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v\u3000]*\n\s*")
TITLE_CHARS = 200


def convert_text(raw: bytes, path: str) -> Converted:
    text = decode(raw, path)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = Blocks()
    for para in _PARAGRAPH_BREAK.split(text):
        blocks.add(collapse(para))
    body, _ = blocks.build()
    return Converted(text=body, title=collapse(first_line(text)), kind="text")


def first_line(text: str) -> str:
    """The first non-blank line, cut to 200 characters at a word boundary where there is one."""
    for line in text.lstrip().split("\n", 1)[:1]:
        line = line.strip()
        if len(line) <= TITLE_CHARS:
            return line
        cut = line[:TITLE_CHARS]
        space = cut.rfind(" ")
        return (cut[:space] if space > TITLE_CHARS // 2 else cut).rstrip() + "…"
    return ""
