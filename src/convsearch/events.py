"""Structured JSON event logs on the ``convsearch.events`` logger (one JSON object per line).

Events: ``rewrite`` (every plan), ``dedup`` (every search), ``partial`` (a search some backend did not answer),
``rerank_failed`` (a rerank server failed; the heuristic order was used).
Attach any logging handler to ``convsearch.events`` at INFO to receive them.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

logger = logging.getLogger("convsearch.events")


def emit(event: str, **fields: Any) -> None:
    """Log one event as JSON; cheap when nothing listens (checked before serialising)."""
    if not logger.isEnabledFor(logging.INFO):
        return
    record = {"event": event, "ts": round(time.time(), 3), **fields}
    logger.info(json.dumps(record, ensure_ascii=False, default=str))
