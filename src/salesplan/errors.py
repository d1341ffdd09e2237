"""The one error type, and the ErrorEnvelope's body.

The error types import no web framework: services and CLI commands raise them, and a command
starts without FastAPI. The handlers that render them for HTTP are in `error_handlers.py`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

log = logging.getLogger("salesplan.errors")


class ErrorOptions(TypedDict, total=False):
    """`AppError`'s keyword arguments, for the subclasses that pass them on."""

    details: dict[str, object] | None
    headers: dict[str, str] | None
    status: int | None
    code: str | None


class AppError(Exception):
    status = 500
    code = "internal_error"
    message = "An unexpected error occurred."

    def __init__(
        self,
        message: str | None = None,
        *,
        details: dict[str, object] | None = None,
        headers: dict[str, str] | None = None,
        status: int | None = None,
        code: str | None = None,
    ) -> None:
        self.message = message or self.message
        self.details = details or {}
        self.headers = headers or {}
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code
        super().__init__(self.message)

    def envelope(self) -> dict[str, object]:
        return error_body(self.code, self.message, self.details)


class ValidationFailed(AppError):
    status, code, message = 400, "validation_error", "The request is not valid."

    @classmethod
    def at(cls, location: list[str | int], message: str) -> ValidationFailed:
        return cls(message, details={"errors": [{"location": location, "message": message}]})


class OrganizationRequired(AppError):
    status, code = 400, "organization_required"
    message = "Several organizations are reachable: name one with X-Organization-Id."


class Unauthorized(AppError):
    status, code, message = 401, "unauthorized", "A valid bearer token is required."

    def __init__(self, message: str | None = None, **kwargs: Unpack[ErrorOptions]) -> None:
        super().__init__(message, **kwargs)
        self.headers.setdefault("WWW-Authenticate", "Bearer")


class Forbidden(AppError):
    status, code, message = 403, "forbidden", "Not allowed."


class NotFound(AppError):
    status, code, message = 404, "not_found", "The resource was not found."


class Conflict(AppError):
    status, code, message = 409, "conflict", "The request conflicts with the current state."


class PreconditionFailed(AppError):
    """RFC 9110 §13.1.1: the client's If-Match names a representation that is no longer
    current; nothing was changed."""

    status, code = 412, "precondition_failed"
    message = "The resource changed since the representation named by If-Match."


class PayloadTooLarge(AppError):
    status, code, message = 413, "payload_too_large", "The request body is too large."


class Unprocessable(AppError):
    status, code, message = 422, "unprocessable", "The request cannot be processed."


class RateLimited(AppError):
    status, code, message = 429, "rate_limit_exceeded", "Rate limit exceeded."


class ServiceUnavailable(AppError):
    """A backing service (the database, the shared store) cannot answer now; retry later."""

    status, code = 503, "service_unavailable"
    message = "The service is temporarily unavailable; retry later."

    def __init__(
        self, message: str | None = None, *, retry_after: int = 5, **kwargs: Unpack[ErrorOptions]
    ) -> None:
        super().__init__(message, **kwargs)
        self.headers.setdefault("Retry-After", str(retry_after))
        self.details.setdefault("retryAfterSeconds", retry_after)


class ProviderError(AppError):
    status, code, message = 502, "provider_error", "The connected provider failed."


def error_body(
    code: str, message: str, details: Mapping[str, object] | None = None
) -> dict[str, object]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _location(loc: tuple[object, ...]) -> list[object]:
    return [part for part in loc if part not in ("function-after", "function-before")]


def validation_errors(errors: Any) -> list[dict[str, Any]]:
    out = []
    for err in errors:
        message = err.get("msg", "Invalid value")
        if err.get("type") == "extra_forbidden":
            message = "Unknown property."
        elif err.get("type") == "json_invalid":
            message = "Malformed JSON: " + str(err.get("ctx", {}).get("error", "invalid"))
        out.append({"location": _location(tuple(err.get("loc", ()))), "message": message})
    return out


# SQLSTATEs that only a value the client sent can cause: a NUL character (22021), a number out of
# the column's range (22003), an untranslatable character (22P05), a string longer than its
# column (22001). Every input is validated
# before it reaches the database; this is the net for a value a validator missed.
BAD_VALUE_SQLSTATES = frozenset({"22021", "22003", "22P05", "22001"})


def sqlstate(exc: BaseException) -> str | None:
    orig = getattr(exc, "orig", None)
    code = getattr(orig, "pgcode", None) or getattr(orig, "sqlstate", None)
    return str(code) if code else None
