"""The handlers that render every error as an ErrorEnvelope (`errors.AppError`, FastAPI's
request validation, Starlette's HTTP exceptions, a value the database refuses)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from salesplan.errors import (
    BAD_VALUE_SQLSTATES,
    AppError,
    Conflict,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServiceUnavailable,
    Unauthorized,
    Unprocessable,
    ValidationFailed,
    error_body,
    sqlstate,
    validation_errors,
)


def error_response(
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(error_body(code, message, details), status_code=status, headers=headers)


# An HTTPException (raised by Starlette, or by the body-size guard in middleware.py) rendered with
# the code and message of the AppError of its status: one text per status.
_HTTP_CODES = {
    cls.status: (cls.code, cls.message)
    for cls in (
        ValidationFailed,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        PayloadTooLarge,
        Unprocessable,
        RateLimited,
        ServiceUnavailable,
    )
} | {405: ("method_not_allowed", "The method is not allowed on this resource.")}


async def _app_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AppError)
    return error_response(exc.status, exc.code, exc.message, exc.details, exc.headers)


# A body that is not a JSON object as a whole: what a JSON operation gets when the request's
# Content-Type is not JSON (FastAPI then hands the model the raw bytes).
_NOT_AN_OBJECT = frozenset({"model_attributes_type", "dict_type", "model_type"})


def _not_json(request: Request, errors: list[dict[str, Any]]) -> str | None:
    """The request's media type when a JSON body was expected and another was sent."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        return None
    whole_body = any(
        tuple(e.get("loc", ())) == ("body",) and e.get("type") in _NOT_AN_OBJECT for e in errors
    )
    return (media or "none") if whole_body else None


async def _request_validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    media = _not_json(request, errors)
    if media is not None:
        message = f"The body must be JSON: send Content-Type: application/json (got {media})."
        return error_response(
            ValidationFailed.status,
            ValidationFailed.code,
            message,
            {
                "errors": [{"location": ["body"], "message": message}],
                "expectedContentType": "application/json",
            },
        )
    return error_response(
        ValidationFailed.status,
        ValidationFailed.code,
        ValidationFailed.message,
        {"errors": validation_errors(errors)},
    )


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    code, message = _HTTP_CODES.get(exc.status_code, ("error", str(exc.detail)))
    if exc.status_code == 404 and exc.detail not in (None, "Not Found"):
        message = str(exc.detail)
    return error_response(exc.status_code, code, message, {}, dict(exc.headers or {}))


async def _dbapi_error(request: Request, exc: Exception) -> Response:
    if sqlstate(exc) in BAD_VALUE_SQLSTATES:
        return error_response(400, "validation_error", "A value is not storable.", {"errors": []})
    raise exc


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(DBAPIError, _dbapi_error)
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(StarletteHTTPException, _http_exception)
