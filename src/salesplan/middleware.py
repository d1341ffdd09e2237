"""One pure-ASGI middleware for what every HTTP response needs: an `X-Request-Id`, the body-size
limit (413), the rate-limit headers the auth dependency recorded, and a 500 ErrorEnvelope that
never leaks internals."""

from __future__ import annotations

import logging
import re
import uuid

import orjson
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from salesplan.db import RETRY_AFTER_SECONDS, DatabaseHealth, database_unavailable
from salesplan.errors import error_body

log = logging.getLogger("salesplan.request")

MAX_BODY = 1024 * 1024
MAX_BULK_BODY = 10 * 1024 * 1024
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def body_limit_for(path: str) -> int:
    return MAX_BULK_BODY if path.rstrip("/").endswith("/bulk") else MAX_BODY


def methods_of_path(routes: list[BaseRoute], scope: Scope) -> set[str] | None:
    """The methods the routes answer on this request's path, or None when no route has it.

    A route with a fixed path (`/accounts/bulk`) owns its path: a route with a parameter
    (`/accounts/{accountId}`) that also matches it does not add its methods, so that a wrong
    method on a fixed path is a 405 instead of a parameter route's validation error."""
    fixed: set[str] = set()
    templated: set[str] = set()
    path = scope.get("path", "")
    for route in routes:
        methods = getattr(route, "methods", None)
        regex = getattr(route, "path_regex", None)
        if not methods or regex is None or not regex.match(path):
            continue
        (templated if "{" in getattr(route, "path", "") else fixed).update(methods)
    found = fixed or templated
    if not found:
        return None
    return {*found, "OPTIONS", *(("HEAD",) if "GET" in found else ())}


class RequestMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = ""
        content_length = None
        for name, value in scope.get("headers", []):
            if name == b"x-request-id":
                candidate = value.decode("latin-1").strip()
                if _REQUEST_ID.match(candidate):
                    request_id = candidate
            elif name == b"content-length":
                content_length = value
        request_id = request_id or uuid.uuid4().hex
        # HEAD is a read like GET (spec "Rate limits"): route it as GET and send no body.
        head = scope.get("method") == "HEAD"
        if head:
            scope = dict(scope, method="GET")
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        limit = body_limit_for(scope.get("path", ""))
        started = False
        router = getattr(scope.get("app"), "router", None)
        allowed = methods_of_path(router.routes, scope) if router is not None else None

        async def send_wrapper(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers.append((b"x-request-id", request_id.encode()))
                for key, val in state.get("ratelimit_headers", {}).items():
                    if key.lower().encode() not in present:
                        headers.append((key.lower().encode(), val.encode()))
                message["headers"] = headers
            elif head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        method = "HEAD" if head else scope["method"]
        if allowed is not None and (method == "OPTIONS" or method not in allowed):
            # One answer for every path: OPTIONS lists what the path takes, any other method
            # it does not take is a 405 with the full `Allow` (not only the first route's).
            allow = {"allow": ", ".join(sorted(allowed))}
            if method == "OPTIONS":
                await send_wrapper(
                    {
                        "type": "http.response.start",
                        "status": 204,
                        "headers": [(b"allow", allow["allow"].encode())],
                    }
                )
                await send_wrapper({"type": "http.response.body", "body": b""})
                return
            await self._send_error(
                send_wrapper,
                405,
                "method_not_allowed",
                "The method is not allowed on this resource.",
                {},
                allow,
            )
            return

        if content_length is not None:
            try:
                too_big = int(content_length) > limit
            except ValueError:
                too_big = False
            if too_big:
                await self._send_error(
                    send_wrapper,
                    413,
                    "payload_too_large",
                    "The request body is too large.",
                    {"maxBytes": limit},
                )
                return

        received = 0

        async def receive_wrapper() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # An HTTPException, not errors.PayloadTooLarge: FastAPI re-raises those from
                    # body reading and turns any other exception there into a 400. The handler
                    # renders it as the same payload_too_large envelope.
                    raise HTTPException(413)
            return message

        try:
            await self.app(scope, receive_wrapper, send_wrapper)
        except Exception as exc:
            if database_unavailable(exc):
                await self._database_unavailable(scope, exc, send_wrapper, started)
                return
            # The requestId the 500 body shows, in the message itself, so that an operator
            # finds the traceback from what the client reports.
            log.exception(
                "unhandled error in %s %s (requestId %s)",
                scope.get("method"),
                scope.get("path"),
                request_id,
                extra={"request_id": request_id},
            )
            if started:
                raise
            await self._send_error(
                send_wrapper,
                500,
                "internal_error",
                "An unexpected error occurred.",
                {"requestId": request_id},
            )

    async def _database_unavailable(
        self, scope: Scope, exc: Exception, send: Send, started: bool
    ) -> None:
        """503 with Retry-After, not a 500 and a traceback per request: logged once per
        failure window by the app's DatabaseHealth."""
        health: DatabaseHealth | None = getattr(scope.get("app"), "state", None) and getattr(
            scope["app"].state, "db_health", None
        )
        if health is not None:
            health.failed(exc)
        if started:
            raise exc
        await self._send_error(
            send,
            503,
            "service_unavailable",
            "The service is temporarily unavailable; retry later.",
            {"retryAfterSeconds": RETRY_AFTER_SECONDS},
            {"retry-after": str(RETRY_AFTER_SECONDS)},
        )

    @staticmethod
    async def _send_error(
        send: Send,
        status: int,
        code: str,
        message: str,
        details: dict,
        headers: dict[str, str] | None = None,
    ) -> None:
        body = orjson.dumps(error_body(code, message, details))
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    *((k.encode(), v.encode()) for k, v in (headers or {}).items()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
