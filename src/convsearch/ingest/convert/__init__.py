"""One file to :class:`~convsearch.ingest.types.Converted`: the suffix picks the converter, one module per format.

    >>> kind_of(Path("notes/a.MD"))
    'markdown'
    >>> kind_of(Path("/usr/share/doc/foo/README.md.gz"))  # gzip-compressed, as Debian ships docs over 4 kB
    'markdown'

``convert`` checks the size by ``stat`` before reading, reads the bytes once, and hands them to the format's
module; every failure (unreadable, too big, empty, binary, corrupt, encrypted, scanned) is a
:class:`ConvertError` with a one-line reason, never a traceback.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from ..types import Converted, ConvertError, NoTextError

SUFFIXES = {".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf", ".docx": "docx", ".md": "markdown",
            ".markdown": "markdown", ".txt": "text"}
MAX_BYTES = 200 * 2**20
# bumped whenever a converter gives another text or structure for the same file; it is part of a manifest's splitter
# id (``sync.splitter_id``), so the next sync converts and splits every file again. 2: PDF contents and index pages
# dropped. 3: a PDF line's fullness measured in cells (a Chinese character is two). 4: PDF running headers with
# roman page numbers or with the page's number beside a changing chapter title dropped. 5: a hyphen at a PDF line
# end kept when the document spells the word with it (or a digit is beside it). 6: a wrapped code line joined at
# its continuation mark. 7: PDF outline titles found in the text loosely (quotes, spaces, case, "Appendix"). 8: in
# a PDF that sets every ASCII quote as a closing curly one, those quotes made straight again. 9: the Apache manual's
# "¶" permalink after each heading dropped (a.permalink, as Sphinx's a.headerlink). 10: a PDF's outline titles
# compared with contents lines and running headers as loosely as with headings (typeset quotes too). 11: Markdown's
# HTML comments dropped.
CONVERTER_VERSION = "11"

__all__ = ["CONVERTER_VERSION", "MAX_BYTES", "SUFFIXES", "convert", "convert_bytes", "gunzip", "kind_of"]


def kind_of(path: Path) -> str | None:
    """The converter a file's suffix selects (``html``, ``pdf``, ``docx``, ``markdown``, ``text``), or None. A
    ``.gz`` file is read as what its name says inside it (``README.md.gz``: Markdown)."""
    suffix = path.suffix.lower()
    if suffix == ".gz":
        suffix = Path(path.stem).suffix.lower()
    return SUFFIXES.get(suffix)


def convert(path: Path, *, max_bytes: int = MAX_BYTES) -> Converted:
    """The text and structure of one file; a :class:`ConvertError` names the file and the one-line reason."""
    kind = kind_of(path)
    where = str(path)
    if kind is None:
        raise ConvertError(where, f"unsupported file type {path.suffix or '(no suffix)'}; use one of "
                                  + ", ".join(sorted(SUFFIXES)) + " (or one of those gzip-compressed, .gz)")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ConvertError(where, f"over the size limit ({_mb(size)} MB > {_mb(max_bytes)} MB)")
        raw = path.read_bytes()
    except PermissionError as exc:
        raise ConvertError(where, "cannot read (permission denied)") from exc
    except IsADirectoryError as exc:
        raise ConvertError(where, "is a directory, not a file") from exc
    except OSError as exc:
        raise ConvertError(where, f"cannot read ({exc.strerror or exc.__class__.__name__})") from exc
    if path.suffix.lower() == ".gz":
        raw = gunzip(raw, where, max_bytes=max_bytes)
    return convert_bytes(raw, where, kind)


def gunzip(raw: bytes, path: str, *, max_bytes: int = MAX_BYTES) -> bytes:
    """The content of a gzip file (every member of it, as ``gzip.decompress`` reads them), never more than
    ``max_bytes`` of it: a file that grows past the limit is a :class:`ConvertError`, as are corrupt and truncated
    ones (``path`` names the file)."""
    out: list[bytes] = []
    size = 0
    data = raw
    try:
        while data:
            d = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer, checked
            chunk = d.decompress(data, max_bytes + 1 - size)
            size += len(chunk)
            if size > max_bytes or d.unconsumed_tail:
                raise ConvertError(path, f"over the size limit once decompressed (> {_mb(max_bytes)} MB)")
            if not d.eof:
                raise ConvertError(path, "not a readable gzip file (truncated)")
            out.append(chunk)
            data = d.unused_data.lstrip(b"\0")  # another member, or the zero padding some writers leave
    except zlib.error as exc:
        raise ConvertError(path, "not a readable gzip file (corrupt)") from exc
    return b"".join(out)


def convert_bytes(raw: bytes, path: str, kind: str) -> Converted:
    """Convert bytes already read; ``path`` is only used in error messages."""
    if not raw.strip():
        raise ConvertError(path, "the file is empty")
    if kind == "html":
        from .html import convert_html as fn
    elif kind == "pdf":
        from .pdf import convert_pdf as fn
    elif kind == "docx":
        from .docx import convert_docx as fn
    elif kind == "markdown":
        from .markdown import convert_markdown as fn
    elif kind == "text":
        from .text import convert_text as fn
    else:
        raise ConvertError(path, f"unknown converter {kind!r}")
    out = fn(raw, path)
    if not out.text.strip():
        if kind == "html":  # a page of navigation only (a table of contents): not bad input, nothing to index
            raise NoTextError(path, "no text once markup and navigation are removed")
        raise ConvertError(path, "no text layer (scanned?)" if kind == "pdf" else "the file is empty")
    return out


def _mb(n: int) -> str:
    mb = n / 2**20
    return f"{mb:.0f}" if mb >= 10 or mb == int(mb) else f"{mb:.1f}"
