"""What a converter hands the passage splitter: one file's text with its structure (headings, pages).

The text is plain: blocks (paragraphs, list items, table rows, headings) separated by a blank line (``"\\n\\n"``);
a heading is its own block. ``headings`` and ``pages`` point into the text by character offset, so the splitter
can say, for any span, which heading path it sits under and which page it starts and ends on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import DataFileError


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading block: where it starts in ``Converted.text``, its level (1 = top) and its text."""

    start: int
    level: int
    text: str


@dataclass(frozen=True, slots=True)
class Converted:
    """One converted document.

    ``pages``: for a paged format (PDF), the offset where each page starts (page 1 at ``pages[0]``, usually 0);
    empty for unpaged formats. ``lang`` is the converter's hint (HTML ``lang`` attribute), None when unknown.
    ``kind`` names the converter (``html``, ``pdf``, ``docx``, ``markdown``, ``text``)."""

    text: str
    title: str = ""
    headings: tuple[Heading, ...] = ()
    pages: tuple[int, ...] = ()
    lang: str | None = None
    kind: str = "text"
    metadata: dict[str, str] = field(default_factory=dict)


class ConvertError(DataFileError):
    """A file that cannot be turned into text: ``reason`` is the one-line why (e.g. "no text layer (scanned?)",
    "encrypted PDF", "binary data under a .txt suffix"). The sync reports it for that file and goes on."""


class NoTextError(ConvertError):
    """A readable file that holds no text once its markup and navigation are gone (a table of contents page): the
    sync counts it "without text", not failed."""
