"""``convsearch eval followups``: hand-written search follow-ups scored by substring checks.

One JSON object per line: ``id, lang, history [str], history_roles [user|assistant|system|tool|...],
question, rewrite, needs_rewrite, category`` and optional checks ``must [str]``, ``must_any [[str]]``,
``must_not [str]``, ``exact`` (keep cases). A rewrite passes when, case-insensitively, every ``must``
string is in it, at least one string of each ``must_any`` group is in it, no ``must_not`` string is in
it, and (when ``exact`` is given) it equals ``exact``. The history goes through the same window as the
library's (system / tool / developer messages are filtered out), then to the rewriter.

Example::

    report = evaluate_followups(load_followups(path), get_rewriter("rules"))
    report["systems"]["rules"]["pass"], report["systems"]["rules"]["categories"]["swap"]
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConvsearchError, DataFileError
from ..rewrite.base import Rewriter
from ..types import Message
from ..window import KNOWN_ROLES, history_window
from . import metrics as m
from .split import dialog_key, select_half

COPY = "copy"


@dataclass(frozen=True, slots=True)
class FollowupCase:
    """One follow-up with its checks."""

    id: str
    lang: str
    category: str
    history: tuple[str, ...]
    history_roles: tuple[str, ...]
    question: str
    rewrite: str
    needs_rewrite: bool
    must: tuple[str, ...] = ()
    must_any: tuple[tuple[str, ...], ...] = ()
    must_not: tuple[str, ...] = ()
    exact: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def messages(self) -> list[Message]:
        """The history as Messages (a tool message is marked as a tool result, as ``Message.from_dict`` does)."""
        return [Message.from_dict({"role": r, "content": c}) for r, c in zip(self.history_roles, self.history)]


def passes(case: FollowupCase, output: str) -> bool:
    """Does ``output`` pass the case's checks (case-insensitive substrings; ``exact`` compares whole strings)?"""
    low = output.lower()
    if case.exact is not None and output.strip() != case.exact.strip():
        return False
    if any(s.lower() not in low for s in case.must):
        return False
    if any(not any(s.lower() in low for s in group) for group in case.must_any):
        return False
    return not any(s.lower() in low for s in case.must_not)


def _strs(obj: dict[str, Any], key: str, path: str, line: int) -> tuple[str, ...]:
    v = obj.get(key)
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise DataFileError(path, f"field {key!r} must be a list of strings", line)
    return tuple(v)


def parse_case(obj: Any, *, path: str = "<memory>", line: int = 0) -> FollowupCase:
    """Validate one decoded JSON object; a problem is a DataFileError naming the field."""
    if not isinstance(obj, dict):
        raise DataFileError(path, f"expected a JSON object, got {type(obj).__name__}", line)
    for key in ("id", "question", "category"):
        if not isinstance(obj.get(key), str):
            raise DataFileError(path, f"field {key!r} must be a string", line)
    history, roles = _strs(obj, "history", path, line), _strs(obj, "history_roles", path, line)
    if len(history) != len(roles):
        raise DataFileError(path, f"history has {len(history)} turns but history_roles has {len(roles)}", line)
    bad = sorted(set(roles) - KNOWN_ROLES)
    if bad:
        raise DataFileError(path, f"unknown history role(s) {', '.join(map(repr, bad))}; expected one of: "
                                  f"{', '.join(sorted(KNOWN_ROLES))}", line)
    groups = obj.get("must_any") or []
    if not isinstance(groups, list) or not all(
            isinstance(g, list) and all(isinstance(s, str) for s in g) for g in groups):
        raise DataFileError(path, "field 'must_any' must be a list of lists of strings", line)
    exact = obj.get("exact")
    if exact is not None and not isinstance(exact, str):
        raise DataFileError(path, "field 'exact' must be a string", line)
    question = obj["question"]
    return FollowupCase(
        id=obj["id"], lang=str(obj.get("lang") or ""), category=obj["category"], history=history, history_roles=roles,
        question=question, rewrite=str(obj.get("rewrite") or question),
        needs_rewrite=bool(obj.get("needs_rewrite", True)), must=_strs(obj, "must", path, line),
        must_any=tuple(tuple(g) for g in groups), must_not=_strs(obj, "must_not", path, line), exact=exact)


