"""PDF to blocks with pdfium: text per page, wrapped lines joined into paragraphs, running headers and footers
(and page numbers) dropped, headings from the outline, ``pages`` the offset where each page starts.

A running header or footer is an edge line (two at each end of a page) that recurs on most pages with only its
numbers changed ("Debian Reference 12", "xxiii" too), or one that holds the page's own number beside a title that
changes with the chapter ("Chapter 4: Function reference 10"): pages whose numbers run on with their order.

Where the text layer itself misleads: a hyphen that ends a line is kept when the document spells the word with it
(``_resolve_hyphens``), a code line wrapped with a continuation mark is one line again (``_join_wrapped_code``), and
in a document whose fonts set every ASCII quote as a closing curly one (no straight quote anywhere) those quotes
are straight again (``_straighten_quotes``: commands such as awk '{ print $3 }' stay runnable).

Paragraphs are rebuilt from lines by a few measured rules (a PDF's text layer has lines, not paragraphs):
a line ends its paragraph when it is clearly shorter than the page's full lines (p90 width, in cells: a Chinese
character is two, so a full line of Chinese beside long lines of code or English is full too), or ends in
sentence punctuation while not full; a bullet or a numbered item starts a new one. English lines are joined
with a space ("-" at a line end between letters is undone); Chinese lines with nothing.

Tables of contents, lists of tables or figures and back-of-book indexes are dropped (``_drop_contents``): they name
every section, so a keyword search matches them for many questions while they hold no answer. A line is an entry
when it ends with a page number after a dot leader, or after a title the PDF's outline names, or (an index) after a
comma; a run of lines is dropped when most of it is entries and at least three of those are certain (a numbered
title followed by a number, the shape of a table row, counts only beside certain ones). The shapes are
language-independent: digits, dots and the outline.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from ..types import Converted, ConvertError
from ._text import CJK, Blocks, collapse, is_cjk, width

_PAGE_NUMBER = re.compile(r"(?:(?:page|p\.|seite)\s*)?[-–—]?\s*\d{1,5}\s*(?:(?:/|of)\s*\d{1,5})?\s*[-–—]?"
                          r"|第\s*\d{1,5}\s*页(?:\s*[/，,]?\s*共\s*\d{1,5}\s*页)?|[ivxlcdm]{1,7}", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_SENTENCE_END = tuple(".!?:;。！？：；…\"”’)）」』")
_BULLET = re.compile(r"(?:[•◦▪‣·●○■□–—*-]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s")
_SECTION_NUMBER = re.compile(r"(?:(?:[\dA-Z]{1,3}\.)*\d{1,3}\.?|第\s*[\d一二三四五六七八九十百]+\s*[章节部分篇]|"
                             r"chapter\s*\d+|appendix\s*[A-Z])[\s:：.]*$", re.IGNORECASE)
_SOFT_HYPHEN = re.compile("[\ufffe\x02]\n?")
# where pdfium took out a hyphen at a line end; kept or dropped once the whole document's words are known
_HYPHEN_MARK = "\ue000"
_MARKED = re.compile(rf"(\w+(?:-\w+)*){_HYPHEN_MARK}(\w+(?:-\w+)*)")
_HYPHENATED = re.compile(r"\w+(?:-\w+)*")
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
    _drop_running_lines(pages, outline)
    _straighten_quotes(pages)
    _drop_contents(pages, outline)
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
            # pdfium marks any hyphen that ends a line with U+FFFE (older builds: \x02), a word's hyphenation and
            # a compound's own hyphen alike ("debian-security", "dm-crypt"): _resolve_hyphens tells them apart
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            if "\ufffe" in text or "\x02" in text:
                text = _SOFT_HYPHEN.sub(_HYPHEN_MARK, text)
            out.append([ln.strip() for ln in text.split("\n") if ln.strip()])
    except pdfium.PdfiumError as exc:
        raise ConvertError(path, "not a readable PDF (corrupt or truncated)") from exc
    if any(_HYPHEN_MARK in ln for lines in out for ln in lines):
        _resolve_hyphens(out)
    for lines in out:
        _join_wrapped_code(lines)
    return out


# a code line too long for the page is wrapped with a continuation mark at the break (DocBook's dblatex: "←-",
# LaTeX listings: "↩"); the two pieces are one line of the program
_WRAP_MARK = re.compile(r"\s*(?:←-|[↩↵⤶⏎])$")
_GLUED_AFTER = tuple("-/_.=:@")  # a break after these was inside a word, a path or an option
_GLUED_BEFORE = tuple(".,;:)]}/”’\"'")


def _join_wrapped_code(lines: list[str]) -> None:
    """Join each line that ends in a continuation mark with the line after it, in place: without a space where the
    break was inside a token ("mail_data" + ".txt", "unstable-" + "amd64"), else with one."""
    k = 0
    while k < len(lines) - 1:
        m = _WRAP_MARK.search(lines[k])
        if m is None:
            k += 1
            continue
        head, tail = lines[k][:m.start()], lines[k + 1]
        glued = head.endswith(_GLUED_AFTER) or tail.startswith(_GLUED_BEFORE)
        lines[k:k + 2] = [head + ("" if glued else " ") + tail]


# A PDF whose fonts set every ASCII quote as a curly one (DocBook's dblatex: 'run ssh with the ”-v” option',
# 'awk ’{ print $3 }’') holds no straight quote at all and far more closing quotes than opening ones.
_CURLY = (('"', "“", "”"), ("'", "‘", "’"))  # straight, opening, closing
_CURLY_SHARE = 3  # closing quotes at least this many times the opening ones (and 10 more)


def _straighten_quotes(pages: list[list[str]]) -> None:
    """In a document that has no straight quote of a kind and sets it as the closing curly one, each closing quote
    that closes no opening one becomes the straight quote again, in place; real “pairs” are kept."""
    text = "\n".join(ln for lines in pages for ln in lines)  # str.count: C speed, no walk per character
    for straight, opening, closing in _CURLY:
        if straight in text or text.count(closing) < _CURLY_SHARE * text.count(opening) + 10:
            continue
        for lines in pages:
            for k, ln in enumerate(lines):
                if closing in ln:
                    lines[k] = _straighten(ln, opening, closing, straight)


def _straighten(line: str, opening: str, closing: str, straight: str) -> str:
    if opening not in line:  # nothing opened: every closing quote is a straight one
        return line.replace(closing, straight)
    out, open_pairs = [], 0
    for ch in line:
        if ch == opening:
            open_pairs += 1
        elif ch == closing:
            if open_pairs:
                open_pairs -= 1
            else:
                ch = straight
        out.append(ch)
    return "".join(out)


def _resolve_hyphens(pages: list[list[str]]) -> None:
    """Each hyphen pdfium took out at a line end put back when it belongs to the word: a digit beside it ("UTF-32"),
    or the document spells the word with the hyphen more often than without it elsewhere ("net-tools"); else the
    word was hyphenated to fit the line and is joined ("configu-ration")."""
    words: Counter[str] = Counter()
    for lines in pages:
        for ln in lines:
            words.update(_HYPHENATED.findall(ln))  # the mark is no word character: marked words count as halves

    def put_back(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        keep = left[-1].isdigit() or right[0].isdigit() or words[f"{left}-{right}"] > words[left + right]
        return f"{left}{'-' if keep else ''}{right}"

    for lines in pages:
        for k, ln in enumerate(lines):
            if _HYPHEN_MARK in ln:
                lines[k] = _MARKED.sub(put_back, ln).replace(_HYPHEN_MARK, "")


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


def _drop_running_lines(pages: list[list[str]], outline: dict[int, list[tuple[int, str]]] | None = None) -> None:
    """Remove page numbers, lines repeated (numbers aside) at the top or bottom of most pages, and running headers
    that carry the page's own number beside a title that changes with the chapter (``_numbered_edges``)."""
    n = len(pages)
    counts: Counter[str] = Counter()
    for lines in pages:
        edge = {_running_key(ln) for ln in lines[:_EDGE_LINES] + lines[-_EDGE_LINES:]}
        counts.update(edge)
    repeated = {k for k, c in counts.items() if n >= 3 and c >= max(3, n // 2)}
    numbered = _numbered_edges(pages, {i: {_norm_title(t) for _, t in entries}
                                       for i, entries in (outline or {}).items()})
    for index, lines in enumerate(pages):
        for pos in (0, 0, -1, -1):  # up to two lines at each end
            if not lines:
                break
            line = lines[pos]
            if _PAGE_NUMBER.fullmatch(line) or _running_key(line) in repeated \
                    or (index, line) in numbered:
                lines.pop(pos)


# a page number at either end of a header line: arabic, or roman (front matter: "Debian Reference xxiii")
_EDGE_NUMBER = re.compile(r"^(\d{1,4}|[ivxlcdm]{1,7})(?=\s)|(?<=\s)(\d{1,4}|[ivxlcdm]{1,7})$", re.IGNORECASE)
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
_HEADER_MAX = 120  # a running header is one short line
_MIN_NUMBERED = 3  # pages whose edge line carries the number of the page (at one offset) before they count


def _running_key(line: str) -> str:
    """A line with its numbers as "#", roman page numbers at its ends too: the same header on every page."""
    return _DIGITS.sub("#", _EDGE_NUMBER.sub("#", line))


def _roman(token: str) -> int | None:
    """The value of a well-formed lower- or upper-case roman numeral, else None ("mix" and "dim" are words)."""
    t = token.lower()
    values = [_ROMAN_VALUES[ch] for ch in t]
    total = sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))
    return total if total > 0 and _to_roman(total) == t else None


