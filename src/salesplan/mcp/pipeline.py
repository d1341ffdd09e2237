"""A tool call, from the SDK's handler to the result (contract §9).

`run_tool` drives the one pipeline of every operation (`salesplan.auth.dependencies.authorize`:
authenticate → rate limit → scope → organization) with what an MCP call brings (`mcp_access`:
the principal `/mcp` authenticated, every call a write, `headers.xOrganizationId` else the
organization remembered by setActiveOrganization, the tool's name in a 429). Then a tool derived
from a route runs THE ROUTE: a request made of the arguments (path, query, JSON body) is handed
to the mounted route's ASGI app with the context already authorized, so that the REST validation,
service, transaction and response body apply unchanged; the result is that body. A tool of its
own (setActiveOrganization) runs its adapter in a transaction. Every failure is a tool error
carrying the REST ErrorEnvelope."""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Mapping
from urllib.parse import urlencode

from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Message

from salesplan.auth.dependencies import AUTHORIZED, Access, Requirement, authorize
from salesplan.auth.organization import parse_organization_id
from salesplan.auth.principal import Principal, RequestContext
from salesplan.errors import AppError, Unauthorized, ValidationFailed
from salesplan.errors import validation_errors as render_validation_errors
from salesplan.kit.adapters import route_runner
from salesplan.kit.uow import UnitOfWork
from salesplan.mcp.call import OrganizationMemory, ToolCall
from salesplan.mcp.derive import PARAMETERS, Parameters
from salesplan.mcp.registry import ToolArgs, ToolSpec
from salesplan.ratelimit.limiter import RateLimiter

log = logging.getLogger("salesplan.mcp")

PRINCIPAL_KEY = "mcp_principal"
SESSION_HEADER = "mcp-session-id"
INVALID_ARGUMENTS = "The tool arguments are not valid."
MCP_ORGANIZATION_REQUIRED = (
    "Several organizations are reachable: call setActiveOrganization once, "
    "or pass headers.xOrganizationId on this call."
)


# --- results -----------------------------------------------------------------------------------


def _text(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def error_result(exc: AppError) -> CallToolResult:
    """A tool error carrying the REST ErrorEnvelope, as text and as structured content."""
    return envelope_result(exc.envelope())


def envelope_result(envelope: dict[str, object]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=_text(envelope))],
        structured_content=envelope,
        is_error=True,
    )


def body_result(body: object) -> CallToolResult:
    """The REST response body, as structured content and as the same JSON in a text block (for
    clients that read only text)."""
    if body is None:  # a 204 operation
        return CallToolResult(content=[TextContent(type="text", text="{}")], structured_content={})
    # An object as it is; anything else as `{"result": …}` (an output schema is an object's).
    structured = body if isinstance(body, dict) else {"result": body}
    return CallToolResult(
        content=[TextContent(type="text", text=_text(structured))], structured_content=structured
    )


# --- what an MCP call brings to the pipeline ---------------------------------------------------


def _headers_argument(arguments: Mapping[str, object]) -> object:
    headers = arguments.get("headers")
    if isinstance(headers, str):
        # Some clients send nested objects as JSON text.
        with contextlib.suppress(ValueError):
            headers = json.loads(headers)
    return headers


def _bucket_organization(headers: object) -> str | None:
    """The raw organization value (for the rate-limit bucket, like REST's header)."""
    if isinstance(headers, dict):
        value = headers.get("xOrganizationId")
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _named_organization(headers: object) -> uuid.UUID | None:
    if headers is None:
        return None
    if not isinstance(headers, dict):
        raise ValidationFailed.at(["arguments", "headers"], "headers must be an object.")
    unknown = sorted(set(headers) - {"xOrganizationId"})
    if unknown:
        raise ValidationFailed.at(["arguments", "headers", unknown[0]], "Unknown property.")
    return parse_organization_id(
        headers.get("xOrganizationId"), ["arguments", "headers", "xOrganizationId"]
    )


