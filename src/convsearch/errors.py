"""The convsearch exception tree, mapped to exit codes (CLI) and HTTP codes (server) at the edges.

    ConvsearchError                 base; ``exit_code`` 1
    ├── InputError                  bad user input (empty/oversized query, unknown role); 400, exit 2
    │   ├── DataFileError           a bad input file; carries path and line number; exit 2
    │   ├── MessageTooLarge         a message over the history store's size limit; 413, nothing stored
    │   ├── MessageIdConflict       a client message id reused for a different message; 409
    │   └── BodyTooLarge            an HTTP request body over CONVSEARCH_MAX_BODY_BYTES; 413
    ├── ConfigError                 bad settings or a missing optional dependency; exit 3
    ├── IndexMissingError           no index at the data dir; 404, exit 4
    ├── BackendError                a search backend failed; 502, exit 5
    ├── HistoryUnavailable          the history database is locked, down or unreadable; 503, exit 7
    │                               (a turn catches it and runs statelessly, flagged in the trace)
    ├── LLMNotConfigured            an endpoint that needs an upstream LLM has none configured; 503 (its
    │                               message, which names the variables to set, is shown), exit 3
    ├── DeadlineExceeded            a turn ran out of time; 504, exit 6
    ├── AuthError                   missing or unknown API key; 401
    └── RateLimited                 over the tenant's request rate; 429 with Retry-After (``retry_after`` s)

The HTTP server maps this tree to responses in one place: ``convsearch.server.errors``.
"""

from __future__ import annotations


class ConvsearchError(Exception):
    exit_code = 1
    http_status = 500


class InputError(ConvsearchError, ValueError):
    exit_code = 2
    http_status = 400


class DataFileError(InputError):
    """A problem in an input file, located by path and (when known) 1-based line number."""

    def __init__(self, path: str, problem: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


class ConfigError(ConvsearchError):
    exit_code = 3
    http_status = 500


class IndexMissingError(ConvsearchError):
    exit_code = 4
    http_status = 404


class BackendError(ConvsearchError):
    exit_code = 5
    http_status = 502


class DeadlineExceeded(ConvsearchError):
    exit_code = 6
    http_status = 504


class MessageTooLarge(InputError):
    """A message larger than the history store accepts (``CONVSEARCH_MAX_MESSAGE_BYTES``); nothing was stored."""

    http_status = 413


class MessageIdConflict(InputError):
    """A client message id already names a different message in the same session."""

    http_status = 409


class HistoryUnavailable(ConvsearchError):
    """The history database could not be read or written (locked, down, unreadable, unknown schema)."""

    exit_code = 7
    http_status = 503


class LLMNotConfigured(ConvsearchError):
    """No upstream LLM is configured where one is needed (the OpenAI-compatible chat endpoint); the message
    names the variables to set and holds nothing secret, so the HTTP layer shows it on the 503."""

    exit_code = 3
    http_status = 503
    public = True


class BodyTooLarge(InputError):
    """An HTTP request body larger than ``CONVSEARCH_MAX_BODY_BYTES``."""

    http_status = 413


class AuthError(ConvsearchError):
    """No API key, or one no tenant holds."""

    http_status = 401


class RateLimited(ConvsearchError):
    """The tenant sent more requests than its token bucket allows; ``retry_after`` is in seconds."""

    http_status = 429

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after