def _to_roman(value: int) -> str:
    out = []
    for number, letters in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                            (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while value >= number:
            out.append(letters)
            value -= number
    return "".join(out)


def _numbered_edges(pages: list[list[str]], titles: dict[int, set[str]]) -> set[tuple[int, str]]:
    """(page index, line) of the edge lines that hold the page's own number beside words: "Chapter 4: Function
    reference 10", "Debian Reference xxiii". A page's number is its index plus an offset that the document keeps
    over a run of pages (one for roman front matter, one for arabic); an offset counts when at least three pages'
    edge lines agree on it and a neighbouring page too, so a chapter's number in "Chapter 3" (no page's) is never
    taken for one. ``titles``: the outline's titles by page (``_norm_title``), never headers."""
    candidates: list[tuple[int, str, str, int]] = []  # page index, line, kind, offset
    for index, lines in enumerate(pages):
        for line in {*lines[:_EDGE_LINES], *lines[-_EDGE_LINES:]}:
            if len(line) > _HEADER_MAX or not any(ch.isalpha() for ch in _EDGE_NUMBER.sub("", line)) \
                    or _norm_title(line) in titles.get(index, ()) or ". . ." in line or "..." in line:
                continue  # a heading the outline names, a contents entry
            for m in _EDGE_NUMBER.finditer(line):
                token = m.group(1) or m.group(2)
                if line[:m.start()].rstrip().endswith(("/", "of", "von", "共")):
                    continue  # "12 / 57": the page count, the same on every page
                if token.isdigit():
                    candidates.append((index, line, "arabic", int(token) - index))
                else:
                    value = _roman(token)
                    if value is not None:
                        candidates.append((index, line, "roman", value - index))
    pages_of = {(i, k, o) for i, _, k, o in candidates}
    agree = Counter((kind, offset) for _, kind, offset in pages_of)
    offsets = {key for key, count in agree.items() if count >= _MIN_NUMBERED}
    # and the page before or after numbered alike: page numbers run on, a coincidence (a contents line, a numbered
    # listing line whose number happens to be the page's) does not
    return {(index, line) for index, line, kind, offset in candidates if (kind, offset) in offsets
            and ((index - 1, kind, offset) in pages_of or (index + 1, kind, offset) in pages_of)}


# --- tables of contents and indexes -------------------------------------------------------------------------
_LEADER_CHARS = ".·・．…‥"
_ROMAN = "ivxlcdmIVXLCDM"
# a page reference at the end of a line: one arabic or roman number, or (an index) arabic numbers and ranges after
# commas; not glued to a word before it ("x86", "v2" are no page numbers)
_PAGE_TAIL = re.compile(r"(?<![\w.\-/])(?:(?:[A-Z]-)?\d{1,4}(?:\s*[,，]\s*(?:[A-Z]-)?\d{1,4}(?:\s*[-–]\s*\d{1,4})?)*"
                        r"|[ivxlcdm]{1,7})$", re.IGNORECASE)
_NUMBERED_TITLE = re.compile(r"(?:(?:[\dA-Z]{1,3}\.)*\d{1,3}\.?|[A-Z](?:\.\d{1,3})*|(?i:chapter)\s+\d+"
                             r"|(?i:appendix)\s+[A-Z]|第\s*[\d一二三四五六七八九十百]+\s*[章节部分篇])"
                             rf"(?:\s+|(?=[{CJK}]))(?=\D)")
_PARA_END = tuple(".!?;。！？；")  # a line of prose ends so; a title may end in ")" ("apt-get(8)") or a quote
# a numbered title + number; a leader / outline / index entry; another line; an index's letter ("A"); prose
_ENTRY, _CERTAIN, _GLUE, _MARK, _BODY = 1, 2, 3, 4, 0
_MIN_CERTAIN = 3  # certain entries a run needs (one, when it continues a contents run of the page before)
_ENTRY_SHARE = 0.6  # entries among a run's lines
_HEADER_GLUE = 60  # a run may start with up to two short non-entry lines: "Contents", "List of Tables", a header


def _norm_title(text: str) -> str:
    """A title compared without its section number, and loosely (``_loose``: spaces, quotes, case) as the outline is
    compared with headings ("3.1 Package Maintainer’s Duties")."""
    m = _NUMBERED_TITLE.match(text)
    return _loose(text[m.end():] if m else text)


def _line_kind(line: str, titles: frozenset[str]) -> int:
    last = line[-1]
    if len(line) <= 2 and not line.isdigit():
        return _MARK
    if not (last.isdigit() or last in _ROMAN):
        return _BODY if line.endswith(_PARA_END) else _GLUE
    tail = _PAGE_TAIL.search(line, max(0, len(line) - 40))
    if tail is None or tail.start() == 0:
        return _GLUE
    head = line[:tail.start()]
    title = head.rstrip(" " + _LEADER_CHARS)
    if not title.strip():
        return _GLUE
    leader = head[len(title):]
    if sum(3 if ch in "…‥" else 1 for ch in leader if ch in _LEADER_CHARS) >= 3:
        return _CERTAIN
    if not head.endswith((" ", "\t")):  # "Python3": a number glued to its word is no page reference
        return _GLUE
    title = title.strip()
    if title.endswith((",", "，")):
        return _CERTAIN if len(title) > 2 and not title[:-1].endswith(_PARA_END) else _GLUE  # "apt-get, 12, 45"
    if "," in tail.group() or "，" in tail.group():
        return _GLUE
    if _norm_title(title) in titles:
        return _CERTAIN
    if _NUMBERED_TITLE.match(title) and not title.endswith(_PARA_END):
        return _ENTRY
    return _GLUE


def _drop_contents(pages: list[list[str]], outline: dict[int, list[tuple[int, str]]]) -> int:
    """Remove table-of-contents and index runs from the pages' lines; returns how many lines went."""
    titles = frozenset(t for t in (_norm_title(text) for entries in outline.values() for _, text in entries)
                       if len(t) >= 2)
    dropped = 0
    continuing = False  # the page before ended inside a dropped run
    for lines in pages:
        # most pages have too few lines ending in a number to hold a contents run: skip them unclassified
        numbered = sum(1 for ln in lines if ln[-1].isdigit() or ln[-1] in _ROMAN)
        if numbered < (1 if continuing else _MIN_CERTAIN):
            continuing = False
            continue
        kinds = [_line_kind(ln, titles) for ln in lines]
        keep = [True] * len(lines)
        ends_in_contents = False
        i = 0
        while i < len(lines):
            if kinds[i] == _BODY:
                i += 1
                continue
            j = i
            while j < len(lines) and kinds[j] != _BODY:
                j += 1
            start, end = i, j
            while end > start and kinds[end - 1] in (_GLUE, _MARK):  # what follows the last entry is not the contents'
                end -= 1
            first = start  # where the entries begin; up to two short lines before them may be its header
            while first < end and kinds[first] in (_GLUE, _MARK):
                first += 1
            start = max(start, first - 2)
            while start < first and len(lines[start]) > _HEADER_GLUE:
                start += 1
            if _is_contents(kinds[start:end], continuing and start == 0):
                for k in range(start, end):
                    keep[k] = False
                dropped += end - start
                ends_in_contents = end == len(lines)
            i = j
        continuing = ends_in_contents
        if dropped and not all(keep):
            lines[:] = [ln for ln, k in zip(lines, keep, strict=True) if k]
    return dropped


def _is_contents(kinds: list[int], continues: bool) -> bool:
    if not kinds:
        return False
    certain = kinds.count(_CERTAIN)
    entries = certain + kinds.count(_ENTRY)
    if certain < (1 if continues else _MIN_CERTAIN) or entries < _ENTRY_SHARE * (len(kinds) - kinds.count(_MARK)):
        return False
    glue = 0  # three other lines in a row: a paragraph, which a table of contents does not hold
    for kind in kinds:
        glue = glue + 1 if kind == _GLUE else 0
        if glue >= 3:
            return False
    return True


def _page_blocks(lines: list[str], wanted: list[tuple[int, str]]) -> tuple[list[tuple[str, int]], set[str]]:
    """One page's blocks as (text, heading level or 0), and the outline titles found among its lines."""
    found: set[str] = set()
    blocks: list[tuple[str, int]] = []
    if not lines:
        return blocks, found
    widths = [width(ln) for ln in lines]  # a full line of Chinese holds half the characters of a full English one
    ordered = sorted(widths)
    full = ordered[int(0.9 * (len(ordered) - 1))]
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
        if widths[i] < 0.7 * full or (line.endswith(_SENTENCE_END) and widths[i] < 0.9 * full):
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
    """Whether a line is the outline's title, with or without its number; compared loosely (``_loose``), as the
    outline is plain text where the page has typeset quotes and its own spaces."""
    if line == title:
        return True
    seen, wanted = _loose(line), _loose(title)
    if not wanted or not seen.endswith(wanted):
        return False
    before = seen[: -len(wanted)]
    return not before or bool(_SECTION_NUMBER.fullmatch(before) or _SECTION_WORD.fullmatch(before))


_QUOTES = str.maketrans({ch: '"' for ch in "“”„‟″"} | {ch: "'" for ch in "‘’‚‛′"})
_SECTION_WORD = re.compile(r"chapter|appendix|part|section", re.IGNORECASE)  # "Appendix A Copying" for "A Copying"


@lru_cache(maxsize=4096)  # each outline title is compared with many lines, each line with many titles
def _loose(text: str) -> str:
    """Text without white space, quotes made straight, case folded ("12.3.3 Flex —a better Lex", "Flex — a ...")."""
    return "".join(text.translate(_QUOTES).split()).casefold()


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