def load_followups(path: Path | str, *, limit: int | None = None) -> list[FollowupCase]:
    """Read a follow-ups JSONL file; a missing, empty or malformed file is a DataFileError."""
    p = Path(path)
    if not p.is_file():
        raise DataFileError(str(path), "no such file" if not p.exists() else "not a regular file")
    cases: list[FollowupCase] = []
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DataFileError(str(path), f"not UTF-8 text: {exc.reason}") from exc
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if limit is not None and len(cases) >= limit:
            break
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DataFileError(str(path), f"invalid JSON: {exc.msg} (column {exc.colno})", lineno) from exc
        cases.append(parse_case(obj, path=str(path), line=lineno))
    if not cases:
        raise DataFileError(str(path), "no records")
    return cases


def _scores(cases: Sequence[FollowupCase], outputs: Sequence[str]) -> dict[str, Any]:
    ok = [passes(c, o) for c, o in zip(cases, outputs)]
    cats: dict[str, list[bool]] = {}
    langs: dict[str, list[bool]] = {}
    for c, p in zip(cases, ok):
        cats.setdefault(c.category, []).append(p)
        langs.setdefault(c.lang, []).append(p)
    keep = [(o, c) for c, o in zip(cases, outputs) if not c.needs_rewrite]
    return {
        "n": len(cases),
        "pass": sum(ok) / len(ok) if ok else 0.0,
        "min_category": min((sum(v) / len(v) for v in cats.values()), default=0.0),
        "categories": {k: sum(v) / len(v) for k, v in sorted(cats.items())},
        "langs": {k: sum(v) / len(v) for k, v in sorted(langs.items())},
        "keep_exact": (sum(m.match_key(o) == m.match_key(c.question) for o, c in keep) / len(keep)) if keep else None,
        "failed": [c.id for c, p in zip(cases, ok) if not p],
    }


def evaluate_followups(cases: Sequence[FollowupCase], rewriter: Rewriter, *, window: int = 8) -> dict[str, Any]:
    """Pass rates (overall, per category, per language) of ``rewriter`` and of the copy baseline."""
    name = getattr(rewriter, "name", type(rewriter).__name__)
    if name == COPY:
        name = f"{name}(rewriter)"
    outputs: list[str] = []
    latencies: list[float] = []
    errors = 0
    for c in cases:
        history = history_window(c.messages(), window)
        t0 = time.perf_counter()
        try:
            out = rewriter.rewrite(history, c.question).rewritten
        except ConvsearchError:
            out, errors = c.question, errors + 1
        latencies.append((time.perf_counter() - t0) * 1000.0)
        outputs.append(out)
    systems = {COPY: _scores(cases, [c.question for c in cases]), name: _scores(cases, outputs)}
    systems[name]["errors"] = errors
    lat = m.latency_stats(latencies)
    systems[name]["latency_mean_ms"], systems[name]["latency_p99_ms"] = lat["mean_ms"], lat["p99_ms"]
    return {"rewriter": name, "n_records": len(cases), "systems": systems,
            "outputs": {c.id: o for c, o in zip(cases, outputs)}}


def followups_half(cases: Sequence[FollowupCase], half: str) -> list[FollowupCase]:
    """The tuning or frozen half of the cases (by dialog, see ``eval.split``)."""
    return select_half(cases, half, key=lambda c: (c.history, c.question))


__all__ = ["FollowupCase", "dialog_key", "evaluate_followups", "followups_half", "load_followups", "parse_case",
           "passes"]
