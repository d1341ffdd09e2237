"""One pure-ASGI middleware for what every HTTP response needs: an `X-Request-Id`, the body-size
limit (413), the rate-limit headers the auth dependency recorded, and a 500 ErrorEnvelope that
never leaks internals."""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match, Mount, Route, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from salesplan.accesslog import redact_path
from salesplan.db import (
    RETRY_AFTER_SECONDS,
    AdmissionGate,
    DatabaseHealth,
    connection_lost,
    database_unavailable,
)
from salesplan.errors import PayloadTooLarge, error_body
from salesplan.kit.adapters import install_router_dispatch, router_view

log = logging.getLogger("salesplan.request")

MAX_BODY = 1024 * 1024
MAX_BULK_BODY = 10 * 1024 * 1024
# Inbound e-mail (a reply with a PDF attached) may be up to 10 MiB (contract §12).
MAX_INBOUND_EMAIL_BODY = 10 * 1024 * 1024
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def body_limit_for(path: str) -> int:
    if path.rstrip("/") == "/inbound/email":
        return MAX_INBOUND_EMAIL_BODY
    return MAX_BULK_BODY if path.rstrip("/").endswith("/bulk") else MAX_BODY


def _literals(template: str) -> tuple[bool, ...]:
    """Which segments of a route's path are literal (`/plans/{planId}/milestones/reorder`:
    True, True, True, False, True, True)."""
    return tuple("{" not in segment for segment in template.split("/"))


def methods_of_path(routes: Iterable[BaseRoute], scope: Scope) -> set[str] | None:
    """The methods the routes answer on this request's path, or None when no route has it.

    The most literal routes that match own the path: a route with a literal segment
    (`/accounts/bulk`, `/plans/{planId}/milestones/reorder`) where another has a parameter
    (`/accounts/{accountId}`, `…/milestones/{milestoneId}`) hides the other's methods, so that
    a wrong method on its path is a 405 instead of the parameter route's validation error.
    Literal-ness is compared segment by segment from the left."""
    best: tuple[bool, ...] | None = None
    found: set[str] = set()
    path = scope.get("path", "")
    for route in routes:
        methods = getattr(route, "methods", None)
        regex = getattr(route, "path_regex", None)
        if not methods or regex is None or not regex.match(path):
            continue
        literals = _literals(getattr(route, "path", ""))
        if best is None or literals > best:
            best, found = literals, set(methods)
        elif literals == best:
            found.update(methods)
    return _allowed(found)


def shadowing(routes: list[BaseRoute]) -> list[Route]:
    """The routes with a parameter that hide another route of `routes` on their paths: same
    length, a literal segment where the other has a parameter, the other's literals equal.
    A request whose path one of them matches gets its method checked against the owners of
    the path (`methods_of_path`) before routing, which would pick the other route."""
    found: list[Route] = []
    for route in routes:
        if not isinstance(route, Route) or not route.methods or "{" not in route.path:
            continue
        mine = route.path.split("/")
        for other in routes:
            if other is route or not isinstance(other, Route) or not other.methods:
                continue
            theirs = other.path.split("/")
            if len(theirs) != len(mine):
                continue
            pairs = list(zip(theirs, mine, strict=True))
            if all("{" in t or t == m for t, m in pairs) and any(
                "{" in t and "{" not in m for t, m in pairs
            ):
                found.append(route)
                break
    return found


def _allowed(found: set[str]) -> set[str] | None:
    if not found:
        return None
    return {*found, "OPTIONS", *(("HEAD",) if "GET" in found else ())}


# How many leading path segments the index keys routes by ("", "api", "v1", "accounts").
_DEPTH = 4


