"""The way in: files and folders to cited passages, kept in step with the folder.

    walk + manifest (sync.py) ─► convert (convert/: html, pdf, docx, markdown, text; records.py: JSONL)
        ─► passages (passages.py) ─► a writable backend's ``add`` / ``delete``

``records`` keeps the JSONL reader (one record, one document) that the demo and batch commands use.
"""

from __future__ import annotations

from .records import iter_files, json_lines, load_all, read_documents, read_text
from .types import Converted, ConvertError, Heading, NoTextError

__all__ = ["Converted", "ConvertError", "Heading", "NoTextError", "iter_files", "json_lines", "load_all",
           "read_documents", "read_text"]
