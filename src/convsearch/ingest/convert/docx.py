"""DOCX to blocks with python-docx: paragraphs and tables in document order, headings from paragraph styles.

A heading is a paragraph whose style (or a style it is based on) is "Heading N" by name or id, or carries an
outline level; that covers Word's localised style names ("标题 1"), whose id stays ``Heading1`` or whose
definition keeps ``w:outlineLvl``. The "Title" style gives the title. DOCX has no pages.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from ..types import Converted, ConvertError
from ._text import Blocks, collapse

_HEADING_NAME = re.compile(r"(?:heading|标题|標題|überschrift|titre|título)\s*(\d)$", re.IGNORECASE)
_HEADING_ID = re.compile(r"heading(\d)$", re.IGNORECASE)
_TITLE_NAMES = frozenset({"title", "标题", "標題", "titel", "titre", "título"})


def convert_docx(raw: bytes, path: str) -> Converted:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(raw))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ConvertError(path, f"not a readable DOCX ({_why(exc)})") from exc
    except Exception as exc:  # noqa: BLE001 - lxml and zip errors of a damaged file: one line, never a traceback
        raise ConvertError(path, f"not a readable DOCX ({exc.__class__.__name__})") from exc
    blocks = Blocks()
    title = ""
    levels: dict[str, int] = {}  # style id -> heading level (0: body text, -1: title)
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            _table(item, blocks)
            continue
        text = collapse(item.text)
        if not text:
            continue
        level = _level(item.style, levels)
        if level == -1:  # the title stays in the text as a plain block: the headings below it are its sections
            title = title or text
            level = 0
        blocks.add(text, level)
    body, headings = blocks.build()
    core_title = (document.core_properties.title or "").strip()
    title = title or core_title or (headings[0].text if headings else "")
    meta = {"title": title} if title else {}
    author = (document.core_properties.author or "").strip()
    if author:
        meta["author"] = author
    lang = (document.core_properties.language or "").strip() or None
    return Converted(text=body, title=title, headings=headings, lang=lang, kind="docx", metadata=meta)


def _table(table: Any, blocks: Blocks) -> None:
    for row in table.rows:
        seen: set[int] = set()
        cells: list[str] = []
        for cell in row.cells:  # a merged cell is repeated once per grid column it spans
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            text = collapse(cell.text)
            if text:
                cells.append(text)
        blocks.add(" | ".join(cells))


def _level(style: Any, cache: dict[str, int]) -> int:
    if style is None:
        return 0
    key = style.style_id or style.name or ""
    if key in cache:
        return cache[key]
    level = 0
    node, depth = style, 0
    while node is not None and depth < 10:  # the style itself, then what it is based on
        name = (node.name or "").strip()
        sid = (node.style_id or "").strip()
        if name.lower() in _TITLE_NAMES or sid.lower() == "title":
            level = -1
            break
        m = _HEADING_NAME.match(name) or _HEADING_ID.match(sid)
        if m and m.group(1) != "0":
            level = int(m.group(1))
            break
        outline = _outline_level(node)
        if outline is not None:
            level = outline + 1
            break
        node, depth = node.base_style, depth + 1
    cache[key] = level
    return level


def _outline_level(style: Any) -> int | None:
    ppr = style.element.pPr
    if ppr is None:
        return None
    for child in ppr.iterchildren():
        if child.tag.endswith("}outlineLvl"):
            val = child.get("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}val")
            if val is not None and val.isdigit() and int(val) < 9:  # 9 is "body text"
                return int(val)
    return None


def _why(exc: BaseException) -> str:
    if isinstance(exc, zipfile.BadZipFile):
        return "not a zip archive"
    if isinstance(exc, KeyError):
        return "no word/document.xml in the archive"
    text = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    return text[:120]
