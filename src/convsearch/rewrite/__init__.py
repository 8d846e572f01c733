"""Rewriters: rules (offline, zh + en) and the pass-through baseline."""

from __future__ import annotations

from ..errors import ConfigError
from .base import Passthrough, Rewriter, Scripted

REWRITERS = ("rules", "passthrough")


def get_rewriter(name: str) -> Rewriter:
    """Return a rewriter by name: ``rules`` or ``passthrough``."""
    if name == "passthrough":
        return Passthrough()
    if name == "rules":
        from .rules import RuleRewriter

        return RuleRewriter()
    raise ConfigError(f"unknown rewriter {name!r}; choose one of: {', '.join(REWRITERS)}")


__all__ = ["REWRITERS", "Passthrough", "Rewriter", "Scripted", "get_rewriter"]
