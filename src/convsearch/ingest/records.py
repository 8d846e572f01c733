"""Read documents from JSONL, Markdown and plain-text files, with errors that name the file and line."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from ..types import Document

SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".md": "markdown", ".markdown": "markdown", ".txt": "text"}
_FRONT_MATTER_RE = re.compile(r"^---\n(.*?)\n---\n", re.DOTALL)


def iter_files(paths: list[Path]) -> Iterator[Path]:
    for p in paths:
        if not p.exists():
            raise DataFileError(str(p), "no such file or directory")
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.suffix.lower() in SUFFIXES:
                    yield f
        elif p.suffix.lower() in SUFFIXES:
            yield p
        else:
            raise DataFileError(str(p), f"unsupported file type {p.suffix or '(none)'}; use .jsonl, .md or .txt")


def read_text(path: Path) -> str:
    """A file's text; invalid UTF-8 is a DataFileError naming the line."""
    if not path.is_file():
        raise DataFileError(str(path), "no such file")
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataFileError(str(path), f"invalid UTF-8 at byte {exc.start}", line) from exc


def json_lines(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) for every non-blank line of a JSONL text; bad JSON names file:line."""
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFileError(str(path), f"malformed JSON ({exc.msg})", n) from exc


def read_documents(path: Path) -> Iterator[Document]:
    """Documents of one file. JSONL: one object per line with ``text`` (and optional id, title, url, date,
    lang, metadata). Markdown/text: one document per file; the first heading (or line) is the title."""
    kind = SUFFIXES.get(path.suffix.lower())
    text = read_text(path)
    if kind == "jsonl":
        yield from _jsonl(path, text)
        return
    body = text
    meta: dict[str, str] = {}
    if kind == "markdown":
        m = _FRONT_MATTER_RE.match(text)
        if m:
            for line in m.group(1).splitlines():
                if ":" in line:
                    k, v = line.split(":", 1)
                    meta[k.strip()] = v.strip().strip("\"'")
            body = text[m.end():]
    if not body.strip():
        raise DataFileError(str(path), "the file is empty")
    first = next(line for line in body.splitlines() if line.strip())
    title = meta.get("title") or first.lstrip("#").strip()[:200]
    doc_id = meta.get("id") or f"{path.stem}-{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    yield Document(id=doc_id, text=body.strip(), title=title, url=meta.get("url", ""), date=meta.get("date"),
                   lang=meta.get("lang"), metadata={"path": str(path)})


def _jsonl(path: Path, text: str) -> Iterator[Document]:
    for n, obj in json_lines(path, text):
        if not isinstance(obj, dict):
            raise DataFileError(str(path), "each line must be a JSON object", n)
        body = obj.get("text") or obj.get("content") or obj.get("body")
        if not isinstance(body, str) or not body.strip():
            raise DataFileError(str(path), "missing or empty 'text'", n)
        doc_id = str(obj.get("id") or f"{path.stem}-{n}")
        md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        yield Document(id=doc_id, text=body, title=str(obj.get("title") or ""), url=str(obj.get("url") or ""),
                       date=obj.get("date"), lang=obj.get("lang"), metadata=md)


def load_all(paths: list[Path]) -> list[Document]:
    """Read every file first, so a bad file fails the whole command before anything is written."""
    docs: list[Document] = []
    for f in iter_files(paths):
        docs.extend(read_documents(f))
    return docs
