"""PDF to blocks with pdfium: text per page, wrapped lines joined into paragraphs, running headers and footers
(and page numbers) dropped, headings from the outline, ``pages`` the offset where each page starts.

Paragraphs are rebuilt from lines by a few measured rules (a PDF's text layer has lines, not paragraphs):
a line ends its paragraph when it is clearly shorter than the page's full lines (p90 length), or ends in
sentence punctuation while not full; a bullet or a numbered item starts a new one. English lines are joined
with a space ("-" at a line end between letters is undone); Chinese lines with nothing.
"""

from __future__ import annotations

import re
from collections import Counter

from ..types import Converted, ConvertError
from ._text import Blocks, collapse, is_cjk

_PAGE_NUMBER = re.compile(r"(?:(?:page|p\.|seite)\s*)?[-–—]?\s*\d{1,5}\s*(?:(?:/|of)\s*\d{1,5})?\s*[-–—]?"
                          r"|第\s*\d{1,5}\s*页(?:\s*[/，,]?\s*共\s*\d{1,5}\s*页)?|[ivxlcdm]{1,7}", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_SENTENCE_END = tuple(".!?:;。！？：；…\"”’)）」』")
_BULLET = re.compile(r"(?:[•◦▪‣·●○■□–—*-]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s")
_SECTION_NUMBER = re.compile(r"(?:(?:[\dA-Z]{1,3}\.)*\d{1,3}\.?|第\s*[\d一二三四五六七八九十百]+\s*[章节部分篇]|"
                             r"chapter\s+\d+|appendix\s+[A-Z])[\s:：.]*$", re.IGNORECASE)
_SOFT_HYPHEN = re.compile("[\ufffe\x02]\n?")
_PLACEHOLDER_TITLES = frozenset({"untitled", "untitled document", "no title", "title"})
_EDGE_LINES = 2  # lines at each end of a page examined for running headers/footers


def convert_pdf(raw: bytes, path: str) -> Converted:
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as exc:
        msg = str(exc).lower()
        if "password" in msg:
            raise ConvertError(path, "encrypted PDF (needs a password)") from exc
        raise ConvertError(path, "not a readable PDF (corrupt or truncated)") from exc
    try:
        pages = _page_lines(doc, path)
        outline = _outline(doc)
        title = collapse(doc.get_metadata_value("Title") or "")
        if title.lower() in _PLACEHOLDER_TITLES:  # what a PDF maker writes when nobody set one
            title = ""
    finally:
        doc.close()
    if not any(pages):
        raise ConvertError(path, "no text layer (scanned?)")
    _drop_running_lines(pages)
    blocks = Blocks()
    starts: list[int] = []
    for index, lines in enumerate(pages):
        starts.append(blocks.next_start())
        wanted = outline.get(index, [])
        page, found = _page_blocks(lines, wanted)
        for level, text in wanted:
            if text not in found:  # an outline entry whose title is not in the text: a heading at the page start
                blocks.add(text, level)
        for text, level in page:
            blocks.add(text, level)
    body, headings = blocks.build()
    end = len(body)
    page_starts = tuple(min(s, end) for s in starts)
    if not title:
        title = body.split("\n", 1)[0][:200] if body else ""
    return Converted(text=body, title=title, headings=headings, pages=page_starts, kind="pdf",
                     metadata={"title": title, "page_count": str(len(pages))} if title else
                     {"page_count": str(len(pages))})


def _page_lines(doc: object, path: str) -> list[list[str]]:
    import pypdfium2 as pdfium

    out: list[list[str]] = []
    try:
        for i in range(len(doc)):  # type: ignore[arg-type]
            page = doc[i]  # type: ignore[index]
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range()
            finally:
                textpage.close()
                page.close()
            # pdfium marks a hyphen it judged to split a word across lines with U+FFFE (older builds: \x02)
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            if "\ufffe" in text or "\x02" in text:
                text = _SOFT_HYPHEN.sub("", text)
            out.append([ln.strip() for ln in text.split("\n") if ln.strip()])
    except pdfium.PdfiumError as exc:
        raise ConvertError(path, "not a readable PDF (corrupt or truncated)") from exc
    return out


def _outline(doc: object) -> dict[int, list[tuple[int, str]]]:
    """Outline entries by page index: (level 1-based, title)."""
    out: dict[int, list[tuple[int, str]]] = {}
    try:
        for bm in doc.get_toc(max_depth=6):  # type: ignore[attr-defined]
            dest = bm.get_dest()
            index = dest.get_index() if dest is not None else None
            title = collapse(bm.get_title() or "")
            if index is not None and title:
                out.setdefault(index, []).append((min(bm.level + 1, 6), title))
    except Exception:  # noqa: BLE001 - a broken outline costs the headings, never the text
        return out
    return out


def _drop_running_lines(pages: list[list[str]]) -> None:
    """Remove page numbers and lines repeated (digits aside) at the top or bottom of most pages."""
    n = len(pages)
    counts: Counter[str] = Counter()
    for lines in pages:
        edge = {_DIGITS.sub("#", ln) for ln in lines[:_EDGE_LINES] + lines[-_EDGE_LINES:]}
        counts.update(edge)
    repeated = {k for k, c in counts.items() if n >= 3 and c >= max(3, n // 2)}
    for lines in pages:
        for pos in (0, 0, -1, -1):  # up to two lines at each end
            if not lines:
                break
            line = lines[pos]
            if _PAGE_NUMBER.fullmatch(line) or _DIGITS.sub("#", line) in repeated:
                lines.pop(pos)


def _page_blocks(lines: list[str], wanted: list[tuple[int, str]]) -> tuple[list[tuple[str, int]], set[str]]:
    """One page's blocks as (text, heading level or 0), and the outline titles found among its lines."""
    found: set[str] = set()
    blocks: list[tuple[str, int]] = []
    if not lines:
        return blocks, found
    lengths = sorted(len(ln) for ln in lines)
    full = lengths[int(0.9 * (len(lengths) - 1))]
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append((_join(para), 0))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        hit = _heading_match(lines, i, wanted, found)
        if hit is not None:
            level, text, used = hit
            flush()
            blocks.append((_join(lines[i:i + used]), level))
            found.add(text)
            i += used
            continue
        if para and _BULLET.match(line):
            flush()
        para.append(line)
        if len(line) < 0.7 * full or (line.endswith(_SENTENCE_END) and len(line) < 0.9 * full):
            flush()
        i += 1
    flush()
    return blocks, found


def _heading_match(lines: list[str], i: int, wanted: list[tuple[int, str]],
                   found: set[str]) -> tuple[int, str, int] | None:
    """The outline entry that line i (with up to two more lines, for a wrapped title) spells, if any."""
    if not wanted:
        return None
    for level, title in wanted:
        if title in found:
            continue
        for used in range(1, 4):
            if i + used > len(lines):
                break
            joined = _join(lines[i:i + used])
            if _spells(joined, title):
                return level, title, used
            if len(joined) >= len(title) + 20:
                break
    return None


def _spells(line: str, title: str) -> bool:
    if line == title:
        return True
    if line.endswith(title):
        return bool(_SECTION_NUMBER.fullmatch(line[: -len(title)].strip()))
    return False


def _join(lines: list[str]) -> str:
    out = lines[0]
    for nxt in lines[1:]:
        if not out:
            out = nxt
            continue
        last = out[-1]
        if last == "-" and len(out) > 1 and out[-2].isalpha() and nxt[:1].islower():
            out = out[:-1] + nxt  # "hyphen-\nation" was one word
        elif is_cjk(last) and is_cjk(nxt[:1]):
            out += nxt
        else:
            out += " " + nxt
    return " ".join(out.split())
