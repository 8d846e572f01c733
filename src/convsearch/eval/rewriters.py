"""What the evaluation commands share about the rewriter they run: loading it by name, and an option's word."""

from __future__ import annotations

from enum import Enum
from typing import Any

from .. import rewrite
from ..errors import ConfigError
from ..rewrite.base import Rewriter


def load_rewriter(name: str) -> Rewriter:
    """``get_rewriter(name)``, with a rewriter whose module is missing reported as a ConfigError."""
    try:
        return rewrite.get_rewriter(name)  # looked up on each call (tests replace it)
    except ImportError as exc:
        raise ConfigError(f"rewriter {name!r} is not available: {exc}") from exc


def option_name(value: Any) -> str:
    """A command option's word: an enum member's value, anything else as a string."""
    return value.value if isinstance(value, Enum) else str(value)