class RouteIndex:
    """The app's routes indexed by the literal segments their path starts with, so that a
    request is matched against the few routes that can match its path (in their declared
    order) instead of the whole table (~2 µs of regex per route, ~150 routes).

    A route's key is the segments of its path before the first one holding a parameter,
    cut to `_DEPTH`; a route the index cannot read (no string path) is a candidate for every
    request. Fixed paths (no parameter) are also kept whole, with their methods, for the 405
    of a method a fixed path does not take."""

    def __init__(self, routes: list[BaseRoute]) -> None:
        self.size = len(routes)
        self._buckets: dict[tuple[str, ...], list[int]] = {}
        self.routes = list(routes)
        fixed: dict[str, set[str]] = {}
        for position, route in enumerate(self.routes):
            path = getattr(route, "path", None)
            if not isinstance(path, str) or not isinstance(route, Route | Mount):
                key: tuple[str, ...] = ()
            else:
                segments = path.split("/")
                literal = []
                for segment in segments[:_DEPTH]:
                    if "{" in segment:
                        break
                    literal.append(segment)
                key = tuple(literal)
                methods = getattr(route, "methods", None)
                if methods and "{" not in path and isinstance(route, Route):
                    fixed.setdefault(path, set()).update(methods)
            self._buckets.setdefault(key, []).append(position)
        self.fixed = {path: _allowed(methods) or set() for path, methods in fixed.items()}
        self._candidates: dict[tuple[tuple[str, ...], ...], list[BaseRoute]] = {}

    def _keys(self, path: str) -> tuple[tuple[str, ...], ...]:
        segments = path.split("/", _DEPTH)[:_DEPTH]
        return tuple(
            key
            for key in (tuple(segments[:n]) for n in range(len(segments) + 1))
            if key in self._buckets
        )

    def candidates(self, path: str) -> list[BaseRoute]:
        """The routes that can match `path`, in the table's order."""
        keys = self._keys(path)
        found = self._candidates.get(keys)
        if found is None:
            positions = sorted(p for key in keys for p in self._buckets[key])
            found = self._candidates[keys] = [self.routes[p] for p in positions]
        return found

    def allowed(self, scope: Scope) -> set[str] | None:
        """`methods_of_path` over the candidates of the request's path."""
        path = scope.get("path", "")
        fixed = self.fixed.get(path)
        if fixed is not None:
            return fixed
        return methods_of_path(self.candidates(path), scope)


def route_index(router: Router) -> RouteIndex:
    """The router's index (kept on it), rebuilt when routes were added (tests add probe
    routes)."""
    index: RouteIndex | None = getattr(router, "salesplan_route_index", None)
    if index is None or index.size != len(router.routes):
        index = vars(router)["salesplan_route_index"] = RouteIndex(router.routes)
    return index


class _Unmatched(BaseRoute):
    """The last route of an indexed view: reached when none of the candidates matched fully.
    A path some route answers with another method is the 405 with the full `Allow`; anything
    else (a slash to redirect, a 404) is left to the whole table, as before the index."""

    def __init__(self, router: Router, full: ASGIApp) -> None:
        self.router = router
        self.full = full

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        return Match.FULL, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        allowed = route_index(self.router).allowed(scope)
        if allowed is not None and scope["method"] not in allowed:
            raise HTTPException(405, headers={"Allow": ", ".join(sorted(allowed))})
        await self.full(scope, receive, send)


class IndexedRouting:
    """The router's dispatch through the index: FastAPI's own matching loop runs on a view of
    the router whose routes are the path's candidates, then `_Unmatched`. Installed in front
    of the router's own dispatch (`full`) by `install_route_index`."""

    def __init__(self, router: Router, full: ASGIApp) -> None:
        self.router = router
        self.full = full
        self._views: dict[int, Router] = {}
        self._shadowing: dict[int, list[Route]] = {}
        self._index: RouteIndex | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.full(scope, receive, send)
            return
        index = route_index(self.router)
        if index is not self._index:
            self._index, self._views, self._shadowing = index, {}, {}
        candidates = index.candidates(scope["path"])
        view = self._views.get(id(candidates))
        if view is None:
            view = router_view(self.router, [*candidates, _Unmatched(self.router, self.full)])
            self._views[id(candidates)] = view
            self._shadowing[id(candidates)] = shadowing(candidates)
        for route in self._shadowing[id(candidates)]:
            if route.path_regex.match(scope["path"]):
                allowed = index.allowed(scope)
                if allowed is not None and scope["method"] not in allowed:
                    raise HTTPException(405, headers={"Allow": ", ".join(sorted(allowed))})
                break
        await view.app(scope, receive, send)


