"""The one place where exceptions become HTTP responses.

Every error body has one shape, ``{"error": {"code", "status", "message", "field", "request_id"}}``, and never
a traceback (the OpenAI-compatible routes, ``/v1/chat/completions`` and ``/v1/models``, add OpenAI's ``type``
and ``param`` to the same object, so the ``openai`` SDK and other chat clients read it as their own error):
4xx bodies say what was wrong (400 names the field), 5xx bodies say only what kind of failure
it was and the request id, while the details go to the server log.

    exception                                   status
    pydantic validation / InputError            400  (``field`` names the request field at fault)
    AuthError                                   401  (``WWW-Authenticate: Bearer``)
    IndexMissingError, unknown route            404
    MessageIdConflict                           409
    BodyTooLarge, MessageTooLarge               413
    RateLimited                                 429  (``Retry-After``: whole seconds)
    BackendError                                502
    UpstreamError (LLM endpoint, web provider)  502, "the web provider tavily failed" (no more: no reason, no URL)
    LLMTimeout                                  504
    HistoryUnavailable                          503
    LLMNotConfigured                            503  (the message says which variables to set)
    DeadlineExceeded                            504
    ConfigError, anything else                  500
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import AuthError, ConvsearchError, InputError, RateLimited, UpstreamError
from ..infra.ratelimit import Allowance

log = logging.getLogger("convsearch.server")

CODES = {400: "invalid_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
         405: "method_not_allowed", 406: "not_acceptable", 409: "conflict", 413: "payload_too_large",
         415: "unsupported_media_type", 429: "rate_limited", 500: "internal", 502: "backend_error",
         503: "unavailable", 504: "deadline_exceeded"}
# 5xx bodies say this much and no more (the exception's text may hold paths, URLs or SQL)
SERVER_MESSAGES = {500: "internal error", 502: "the search backend failed", 503: "a dependency is unavailable",
                   504: "the request ran past its deadline"}


class InvalidField(InputError):
    """Bad input in one named request field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def status_of(exc: BaseException) -> int:
    """The HTTP status of any exception (our tree carries its own ``http_status``)."""
    if isinstance(exc, ConvsearchError):
        return int(exc.http_status)
    if isinstance(exc, RequestValidationError):
        return 400
    if isinstance(exc, StarletteHTTPException):
        return int(exc.status_code)
    return 500


def server_message(exc: BaseException, status: int) -> str:
    """What a 5xx tells the client about ``exc``: the kind of failure, and for an upstream one which service."""
    if isinstance(exc, UpstreamError):
        return f"{exc.what} failed"
    return SERVER_MESSAGES.get(status, "server error")


# OpenAI's error ``type`` per status (its SDK maps the status to an exception class and keeps ``type`` and ``param``)
OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "invalid_request_error", 409: "invalid_request_error", 413: "invalid_request_error",
                429: "rate_limit_error"}
OPENAI_PATHS = ("/v1/chat/", "/v1/models")


def is_openai_path(path: str) -> bool:
    """Whether ``path`` is one of the OpenAI-compatible routes (their errors carry OpenAI's fields too)."""
    return path.startswith(OPENAI_PATHS)


def error_body(status: int, message: str, *, request_id: str, field: str | None = None, public: str | None = None,
               openai: bool = False, code: str | None = None) -> dict[str, Any]:
    """The error object; a 5xx says only ``public`` (or the kind of failure), never ``message``; ``openai``: add
    OpenAI's ``type`` and ``param``."""
    shown = message if status < 500 else public or SERVER_MESSAGES.get(status, "server error")
    err: dict[str, Any] = {"code": code or CODES.get(status, "error"), "status": status, "message": shown,
                           "field": field, "request_id": request_id}
    if openai:
        err["type"] = OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        err["param"] = field
    return {"error": err}


def error_response(exc: BaseException, request_id: str, *, openai: bool = False) -> JSONResponse:
    """The response for ``exc``: status, headers (Retry-After, WWW-Authenticate) and body (``openai``: with
    OpenAI's ``type`` and ``param``)."""
    if isinstance(exc, StarletteHTTPException) and isinstance(exc.__cause__, ConvsearchError):
        exc = exc.__cause__  # FastAPI wraps errors raised while reading the body (BodyTooLarge) in a 400
    status = status_of(exc)
    headers: dict[str, str] = {"X-Request-ID": request_id}
    field = getattr(exc, "field", None)
    if isinstance(exc, RequestValidationError):
        field, message = validation_summary(exc)
    elif isinstance(exc, StarletteHTTPException):
        message = str(exc.detail)
        headers.update(exc.headers or {})
    else:
        message = str(exc) or type(exc).__name__
    if isinstance(exc, RateLimited):
        headers["Retry-After"] = Allowance(False, exc.retry_after).retry_after_header
    if isinstance(exc, AuthError):
        headers["WWW-Authenticate"] = "Bearer"
    if status >= 500:
        log.error("request %s failed with %s: %s", request_id, status, exc,
                  exc_info=(type(exc), exc, exc.__traceback__) if not isinstance(exc, ConvsearchError) else None)
    public = message if getattr(exc, "public", False) else server_message(exc, status)
    body = error_body(status, message, request_id=request_id, field=field, public=public, openai=openai,
                      code=getattr(exc, "error_code", None))
    return JSONResponse(body, status_code=status, headers=headers)


def validation_summary(exc: RequestValidationError) -> tuple[str, str]:
    """(field, message) for the first problem of a validation error; never echoes the input."""
    errors = list(exc.errors())
    if not errors:
        return "body", "invalid request"
    first = errors[0]
    loc = [str(x) for x in first.get("loc", ())]
    where = loc[0] if loc else "body"
    field = ".".join(loc[1:]) if len(loc) > 1 and first.get("type") != "json_invalid" else where
    message = f"{field}: {plain_problem(first)}"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return field, message


_OBJECT_TYPES = frozenset({"model_attributes_type", "dict_type", "model_type"})


def plain_problem(error: Any) -> str:
    """What a user can act on for one pydantic error: no regular expressions, no "dictionary or object to
    extract fields from". The input is looked at, never echoed."""
    kind, value, ctx = error.get("type"), error.get("input"), error.get("ctx") or {}
    if (kind in _OBJECT_TYPES or kind == "missing") and len(error.get("loc", ())) <= 1:
        return ("missing: " if kind == "missing" else "") + \
            "expected a JSON object, sent with Content-Type: application/json"
    if kind == "json_invalid":
        return "not valid JSON"
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "empty"
    if kind == "string_pattern_mismatch" and isinstance(value, str):
        if not value.strip():
            return "empty or only whitespace"
        if "\x00" in value:
            return "contains a NUL character"
        if any(ch < " " or ch == "\x7f" for ch in value):
            return "contains a control character"
        return "may hold only letters, digits, '_', '.' and '-'"  # BackendName, the one other pattern
    return str(error.get("msg", "invalid"))


def request_id_of(request: Request) -> str:
    return getattr(request.state, "request_id", None) or "-"


def install(app: FastAPI) -> None:
    """Register the handlers: ours, FastAPI's validation errors, Starlette's HTTP errors, and the rest."""

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        return error_response(exc, request_id_of(request), openai=is_openai_path(request.url.path))

    for cls in (ConvsearchError, RequestValidationError, StarletteHTTPException, Exception):
        app.add_exception_handler(cls, handle)


__all__ = ["CODES", "OPENAI_TYPES", "InvalidField", "error_body", "error_response", "install", "is_openai_path",
           "plain_problem", "server_message", "status_of", "validation_summary"]