def mcp_access(
    principal: Principal, headers: object, remembered: uuid.UUID | None, tool_name: str
) -> Access:
    return Access(
        write=True,  # every MCP tool call is write traffic (spec "Rate limits")
        bucket_organization=_bucket_organization(headers)
        or (str(remembered) if remembered else None),
        named=lambda: _named_organization(headers),
        principal=principal,
        default_organization=remembered,
        tool_name=tool_name,
        organization_required=MCP_ORGANIZATION_REQUIRED,
    )


def requirement(spec: ToolSpec) -> Requirement:
    return Requirement(
        spec.scope, spec.group, organization=spec.organization, user_token=spec.user_token
    )


def permitted(principal: Principal | None, spec: ToolSpec) -> bool:
    """Whether the token may call the tool at all (scope, user-backed): tools/list shows only
    these, so that agents choose among tools they can use."""
    if principal is None:
        return False
    if spec.scope is not None and spec.scope not in principal.scopes:
        return False
    return principal.user_backed or not spec.user_token


def _invalid(errors: list[dict[str, object]]) -> ValidationFailed:
    return ValidationFailed(INVALID_ARGUMENTS, details={"errors": errors})


def _validate_arguments(spec: ToolSpec, arguments: Mapping[str, object]) -> ToolArgs:
    try:
        return spec.args.model_validate(arguments)
    except ValidationError as exc:
        errors = render_validation_errors(exc.errors())
        for error in errors:
            error["location"] = ["arguments", *error["location"]]
        raise _invalid(errors) from None


# --- the call ----------------------------------------------------------------------------------


async def run_tool(
    spec: ToolSpec, arguments: Mapping[str, object], request: Request
) -> CallToolResult:
    """Pipeline, then the route (or the tool's own adapter). Every failure is a tool error with
    the REST envelope."""
    app = request.app
    state = request.scope.get("state", {})
    principal: Principal | None = state.get(PRINCIPAL_KEY)
    request_id = str(state.get("request_id", ""))
    if principal is None:  # pragma: no cover - the endpoint always authenticates first
        return error_result(Unauthorized())
    limiter: RateLimiter = app.state.rate_limiter
    memory = OrganizationMemory(limiter.store, principal, request.headers.get(SESSION_HEADER))
    try:
        headers = _headers_argument(arguments)
        remembered = await memory.get()
        call_state: dict[str, object] = {"request_id": request_id}
        ctx = await authorize(
            requirement(spec),
            mcp_access(principal, headers, remembered, spec.name),
            call_state,
            limiter,
        )
        rest = {k: v for k, v in arguments.items() if k != "headers"}
        if spec.run is None:
            call_state[AUTHORIZED] = ctx
            return await _run_route(spec, rest, call_state, request)
        args = _validate_arguments(spec, rest)
        async with UnitOfWork(app.state.database) as uow:
            call = ToolCall(
                name=spec.name,
                app=app,
                principal=principal,
                session=await uow.session(),
                organization_id=ctx.organization_id if isinstance(ctx, RequestContext) else None,
                request_id=request_id,
                memory=memory,
            )
            body = await spec.run(call, args)
        return body_result(jsonable_encoder(body))
    except AppError as exc:
        return error_result(exc)
    except Exception:
        log.exception("tool %s failed", spec.name, extra={"request_id": request_id})
        return error_result(AppError(details={"requestId": request_id}))


def _query_value(name: str, value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, float) and value.is_integer():
        return [str(int(value))]
    if isinstance(value, list | tuple):
        return [v for item in value for v in _query_value(name, item)]
    if isinstance(value, dict):
        raise _invalid([{"location": ["arguments", name], "message": "Must be a scalar."}])
    return [str(value)]


