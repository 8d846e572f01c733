"""``convsearch eval perturb``: does a follow-up still come out right when it is typed another way?

The same follow-up cases (``followups.py``) with each question re-typed the way people type: without its final
question mark, in lower case, without apostrophes ("whats", "dont"), with a courtesy opener (请问 / "hey,"), an
interjection (嗯， / "ok"), a closer (啊 / "please") or a wrapper ("我想知道…" / "can you tell me …"). A perturbation
applies only where it reads naturally (no 啊 after a 呢 or 吗, no wrapper around a bare fragment); a keep case must
come back as re-typed. One perturbation re-types the whole conversation: an English one typed in lower case, the
user's earlier turns as well as the question (``lower_case_conversation``; the answers keep their case). Reports,
per perturbation, how many cases it applies to, the pass rate before and after, and how many passing cases it breaks.

Example::

    report = evaluate_perturbations(load_followups(path), get_rewriter("rules"))
    report["perturbations"]["courtesy_opener"]["lost"]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..errors import ConvsearchError
from ..rewrite.base import Rewriter
from ..window import history_window
from .followups import FollowupCase, passes

_FINAL_RE = re.compile(r"[?？。.!！]+\s*$")
_ASKING_END_RE = re.compile(r"[呢吗么嘛][?？]?\s*$")  # a closer 啊 after these does not read naturally
_EN_WH_RE = re.compile(r"^(?:what|who|when|where|why|how|which)\b", re.IGNORECASE)


def _lower_first(q: str) -> str:
    """The first letter in lower case when the first word is a common word ("What" → "what"; "DynamoDB" stays)."""
    first = q.split(maxsplit=1)[0] if q.strip() else ""
    return q[:1].lower() + q[1:] if first[1:].islower() else q


# The re-typings are measurement inputs, written for how people type in the two shipped languages (请问 / hey,
# 嗯 / ok, 啊 / please …): they branch on the language code on purpose, as a test's data would.
def _no_final_mark(q: str, lang: str) -> str | None:
    return _FINAL_RE.sub("", q) if _FINAL_RE.search(q) else None


def _lower_case(q: str, lang: str) -> str | None:
    return q.lower() if lang == "en" and q.lower() != q else None


def _no_apostrophe(q: str, lang: str) -> str | None:
    if lang != "en":
        return None
    out = re.sub(r"['’]", "", _EN_WH_IS_RE.sub(r"\1s", q))  # "what is the fee" / "what's the fee" → "whats the fee"
    return out if out != q else None


_EN_WH_IS_RE = re.compile(r"\b(what|how|where|who|when) is\b", re.IGNORECASE)


def _courtesy_opener(q: str, lang: str) -> str | None:
    return "请问" + q if lang == "zh" else "hey, " + _lower_first(q)


def _interjection(q: str, lang: str) -> str | None:
    return "嗯，" + q if lang == "zh" else "ok " + _lower_first(q)


def _courtesy_closer(q: str, lang: str) -> str | None:
    if not re.search(r"[?？]\s*$", q):
        return None  # a closer only on a question: not "我想知道。啊？", "I'm done please?"
    core = _FINAL_RE.sub("", q)
    if lang == "zh":
        return None if _ASKING_END_RE.search(q) else core + "啊？"
    return core + " please?"


def _question_wrapper(q: str, lang: str) -> str | None:
    if lang == "zh":
        return None if q.rstrip("？? ").endswith("呢") else "我想知道" + q
    return "can you tell me " + _lower_first(q) if _EN_WH_RE.match(q) else None


PERTURBATIONS: dict[str, Callable[[str, str], str | None]] = {
    "no_final_mark": _no_final_mark,
    "lower_case": _lower_case,
    "no_apostrophe": _no_apostrophe,
    "courtesy_opener": _courtesy_opener,
    "interjection": _interjection,
    "courtesy_closer": _courtesy_closer,
    "question_wrapper": _question_wrapper,
}


def _lower_case_conversation(case: FollowupCase) -> FollowupCase | None:
    """The whole English conversation typed in lower case: the user's earlier turns as well as the question (the
    answers keep their case). Only where an earlier user turn changes (else it is ``lower_case``)."""
    if case.lang != "en":
        return None
    history = tuple(t.lower() if r == "user" else t for r, t in zip(case.history_roles, case.history))
    return replace(case, history=history, question=case.question.lower()) if history != case.history else None


# Perturbations of the whole case (its history too), beside those of the question alone
CASE_PERTURBATIONS: dict[str, Callable[[FollowupCase], FollowupCase | None]] = {
    "lower_case_conversation": _lower_case_conversation,
}


def _passes(rewriter: Rewriter, case: FollowupCase, typed: FollowupCase, window: int, errors: list[str]) -> bool:
    """Does the rewrite of ``typed`` (``case`` re-typed) pass ``case``'s checks?"""
    try:
        out = rewriter.rewrite(history_window(typed.messages(), window), typed.question).rewritten
    except ConvsearchError:
        out = typed.question
        errors.append(case.id)
    # a case to be kept as typed is kept as re-typed; any other exact check stays as written
    return passes(replace(case, exact=typed.question) if case.exact == case.question else case, out)


def _retyped(cases: Sequence[FollowupCase], name: str) -> list[tuple[FollowupCase, FollowupCase]]:
    """(case, re-typed case) for each case the perturbation ``name`` applies to and changes."""
    if name in CASE_PERTURBATIONS:
        return [(c, t) for c in cases if (t := CASE_PERTURBATIONS[name](c)) is not None]
    perturb = PERTURBATIONS[name]
    return [(c, replace(c, question=q)) for c in cases
            if (q := perturb(c.question, c.lang)) is not None and q != c.question]


def evaluate_perturbations(cases: Sequence[FollowupCase], rewriter: Rewriter, *,
                           window: int = 8) -> dict[str, Any]:
    """Pass rate of each perturbation on the cases it applies to, beside the pass rate as typed."""
    errors: list[str] = []
    base = {c.id: _passes(rewriter, c, c, window, errors) for c in cases}
    out: dict[str, Any] = {}
    for name in [*PERTURBATIONS, *CASE_PERTURBATIONS]:
        applied = _retyped(cases, name)
        ok = {c.id: _passes(rewriter, c, t, window, errors) for c, t in applied}
        n = len(applied)
        out[name] = {
            "n": n,
            "pass_as_typed": sum(base[c.id] for c, _ in applied) / n if n else None,
            "pass": sum(ok.values()) / n if n else None,
            "lost": sum(base[c.id] and not ok[c.id] for c, _ in applied),
            "lost_ids": [c.id for c, _ in applied if base[c.id] and not ok[c.id]],
        }
    return {"n_records": len(cases), "pass_as_typed": sum(base.values()) / len(cases) if cases else 0.0,
            "errors": len(errors), "perturbations": out}
