"""SIGTERM heard as Ctrl-C around a long write (``index``, ``copy-index``, ``eval kb``), so that a service
manager's stop or ``kill`` ends it the way Ctrl-C does: after its last whole batch, with one line saying what
was kept, exit 130."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def term_as_interrupt() -> Iterator[None]:
    """SIGTERM handled as Ctrl-C for the block (main thread only; elsewhere a no-op). Ctrl-C itself is heard
    even when the process was started with SIGINT ignored (a background job of a script, a worker of a test
    runner: the ignore is inherited through exec). The handlers in place before are restored on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, lambda signum, frame: os.kill(os.getpid(), signal.SIGINT))
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


__all__ = ["term_as_interrupt"]
