"""Text helpers every converter shares: whitespace collapsing that knows Chinese, and the block assembler."""

from __future__ import annotations

import re

from ..types import Heading

# CJK ideographs, kana, Hangul, CJK and full-width punctuation: between two of these a line break is no space.
CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
_CJK_CHAR = re.compile(f"[{CJK}]")
_CJK_BREAK = re.compile(f"([{CJK}])[ \\t\\r]*\\n\\s*(?=[{CJK}])")
_BLANK_LINES = re.compile(r"[ \t\r\f\v]*\n(?:[ \t\r\f\v]*\n)+")
_TRAILING_SPACE = re.compile(r"[ \t\r\f\v]+\n")


def is_cjk(ch: str) -> bool:
    return bool(ch) and _CJK_CHAR.match(ch) is not None


def width(line: str) -> int:
    """How wide a line is set, in half-width cells: a Chinese character (or full-width form) takes two, so that a
    full line of Chinese and a full line of Latin letters measure alike.

    >>> width("apt-get"), width("软件包 apt")
    (7, 10)
    """
    return len(line) if line.isascii() else len(line) + len(_CJK_CHAR.findall(line))


def collapse(block: str) -> str:
    """One block's text on one line: whitespace runs become one space, a line break between two Chinese
    characters becomes nothing (wrapped Chinese has no spaces)."""
    if "\n" in block and not block.isascii():  # isascii is a flag test: English text skips the regex
        block = _CJK_BREAK.sub(r"\1", block)
    return " ".join(block.split())


def preformatted(block: str) -> str:
    """A code block: its own line breaks kept, trailing spaces and blank lines dropped (a blank line would
    read as a block boundary), tabs and leading indentation left as written."""
    block = block.replace("\r\n", "\n").replace("\r", "\n")
    block = _TRAILING_SPACE.sub("\n", block)
    block = _BLANK_LINES.sub("\n", block)
    return block.strip("\n").rstrip()


class Blocks:
    """Collects blocks and heading levels, then joins them with one blank line; offsets are computed as it goes."""

    __slots__ = ("_headings", "_parts", "_pos")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._headings: list[Heading] = []
        self._pos = 0

    def add(self, text: str, level: int = 0) -> None:
        """Append a block (already collapsed; empty ones are skipped). ``level`` > 0 makes it a heading."""
        if not text:
            return
        if self._parts:
            self._pos += 2
        if level > 0:
            self._headings.append(Heading(self._pos, level, text))
        self._parts.append(text)
        self._pos += len(text)

    def next_start(self) -> int:
        """Where the next block will start (the end of the text when no block follows)."""
        return self._pos + 2 if self._parts else 0

    def __len__(self) -> int:
        return len(self._parts)

    def build(self) -> tuple[str, tuple[Heading, ...]]:
        return "\n\n".join(self._parts), tuple(self._headings)
