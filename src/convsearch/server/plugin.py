"""The server part's built-in plugin (``convsearch.plugins``): the HTTP service's section (CONVSEARCH_SERVER_*,
API_KEYS*, RATE_*, ...), imported when settings are read."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..plugins import Registrar


def register(r: Registrar) -> None:
    r.settings("convsearch.server.settings:ServerSettings")
