"""Clients a test opens, closed when the test ends.

A pooled HTTP connection left to the garbage collector is reported (``ResourceWarning: unclosed socket``) in
whatever test happens to be running when it is collected, an error under ``filterwarnings = error``. A helper that
opens a client for a test hands it to ``close_later``; the suite's conftest calls ``close_opened`` after every test.

Example::

    llm = close_later(OpenAILLM(LLMConfig(base_url=srv.base_url, model="fake")))
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar


class _Closable(Protocol):
    def close(self) -> Any: ...


C = TypeVar("C", bound=_Closable)
_OPENED: list[_Closable] = []


def close_later(client: C) -> C:
    """Close ``client`` when the running test ends (``close_opened``); returns it."""
    _OPENED.append(client)
    return client


def close_opened() -> int:
    """Close every client handed to ``close_later`` since the last call, newest first; returns how many."""
    n = len(_OPENED)
    while _OPENED:
        _OPENED.pop().close()
    return n


__all__ = ["close_later", "close_opened"]
