"""Structured JSON event logs on the ``convsearch.events`` logger (one JSON object per line)."""

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


def enable_json_events(stream: Any = None, level: int = logging.INFO) -> logging.Handler:
    """Attach a handler writing bare JSON lines (for the CLI's --events / servers)."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return handler