def install_route_index(app: Starlette) -> None:
    """Route through the index when the framework lets us (`kit.adapters`); otherwise the
    router matches the whole table and `RequestMiddleware` answers every wrong method itself
    (`app.state.routes_indexed` False), so that the answers are the same."""
    app.state.routes_indexed = install_router_dispatch(
        app.router, lambda full: IndexedRouting(app.router, full)
    )


_ORGANIZATION_HEADERS = (b"x-organization-id", b"x-subscriber-id")
_ORGANIZATION_QUERY = re.compile(rb"(?:^|&)(?:organizationId|subscriberId)=([^&]+)")


def _admission_key(scope: Scope) -> str | None:
    """Whose share of the admission gate a request takes, read before authentication: the
    organization it names (header, else query), else its credentials (a key that reaches one
    organization names none), else nobody (unauthenticated: no share)."""
    authorization = None
    for name, value in scope.get("headers", ()):
        if name in _ORGANIZATION_HEADERS and value.strip():
            return "org:" + value.strip().decode("latin-1").lower()
        if name == b"authorization":
            authorization = value
    found = _ORGANIZATION_QUERY.search(scope.get("query_string", b""))
    if found is not None:
        return "org:" + found.group(1).decode("latin-1").lower()
    if authorization is not None:
        return "token:" + hashlib.sha256(authorization).hexdigest()
    return None


def _app_state(scope: Scope, name: str) -> Any:
    """An attribute of the app's state (`app.state.<name>`), or None."""
    return getattr(getattr(scope.get("app"), "state", None), name, None)


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
        index = route_index(router) if router is not None else None

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
        too_big = False
        if content_length is not None:
            try:
                too_big = int(content_length) > limit
            except ValueError:
                too_big = False
        # One answer for every path: OPTIONS lists what the path takes, any other method it
        # does not take is a 405 with the full `Allow` (not only the first route's). Worked
        # out here only when it can change the answer: OPTIONS, a fixed path's (one lookup),
        # and before a 413; otherwise routing finds the method or answers the 405 itself
        # (`_Unmatched`), unless the router could not take the index (every request then).
        allowed: set[str] | None = None
        if index is not None:
            if method == "OPTIONS" or too_big or not _app_state(scope, "routes_indexed"):
                allowed = index.allowed(scope)
            else:
                allowed = index.fixed.get(scope.get("path", ""))
        if allowed is not None and (method == "OPTIONS" or method not in allowed):
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

        if too_big:
            await self._send_error(
                send_wrapper,
                PayloadTooLarge.status,
                PayloadTooLarge.code,
                PayloadTooLarge.message,
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

        # First come, first served in front of the database pool (db.AdmissionGate): every
        # API request, reads and writes (bench/README.md, "the tails").
        gate: AdmissionGate | None = None
        admission_key: str | None = None
        if scope.get("path", "").startswith("/api/"):
            gate = _app_state(scope, "admission")
            admission_key = _admission_key(scope)
        if gate is not None and not await gate.enter(admission_key):
            await self._send_unavailable(send_wrapper)
            return
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
                redact_path(scope.get("path", "")),
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
        finally:
            if gate is not None:
                gate.leave(admission_key)

    async def _database_unavailable(
        self, scope: Scope, exc: Exception, send: Send, started: bool
    ) -> None:
        """503 with Retry-After, not a 500 and a traceback per request: logged once per
        failure window by the app's DatabaseHealth."""
        health: DatabaseHealth | None = _app_state(scope, "db_health")
        if health is not None and connection_lost(exc):
            health.failed(exc)
        if started:
            raise exc
        await self._send_unavailable(send)

    @classmethod
    async def _send_unavailable(cls, send: Send) -> None:
        await cls._send_error(
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
        details: Mapping[str, object],
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
