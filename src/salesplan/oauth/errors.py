"""OAuth endpoints answer errors in RFC 6749 shape `{error, error_description}`, not ErrorEnvelope."""

from __future__ import annotations

from fastapi import Request
from starlette.responses import Response

from salesplan.kit.responses import json_response

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


class OAuthError(Exception):
    def __init__(
        self,
        error: str,
        description: str,
        *,
        status: int = 400,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.headers = headers or {}

    def response(self) -> Response:
        return json_response(
            {"error": self.error, "error_description": self.description},
            self.status,
            NO_STORE | self.headers,
        )


async def oauth_error_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OAuthError)
    return exc.response()
