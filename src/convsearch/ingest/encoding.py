"""Bytes of a text-like file (HTML, Markdown, plain text) to ``str``, with the encoding found in a fixed order.

    BOM (UTF-8, UTF-16, UTF-32) ─► the declared charset (HTML) ─► strict UTF-8 ─► charset-normalizer over a short
    list of plausible code pages (Chinese first, Latin-1 last)

Binary data under a text suffix (NUL bytes or mostly control characters in the first 8 KB) is refused rather
than decoded into noise. Every failure is a :class:`ConvertError` with a one-line reason.
"""

from __future__ import annotations

import codecs

from .types import ConvertError

# Code pages charset-normalizer may choose among: what zh and en users' files are actually in. Order is a
# tie-break only; latin_1 decodes anything, so it comes last.
CANDIDATES = ("gb18030", "big5", "utf_16", "cp1252", "shift_jis", "euc_kr", "latin_1")
SNIFF_BYTES = 8192

_BOMS = (  # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)
# Declared names that mean a superset in practice (the WHATWG encoding standard's label table does the same).
_DECLARED_ALIASES = {"gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "iso-8859-1": "cp1252",
                     "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252", "big5-hkscs": "big5hkscs"}
# Control bytes that text files do contain: tab, LF, VT, FF, CR, ESC (ANSI colours in logs).
_TEXT_CONTROLS = frozenset(b"\t\n\x0b\x0c\r\x1b")
_CONTROL_DELETE = bytes(b for b in range(32) if b not in _TEXT_CONTROLS) + b"\x7f"


def decode(raw: bytes, path: str, *, declared: str | None = None) -> str:
    """The text of ``raw``; ``declared`` is a charset the file names itself (HTML ``<meta charset>``).

    >>> decode("这是一段中文文本。".encode("gbk"), "a.txt")
    '这是一段中文文本。'

    Guessing needs some text: a few characters alone can be valid GBK and valid Big5 at once.
    """
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(codec)
            except UnicodeDecodeError as exc:
                raise ConvertError(path, f"invalid {codec} at byte {exc.start}") from exc
    if looks_binary(raw):
        raise ConvertError(path, "binary data, not text")
    if declared:
        label = _codec(declared)
        # A page labelled with a legacy charset whose bytes are valid UTF-8 with non-ASCII in them is, in practice,
        # UTF-8 under a stale label (a GBK or cp1252 text almost never forms valid UTF-8 sequences by chance).
        if label is not None and label != "utf-8" and not raw.isascii() and _is_utf8(raw):
            return raw.decode("utf-8")
        if label is not None:
            try:
                return raw.decode(label)
            except UnicodeDecodeError as exc:
                raise ConvertError(path, f"invalid bytes for its declared charset {declared} at byte {exc.start}") \
                    from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return _guess(raw, path)


def looks_binary(raw: bytes) -> bool:
    """NUL bytes, or more than 30 % control characters, in the first 8 KB (a BOM is checked before this)."""
    head = raw[:SNIFF_BYTES]
    if not head:
        return False
    if b"\x00" in head:
        return True
    controls = len(head) - len(head.translate(None, _CONTROL_DELETE))
    return controls > 0.3 * len(head)


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _codec(name: str) -> str | None:
    name = name.strip().strip("\"'").lower()
    name = _DECLARED_ALIASES.get(name, name)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None  # an unknown label is ignored, as browsers do


def _guess(raw: bytes, path: str) -> str:
    from charset_normalizer import from_bytes

    best = from_bytes(raw, cp_isolation=list(CANDIDATES)).best()
    if best is None or best.encoding is None:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start > 0 and _mostly_utf8(raw[:exc.start]):  # UTF-8 with a stray byte: say where it is
                line = raw[:exc.start].count(b"\n") + 1
                raise ConvertError(path, f"invalid UTF-8 at byte {exc.start}", line) from None
        raise ConvertError(path, "unknown text encoding (not UTF-8, GB18030, Big5 or a Western code page)")
    return str(best)


def _mostly_utf8(head: bytes) -> bool:
    """The bytes before a decoding error hold multi-byte UTF-8 (the file was written as UTF-8, then damaged)."""
    return any(b >= 0xC2 for b in head[:4096])