def _arguments_request(
    route: APIRoute, parameters: Parameters, arguments: Mapping[str, object]
) -> tuple[dict[str, str], list[tuple[str, str]], bytes | None]:
    """(path parameters, query pairs, JSON body) of the request the tool makes of its route."""
    known = {*parameters.path, *parameters.query, *parameters.body}
    unknown = [name for name in arguments if name not in known]
    if unknown:
        raise _invalid(
            [{"location": ["arguments", name], "message": "Unknown property."} for name in unknown]
        )
    path = {n: str(arguments[n]) for n in parameters.path if arguments.get(n) is not None}
    query = [(n, v) for n in parameters.query for v in _query_value(n, arguments.get(n))]
    body = None
    if parameters.has_body:
        fields = {n: arguments[n] for n in parameters.body if n in arguments}
        body = json.dumps(fields).encode()
    return path, query, body


def _rest_validation(exc: RequestValidationError) -> ValidationFailed:
    """REST's parameter and body errors, located on the tool's arguments."""
    errors = render_validation_errors(exc.errors())
    for error in errors:
        location = error["location"]
        if location and location[0] in ("path", "query", "body"):
            error["location"] = ["arguments", *location[1:]]
    return _invalid(errors)


def _relocated(error: object) -> ValidationFailed | None:
    """FastAPI's parameter and body errors as the whole app renders them (the handler's
    envelope, located on path / query / body) as the tool's arguments error, as
    `_rest_validation` makes it on the direct path; None for any other error."""
    if not isinstance(error, dict) or (error.get("code"), error.get("message")) != (
        ValidationFailed.code,
        ValidationFailed.message,
    ):
        return None
    errors = error.get("details", {}).get("errors")
    if not isinstance(errors, list) or not all(
        isinstance(item, dict)
        and isinstance(item.get("location"), list)
        and item["location"][:1] in (["path"], ["query"], ["body"])
        for item in errors
    ):
        return None
    for item in errors:
        item["location"] = ["arguments", *item["location"][1:]]
    return _invalid(errors)


async def _run_route(
    spec: ToolSpec, arguments: Mapping[str, object], state: dict[str, object], request: Request
) -> CallToolResult:
    routes: dict[str, APIRoute] = request.app.state.mcp_routes
    route = routes[spec.name]
    path_params, query, payload = _arguments_request(route, PARAMETERS[spec.name], arguments)
    path = route.path_format.format_map({n: path_params.get(n, "") for n in route.param_convertors})
    outer = request.scope
    headers = [(b"host", request.headers.get("host", "localhost").encode("latin-1"))]
    if payload is not None:
        headers += [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
        ]
    scope = {
        "type": "http",
        "asgi": outer.get("asgi", {"version": "3.0"}),
        "http_version": "1.1",
        "method": next(iter(route.methods or {"GET"})),
        "scheme": outer.get("scheme", "http"),
        "server": outer.get("server"),
        "client": outer.get("client"),
        "root_path": "",
        "path": path,
        "raw_path": path.encode(),
        "query_string": urlencode(query).encode(),
        "headers": headers,
        "app": request.app,
        "state": state,
        "path_params": path_params,
        "endpoint": route.endpoint,
        "route": route,
    }
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": payload or b"", "more_body": False}

    status = 500
    chunks: list[bytes] = []

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    runner = route_runner(route)
    try:
        if runner is not None:
            await runner(scope, receive, send)
        else:
            # The plain path: the request through the whole app (its router finds the route;
            # its handlers render a validation error, relocated below).
            del scope["path_params"], scope["endpoint"], scope["route"]
            scope["headers"] = [
                *headers,
                (b"x-request-id", str(state.get("request_id", "")).encode()),
            ]
            await request.app(scope, receive, send)
    except RequestValidationError as exc:
        raise _rest_validation(exc) from None
    raw = b"".join(chunks)
    body = json.loads(raw) if raw else None
    if status >= 400:
        if isinstance(body, dict) and set(body) == {"error"}:
            relocated = _relocated(body["error"]) if runner is None else None
            if relocated is not None:
                raise relocated
            return envelope_result(body)
        raise AppError(status=status, details={"requestId": state.get("request_id", "")})
    if spec.result is not None:
        body = spec.result(arguments, body)
    return body_result(body)
