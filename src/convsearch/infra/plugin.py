"""The infra part's built-in plugin (``convsearch.plugins``): the response cache's section (CONVSEARCH_CACHE_*),
imported when settings are read."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..plugins import Registrar


def register(r: Registrar) -> None:
    r.settings("convsearch.infra.cache:CacheSettings")
