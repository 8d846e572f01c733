"""History window: the slice of a conversation the rewriter may see."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .errors import InputError
from .types import Message

KEPT_ROLES = frozenset({"user", "assistant"})
KNOWN_ROLES = frozenset({"user", "assistant", "system", "tool", "function", "developer"})


def to_messages(raw: Iterable[Message | dict[str, Any]], *, strict_roles: bool = True) -> list[Message]:
    """Convert OpenAI-style dicts to Messages; an unknown role is an InputError naming it."""
    out: list[Message] = []
    for i, m in enumerate(raw):
        msg = m if isinstance(m, Message) else Message.from_dict(m)
        if strict_roles and msg.role not in KNOWN_ROLES:
            raise InputError(f"message {i}: unknown role {msg.role!r} (expected one of: {', '.join(sorted(KNOWN_ROLES))})")
        out.append(msg)
    return out


def history_window(messages: Sequence[Message], n: int = 8) -> tuple[Message, ...]:
    """The last ``n`` user/assistant text messages.

    Dropped before counting: tool calls and tool results, partial (still streaming) messages, blank
    messages and any role other than user/assistant.
    """
    kept = [m for m in messages if in_window(m)]
    return tuple(kept[-n:]) if n > 0 else ()


def in_window(m: Message) -> bool:
    """True for a message the window may keep: user/assistant text, complete, not blank (the history store
    filters its reads with this same rule)."""
    return m.role in KEPT_ROLES and m.kind == "text" and not m.partial and bool(m.content.strip())
