"""The history part's built-in plugin (``convsearch.plugins``): the conversation store's section (CONVSEARCH_DB_*,
HISTORY_TOKENS, SUMMARY_*, ...), imported when settings are read."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..plugins import Registrar


def register(r: Registrar) -> None:
    r.settings("convsearch.history.base:HistorySettings")
