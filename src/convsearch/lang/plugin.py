"""The shipped languages as a plugin (``convsearch.plugins``): Chinese first (a tie in detection goes to the first
registered), then English, the fallback. A third-party language registers the same way from its own package."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..plugins import Registrar


def register(r: Registrar) -> None:
    r.language("convsearch.lang.zh.language:LANGUAGE", code="zh")
    r.language("convsearch.lang.en.language:LANGUAGE", code="en")
