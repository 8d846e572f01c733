"""A deterministic split of every dev set by dialog into a tuning half and a frozen half.

Rules are tuned on the tuning half only; the frozen half is reported beside it to show whether a change
generalises. A dialog is named by its first turn (the first history message, or the question of a dialog's
opening turn), so every turn of one conversation lands in the same half, whatever the file's id scheme; the
half is the parity of a SHA-1 of that name (stable across runs, machines and Python versions).

>>> half_of_dialog("北京明天天气怎么样？") in ("tune", "frozen")
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

HALVES = ("all", "tune", "frozen")

T = TypeVar("T")


def dialog_key(history: Sequence[str], question: str) -> str:
    """The name of the dialog a turn belongs to: its first history message, else its own question."""
    for text in history:
        if text.strip():
            return text.strip()
    return question.strip()


def half_of_dialog(key: str) -> str:
    """``"tune"`` or ``"frozen"`` for a dialog key (SHA-1 parity)."""
    return "tune" if hashlib.sha1(key.encode("utf-8")).digest()[-1] % 2 == 0 else "frozen"


def select_half(items: Sequence[T], half: str, key=None) -> list[T]:  # type: ignore[no-untyped-def]
    """The items of ``half`` ("all", "tune" or "frozen"); ``key(item) -> (history, question)``."""
    if half not in HALVES:
        raise ValueError(f"unknown half {half!r}; choose one of: {', '.join(HALVES)}")
    if half == "all":
        return list(items)
    get = key or (lambda r: (r.history, r.question))
    return [it for it in items if half_of_dialog(dialog_key(*get(it))) == half]
