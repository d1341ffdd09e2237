"""Exceptions: one class per error status the API documents, each carrying the ErrorEnvelope
(`code`, `message`, `details`), the HTTP status and the request id."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "InternalServerError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "SalesplanError",
    "UnprocessableEntityError",
    "WebhookVerificationError",
]


class SalesplanError(Exception):
    """Every exception this package raises."""


class APIError(SalesplanError):
    """A call that did not succeed: an error answer, or no answer at all."""

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.request = request


class APIConnectionError(APIError):
    """No answer: the connection failed (after the retries the call allowed)."""

    def __init__(self, message: str = "Connection error.", *, request: httpx.Request) -> None:
        super().__init__(message, request=request)


class APITimeoutError(APIConnectionError):
    """No answer in time (after the retries the call allowed)."""

    def __init__(self, *, request: httpx.Request) -> None:
        super().__init__("Request timed out.", request=request)


class APIStatusError(APIError):
    """An error answer. `code`, `message` and `details` are the ErrorEnvelope's (for the OAuth
    endpoints: `error` and `error_description`); `request_id` names the call in the server's
    log (`X-Request-Id`)."""

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response,
        code: str,
        details: dict[str, Any],
        body: Any,
    ) -> None:
        super().__init__(message, request=response.request)
        self.response = response
        self.status_code = response.status_code
        self.code = code
        self.details = details
        self.body = body
        request_id = response.headers.get("x-request-id") or details.get("requestId")
        self.request_id: str | None = str(request_id) if request_id else None

    def __str__(self) -> str:
        return f"{self.status_code} {self.code}: {self.message}"


class BadRequestError(APIStatusError):
    """400: `validation_error` (`details.errors`) or `organization_required`."""


class AuthenticationError(APIStatusError):
    """401: missing, malformed, expired, revoked or unknown token."""


class PermissionDeniedError(APIStatusError):
    """403: a scope missing (`details.requiredScope`) or the organization out of reach."""


class NotFoundError(APIStatusError):
    """404: not found in the caller's organization."""


class ConflictError(APIStatusError):
    """409: a duplicate `crmId`, or an idempotency conflict (`details.reason`)."""


class UnprocessableEntityError(APIStatusError):
    """422: well-formed but semantically wrong (`details.field`, `details.reason`)."""


class RateLimitError(APIStatusError):
    """429: the bucket is spent; `retry_after` is how many seconds to wait."""

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response,
        code: str,
        details: dict[str, Any],
        body: Any,
    ) -> None:
        super().__init__(message, response=response, code=code, details=details, body=body)
        self.retry_after: float | None = retry_after_of(response.headers)
        if self.retry_after is None and isinstance(details.get("retryAfterSeconds"), int | float):
            self.retry_after = float(details["retryAfterSeconds"])


class InternalServerError(APIStatusError):
    """5xx: the server failed (500 `internal_error`, 503 while a backing service is down)."""


class WebhookVerificationError(SalesplanError):
    """A webhook delivery whose signature, timestamp or body cannot be trusted."""


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def retry_after_of(headers: httpx.Headers) -> float | None:
    """`Retry-After` in seconds (a number; an HTTP date is read too), or None."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def error_from_response(response: httpx.Response) -> APIStatusError:
    """The typed exception of an error answer, from its ErrorEnvelope (or RFC 6749 error)."""
    try:
        body: Any = json.loads(response.content) if response.content else None
    except ValueError:
        body = response.text
    code, message = f"http_{response.status_code}", response.reason_phrase
    details: dict[str, Any] = {}
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = str(error.get("code", code))
        message = str(error.get("message", message))
        if isinstance(error.get("details"), dict):
            details = error["details"]
    elif isinstance(error, str):  # OAuth endpoints (RFC 6749 §5.2)
        code = error
        message = str(body.get("error_description") or error)
    elif isinstance(body, str) and body:
        message = body[:500]
    status = response.status_code
    cls = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIStatusError)
    return cls(message, response=response, code=code, details=details, body=body)
