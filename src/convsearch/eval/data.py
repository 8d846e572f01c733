"""Load conversational-rewrite JSONL files of the shared schema into immutable records.

One JSON object per line: ``id, dataset, split, lang, history [str], history_roles [user|assistant|system|tool|
function|developer],
question, rewrite, needs_rewrite`` and optionally ``topic, alt_rewrites, gold_passages_text,
gold_passage_ids, qrels, meta``. A bad line raises ``DataFileError(path, problem, line)``.

Example::

    records = load_records(Path("../shared/data/conv-rewrite/canard/dev.jsonl"), limit=50)
    records[1].messages()[0]   # Message(role='user', content='What group disbanded?')
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from ..text import detect_lang, normalize
from ..types import Message
from ..window import KNOWN_ROLES

# OpenAI roles are all accepted; the window keeps user/assistant text only (system, tool, function and
# developer messages are filtered out before any rewriter sees them, as the library's window does)
ROLES = KNOWN_ROLES
_REQUIRED = ("id", "question", "rewrite", "history", "history_roles")


@dataclass(frozen=True, slots=True)
class EvalRecord:
    """One follow-up turn with its human standalone rewrite (MuDoCo text already detokenized)."""

    id: str
    dataset: str
    split: str
    lang: str
    history: tuple[str, ...]
    history_roles: tuple[str, ...]
    question: str
    rewrite: str
    needs_rewrite: bool
    topic: Any = None
    alt_rewrites: tuple[str, ...] = ()
    gold_passages_text: Mapping[str, str] = field(default_factory=dict)
    gold_passage_ids: tuple[str, ...] = ()
    qrels: Mapping[str, int] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def messages(self) -> list[Message]:
        """The history as ``Message`` objects, oldest first (a ``tool`` message is marked as a tool result)."""
        return [Message(role, content, "tool_result" if role == "tool" else "text")
                for role, content in zip(self.history_roles, self.history)]


# --- MuDoCo detokenization ---------------------------------------------------------------------
# MuDoCo/CREAD text is Penn-Treebank tokenized ("ca n't", "Who 's", "`` Workout ``", "25 %").
_NT_RE = re.compile(r"(\w) n't\b", re.IGNORECASE)
_CLITIC_RE = re.compile(r"(\w) '(s|m|re|ve|d|ll)\b", re.IGNORECASE)
_QUOTE_RE = re.compile(r"``|''")
_SPACE_BEFORE_RE = re.compile(r"\s+([.,?!:;%)\]}])")
_SPACE_AFTER_RE = re.compile(r"([(\[{])\s+")


def detokenize(text: str) -> str:
    """Undo Treebank tokenization: "ca n't" → "can't", "Who 's" → "Who's", "`` X ``" → '"X"', "25 %" → "25%"."""
    text = _NT_RE.sub(r"\1n't", text)
    text = _CLITIC_RE.sub(r"\1'\2", text)
    if "``" in text or "''" in text:
        # MuDoCo uses `` for both opening and closing quotes: alternate them.
        parts = _QUOTE_RE.split(text)
        out = [parts[0]]
        for i, part in enumerate(parts[1:]):
            if i % 2 == 0:  # opening quote: glue to the following word
                out.append('"' + part.lstrip())
            else:  # closing quote: glue to the preceding word
                out[-1] = out[-1].rstrip()
                out.append('"' + part)
        text = "".join(out)
    text = _SPACE_BEFORE_RE.sub(r"\1", text)
    text = _SPACE_AFTER_RE.sub(r"\1", text)
    return " ".join(text.split())


def topic_text(record: EvalRecord | Mapping[str, Any]) -> str | None:
    """The session context a topic gives: CANARD "wikipedia_title: section_title", CAsT/iKAT "title".

    A plain-string topic is used as is. Domain-only topics (MuDoCo, Alexa CQR: ``{"domain": "calling"}``)
    are task labels, not conversation content, so they give ``None``.

    >>> topic_text({"topic": {"wikipedia_title": "Frank Zappa", "section_title": "Disbandment"}})
    'Frank Zappa: Disbandment'
    """
    topic = record.topic if isinstance(record, EvalRecord) else record.get("topic")
    if topic is None:
        return None
    if isinstance(topic, str):
        return normalize(topic) or None
    if not isinstance(topic, Mapping):
        return None
    title = normalize(str(topic.get("wikipedia_title") or ""))
    if title:
        section = normalize(str(topic.get("section_title") or ""))
        return f"{title}: {section}" if section else title
    title = normalize(str(topic.get("title") or ""))
    return title or None


# --- loading ------------------------------------------------------------------------------------
def _str_list(obj: dict[str, Any], key: str, path: str, line: int) -> tuple[str, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataFileError(path, f"field {key!r} must be a list of strings", line)
    return tuple(value)


def parse_record(obj: Any, *, path: str = "<memory>", line: int | None = None, default_dataset: str = "") -> EvalRecord:
    """Validate one decoded JSON object and build an ``EvalRecord``."""
    if not isinstance(obj, dict):
        raise DataFileError(path, f"expected a JSON object, got {type(obj).__name__}", line)
    for key in _REQUIRED:
        if key not in obj:
            raise DataFileError(path, f"missing field {key!r}", line)
    for key in ("question", "rewrite"):
        if not isinstance(obj[key], str):
            raise DataFileError(path, f"field {key!r} must be a string", line)
    history = _str_list(obj, "history", path, line)
    roles = _str_list(obj, "history_roles", path, line)
    if len(history) != len(roles):
        raise DataFileError(path, f"history has {len(history)} turns but history_roles has {len(roles)}", line)
    bad = sorted(set(roles) - ROLES)
    if bad:
        raise DataFileError(path, f"unknown history role(s) {', '.join(map(repr, bad))}; expected one of: "
                                  f"{', '.join(sorted(ROLES))}", line)
    dataset = str(obj.get("dataset") or default_dataset)
    question, rewrite = obj["question"], obj["rewrite"]
    alt = _str_list(obj, "alt_rewrites", path, line)
    if "mudoco" in dataset.lower():
        history = tuple(detokenize(h) for h in history)
        question, rewrite = detokenize(question), detokenize(rewrite)
        alt = tuple(detokenize(a) for a in alt)
    gold_text = obj.get("gold_passages_text") or {}
    qrels = obj.get("qrels") or {}
    meta = obj.get("meta") or {}
    for key, value in (("gold_passages_text", gold_text), ("qrels", qrels), ("meta", meta)):
        if not isinstance(value, dict):
            raise DataFileError(path, f"field {key!r} must be an object", line)
    try:
        qrels_int = {str(k): int(v) for k, v in qrels.items()}
    except (TypeError, ValueError) as exc:
        raise DataFileError(path, f"field 'qrels' must map ids to integer grades ({exc})", line) from exc
    needs = obj.get("needs_rewrite")
    return EvalRecord(
        id=str(obj["id"]),
        dataset=dataset,
        split=str(obj.get("split") or ""),
        lang=str(obj.get("lang") or detect_lang(question + rewrite)),
        history=history,
        history_roles=roles,
        question=question,
        rewrite=rewrite,
        needs_rewrite=bool(needs) if needs is not None else normalize(question) != normalize(rewrite),
        topic=obj.get("topic"),
        alt_rewrites=alt,
        gold_passages_text={str(k): str(v) for k, v in gold_text.items()},
        gold_passage_ids=_str_list(obj, "gold_passage_ids", path, line),
        qrels=qrels_int,
        meta=meta,
    )


def iter_records(path: Path | str, *, limit: int | None = None) -> Iterator[EvalRecord]:
    """Yield records from a JSONL file, stopping after ``limit`` records; blank lines are skipped."""
    p = Path(path)
    shown = str(path)
    if not p.is_file():
        raise DataFileError(shown, "no such file" if not p.exists() else "not a regular file")
    n = 0
    try:
        fh = p.open(encoding="utf-8")
    except OSError as exc:
        raise DataFileError(shown, f"cannot open: {exc.strerror or exc}") from exc
    with fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                if limit is not None and n >= limit:
                    return
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise DataFileError(shown, f"invalid JSON: {exc.msg} (column {exc.colno})", lineno) from exc
                yield parse_record(obj, path=shown, line=lineno, default_dataset=p.stem)
                n += 1
        except UnicodeDecodeError as exc:
            raise DataFileError(shown, f"not UTF-8 text: {exc.reason}") from exc


def load_yaml(path: Path) -> Any:
    """The parsed YAML document at ``path``; a missing, unreadable or malformed file is a DataFileError (with the
    line of a syntax error)."""
    import yaml  # here, not at the top: the JSONL loaders above do not need it

    shown = str(path)
    if not path.is_file():
        raise DataFileError(shown, "no such file")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataFileError(shown, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                            mark.line + 1 if mark is not None else None) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DataFileError(shown, f"cannot read: {exc}") from exc


def load_records(path: Path | str, *, limit: int | None = None) -> list[EvalRecord]:
    """Read a JSONL file of the shared schema; an empty file is an error."""
    records = list(iter_records(path, limit=limit))
    if not records:
        raise DataFileError(str(path), "no records")
    return records
