#!/usr/bin/env python3
"""Validate the demo corpus (demo/corpus/*.jsonl) and the scripted conversations (demo/conversations.yaml).

Standard library only for the corpus. The conversations file is read with PyYAML when it is importable;
without it, the ids after ``expect_top_ids_any:`` are pulled out with a regular expression instead.

Usage:  python demo/check_corpus.py [DEMO_DIR]      (exit 0 when everything passes, 1 otherwise)
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

REQUIRED = ("id", "title", "text", "url", "date", "lang")
LANGS = ("zh", "en")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*[a-z0-9]$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
CJK_RE = re.compile(r"[\u4e00-\u9fff]")
MIN_LEN, MAX_LEN = 60, 400           # zh: characters, en: words
MAX_FILE_BYTES = 300 * 1024
DATE_RANGE = ("2022-01-01", "2026-12-31")


def text_len(text: str, lang: str) -> int:
    return len(text) if lang == "zh" else len(text.split())


def check_doc(obj: object, where: str, errors: list[str]) -> str | None:
    if not isinstance(obj, dict):
        errors.append(f"{where}: not a JSON object")
        return None
    missing = [k for k in REQUIRED if k not in obj]
    extra = [k for k in obj if k not in REQUIRED]
    if missing:
        errors.append(f"{where}: missing fields {missing}")
    if extra:
        errors.append(f"{where}: unknown fields {extra}")
    for k in REQUIRED:
        if k in obj and (not isinstance(obj[k], str) or not obj[k].strip()):
            errors.append(f"{where}: field {k!r} must be a non-empty string")
    if missing or any(not isinstance(obj.get(k), str) for k in REQUIRED):
        return obj.get("id") if isinstance(obj.get("id"), str) else None
    doc_id, lang, date, url, text = obj["id"], obj["lang"], obj["date"], obj["url"], obj["text"]
    where = f"{where} ({doc_id})"
    if not ID_RE.match(doc_id):
        errors.append(f"{where}: id must be lowercase letters, digits and hyphens")
    if lang not in LANGS:
        errors.append(f"{where}: lang {lang!r} not in {LANGS}")
    if not DATE_RE.match(date):
        errors.append(f"{where}: date {date!r} is not YYYY-MM-DD")
    else:
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            errors.append(f"{where}: date {date!r} is not a calendar date")
        if not DATE_RANGE[0] <= date <= DATE_RANGE[1]:
            errors.append(f"{where}: date {date} outside {DATE_RANGE}")
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        errors.append(f"{where}: url {url!r} is not an absolute http(s) URL")
    elif "example" not in host.split("."):
        errors.append(f"{where}: url host {host!r} is not an invented *.example* domain")
    if lang in LANGS:
        n = text_len(text, lang)
        unit = "characters" if lang == "zh" else "words"
        if not MIN_LEN <= n <= MAX_LEN:
            errors.append(f"{where}: text has {n} {unit}, expected {MIN_LEN}-{MAX_LEN}")
        has_cjk = bool(CJK_RE.search(text))
        if lang == "zh" and not has_cjk:
            errors.append(f"{where}: lang zh but the text has no Chinese characters")
        if lang == "en" and has_cjk:
            errors.append(f"{where}: lang en but the text has Chinese characters")
    return doc_id


def load_corpus(corpus_dir: Path, errors: list[str]) -> dict[str, dict]:
    docs: dict[str, dict] = {}
    files = sorted(corpus_dir.glob("*.jsonl"))
    if not files:
        errors.append(f"{corpus_dir}: no *.jsonl files")
    for path in files:
        if path.stat().st_size > MAX_FILE_BYTES:
            errors.append(f"{path.name}: {path.stat().st_size} bytes, over {MAX_FILE_BYTES}")
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                where = f"{path.name}:{lineno}"
                if not line.strip():
                    errors.append(f"{where}: empty line")
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    errors.append(f"{where}: invalid JSON ({exc.msg})")
                    continue
                doc_id = check_doc(obj, where, errors)
                if doc_id is None:
                    continue
                if doc_id in docs:
                    errors.append(f"{where}: duplicate id {doc_id!r} (first in {docs[doc_id]['_file']})")
                    continue
                docs[doc_id] = dict(obj, _file=path.name)
    return docs


def _expected_ids_by_regex(raw: str) -> list[str]:
    ids: list[str] = []
    for m in re.finditer(r"expect_top_ids_any:\s*\[([^\]]*)\]", raw):
        ids += re.findall(r"[\"']([^\"']+)[\"']", m.group(1))
    return ids


def check_conversations(path: Path, docs: dict[str, dict], errors: list[str]) -> tuple[int, int]:
    if not path.exists():
        errors.append(f"{path}: missing")
        return 0, 0
    raw = path.read_text(encoding="utf-8")
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        ids = _expected_ids_by_regex(raw)
        for i in ids:
            if i not in docs:
                errors.append(f"{path.name}: expected id {i!r} is not in the corpus")
        print("note: PyYAML not installed; checked only the expected ids", file=sys.stderr)
        return 0, len(ids)
    data = yaml.safe_load(raw)
    convs = data.get("conversations") if isinstance(data, dict) else None
    if not isinstance(convs, list) or not convs:
        errors.append(f"{path.name}: top-level 'conversations' must be a non-empty list")
        return 0, 0
    names: Counter[str] = Counter()
    n_turns = 0
    for ci, conv in enumerate(convs):
        where = f"{path.name}: conversation #{ci + 1}"
        if not isinstance(conv, dict):
            errors.append(f"{where}: not a mapping")
            continue
        name = conv.get("name")
        if not isinstance(name, str) or not name:
            errors.append(f"{where}: missing name")
        else:
            names[name] += 1
            where = f"{path.name}: {name}"
        if conv.get("lang") not in LANGS:
            errors.append(f"{where}: lang must be one of {LANGS}")
        turns = conv.get("turns")
        if not isinstance(turns, list) or not turns:
            errors.append(f"{where}: turns must be a non-empty list")
            continue
        for ti, turn in enumerate(turns):
            n_turns += 1
            tw = f"{where} turn {ti + 1}"
            if not isinstance(turn, dict) or not isinstance(turn.get("user"), str) or not turn["user"].strip():
                errors.append(f"{tw}: needs a non-empty 'user' string")
                continue
            for key in ("assistant", "note"):
                if key in turn and not isinstance(turn[key], str):
                    errors.append(f"{tw}: {key} must be a string")
            for key in ("expect_in_query", "expect_top_ids_any"):
                val = turn.get(key, [])
                if not isinstance(val, list) or not all(isinstance(v, str) and v for v in val):
                    errors.append(f"{tw}: {key} must be a list of non-empty strings")
            for doc_id in turn.get("expect_top_ids_any", []) or []:
                if isinstance(doc_id, str) and doc_id not in docs:
                    errors.append(f"{tw}: expected id {doc_id!r} is not in the corpus")
            if "expect_unchanged" in turn and not isinstance(turn["expect_unchanged"], bool):
                errors.append(f"{tw}: expect_unchanged must be true or false")
            known = {"user", "assistant", "expect_in_query", "expect_top_ids_any", "expect_unchanged", "note"}
            unknown = set(turn) - known
            if unknown:
                errors.append(f"{tw}: unknown keys {sorted(unknown)}")
    for name, count in names.items():
        if count > 1:
            errors.append(f"{path.name}: conversation name {name!r} used {count} times")
    return len(convs), n_turns


def main(argv: list[str]) -> int:
    demo = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    errors: list[str] = []
    docs = load_corpus(demo / "corpus", errors)
    n_conv, n_turns = check_conversations(demo / "conversations.yaml", docs, errors)
    by_lang = Counter(d["lang"] for d in docs.values())
    by_file = Counter(d["_file"] for d in docs.values())
    print(f"corpus: {len(docs)} documents ({', '.join(f'{k} {v}' for k, v in sorted(by_lang.items()))})")
    for name, count in sorted(by_file.items()):
        print(f"  {name}: {count}")
    print(f"conversations: {n_conv}, turns: {n_turns}")
    for e in errors:
        print("ERROR", e)
    print("OK" if not errors else f"FAILED: {len(errors)} error(s)")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
