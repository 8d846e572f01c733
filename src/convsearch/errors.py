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
    │   └── UpstreamError           a remote service failed: ``service`` ("llm", "tavily", …), ``reason``,
    │       │                       ``status`` (its HTTP status, if it answered), ``retryable``, ``retry_after``,
    │       │                       ``usage`` (tokens a failed LLM reply still cost); 502, exit 5
    │       ├── LLMError            the LLM endpoint (``convsearch.llm``); callers on a turn fall back
    │       │   ├── LLMTimeout          the step's budget ran out, waiting for a slot or the reply; 504, exit 6
    │       │   ├── LLMRateLimited      HTTP 429 after the allowed retries
    │       │   ├── LLMUnavailable      HTTP 5xx / 408 / 409, a connection error, or no LLM configured
    │       │   ├── LLMRequestRejected  another 4xx: bad key, unknown model, bad request; never retried
    │       │   └── LLMBadOutput        malformed JSON, empty content, output failing the schema; never retried
    │       ├── WebError            a web search provider (``convsearch.backends.web``); a fan-out goes on
    │       │   ├── UpstreamRateLimited 429 (past our own limiter: a budget we did not know of); cools the key
    │       │   ├── UpstreamUnavailable 5xx, timeout, connection refused: retried with backoff in the deadline
    │       │   ├── UpstreamMalformed   not the JSON we expect (an HTML error page, a cut-off body)
    │       │   ├── UpstreamRejected    400 / 401 / 403 / 422, or an error inside a 200 (SerpApi)
    │       │   └── BreakerOpen         the provider failed N times in a row; no call until the probe
    │       ├── QueueTimeout        no key of a provider had a free slot within the allowed wait: no call made
    │       ├── EmbedError          the embedding server (``convsearch.embed.openai``): refused, 429 / 5xx after
    │       │                       the retries, timed out or answered junk; a query's embedding failing is
    │       │                       answered from BM25 (``embed: why`` in the trace)
    │       └── RerankError         the rerank server (``convsearch.rerank.remote``): refused, 5xx, timed out or
    │                               answered junk; the turn keeps the heuristic order (named in its ``errors``)
    ├── HistoryUnavailable          the history database is locked, down or unreadable; 503, exit 7
    │                               (a turn catches it and runs statelessly, flagged in the trace)
    ├── LLMNotConfigured            an endpoint that needs an upstream LLM has none configured; 503 (its
    │                               message, which names the variables to set, is shown), exit 3
    ├── DeadlineExceeded            a turn ran out of time; 504, exit 6
    ├── AuthError                   missing or unknown API key; 401
    └── RateLimited                 over the tenant's request rate; 429 with Retry-After (``retry_after`` s)

The HTTP server maps this tree to responses in one place, ``convsearch.server.errors`` (a 5xx body names
only the kind of failure: for an UpstreamError, which service); the command line in one place too,
``convsearch.cli.main`` (one line, ``error: …``, and ``exit_code``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import Usage


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


class UpstreamError(BackendError):
    """A remote service failed: the LLM endpoint or a web search provider.

    ``service`` names it ("llm", "tavily", …); ``reason`` is a short phrase for traces (no secrets, no bodies);
    ``status`` the HTTP status it answered with, if any; ``retryable`` whether another attempt could succeed;
    ``retry_after`` seconds, when it said; ``usage`` the tokens a failed LLM reply still cost."""

    retryable = False

    def __init__(self, service: str, reason: str, *, message: str | None = None, status: int | None = None,
                 retry_after: float | None = None, usage: Usage | None = None) -> None:
        super().__init__(reason if message is None else message)
        self.service = service
        self.reason = reason
        self.status = status
        self.retry_after = retry_after
        if usage is None:
            from .types import Usage

            usage = Usage()
        self.usage = usage

    @property
    def what(self) -> str:
        """The service for a message: "the LLM endpoint", "the web provider tavily"."""
        if self.service == "embed":
            return "the embedding server"
        if self.service == "rerank":
            return "the rerank server"
        return "the LLM endpoint" if self.service == "llm" else f"the web provider {self.service}"


class LLMError(UpstreamError):
    """The LLM step failed; ``str(exc)`` is its ``reason``."""

    def __init__(self, reason: str, *, retry_after: float | None = None, usage: Usage | None = None,
                 status: int | None = None) -> None:
        super().__init__("llm", reason, status=status, retry_after=retry_after, usage=usage)


class LLMTimeout(LLMError):
    http_status = 504
    exit_code = 6
    retryable = False  # the budget is spent: nothing left to retry with


class LLMRateLimited(LLMError):
    retryable = True


class LLMUnavailable(LLMError):
    retryable = True


class LLMRequestRejected(LLMError):
    pass


class LLMBadOutput(LLMError):
    pass


class WebError(UpstreamError):
    """A web provider failed; ``provider`` is the service; ``str(exc)`` is ``"provider: message"``."""

    def __init__(self, provider: str, message: str, *, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(provider, message, message=f"{provider}: {message}", status=status,
                         retry_after=retry_after)

    @property
    def provider(self) -> str:
        return self.service


class UpstreamRateLimited(WebError):
    retryable = True


class UpstreamUnavailable(WebError):
    retryable = True


class UpstreamMalformed(WebError):
    retryable = True


class UpstreamRejected(WebError):
    pass


class BreakerOpen(WebError):
    pass


class QueueTimeout(UpstreamError):
    """No key of ``provider`` has a free slot within the allowed wait (``max_wait_s`` or the deadline): the call
    is not made; ``wait_s`` is how long the next slot is away."""

    def __init__(self, message: str, wait_s: float, *, provider: str = "web") -> None:
        super().__init__(provider, message, retry_after=wait_s)
        self.wait_s = wait_s


class EmbedError(UpstreamError):
    """The embedding server failed (``service`` "embed"); ``str(exc)`` is ``"embed: reason"``, ``retryable`` whether
    another attempt could succeed (429, 5xx, a timeout, a lost connection)."""

    def __init__(self, reason: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__("embed", reason, message=f"embed: {reason}", status=status)
        self.retryable = retryable


class RerankError(UpstreamError):
    """The rerank server failed (``service`` "rerank"); ``reranker`` is the registry row ("cohere", "tei");
    ``str(exc)`` is ``"rerank (cohere): reason"``. Never retried: the heuristic order is already there."""

    def __init__(self, reranker: str, reason: str, *, status: int | None = None) -> None:
        super().__init__("rerank", reason, message=f"rerank ({reranker}): {reason}", status=status)
        self.reranker = reranker


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
