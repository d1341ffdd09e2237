"""The MCP server at `{origin}/mcp` (contract §9): the official SDK's streamable HTTP transport
behind our bearer authentication, and every registered tool run through one pipeline that mirrors
the REST dependency `require(...)`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, ListToolsResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, ValidationError
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from salesplan import __version__
from salesplan.auth.dependencies import authenticate, check_scope, check_user_backed
from salesplan.auth.organization import resolve_organization
from salesplan.auth.principal import Principal
from salesplan.config import Settings
from salesplan.errors import (
    AppError,
    OrganizationRequired,
    Unauthorized,
    ValidationFailed,
    error_response,
)
from salesplan.errors import validation_errors as render_validation_errors
from salesplan.mcp.call import OrganizationMemory, ToolCall
from salesplan.mcp.registry import TOOLS, ToolSpec, input_schema
from salesplan.ratelimit.limiter import RateLimiter

log = logging.getLogger("salesplan.mcp")

MCP_PATH = "/mcp"
PRINCIPAL_KEY = "mcp_principal"
SESSION_HEADER = "mcp-session-id"

INSTRUCTIONS = """\
salesplan: a sales CRM and account-planning API. Tools mirror the REST operations
(same scopes, same organizations, same rate limits; every tool call counts as a write).
Start with listOrganizations; when the token reaches several organizations, call
setActiveOrganization once (remembered for this session) or pass headers.xOrganizationId
on a call. Errors come back as tool errors carrying the REST ErrorEnvelope
{"error": {"code", "message", "details"}}; on rate_limit_exceeded wait
details.retryAfterSeconds."""


def resource_metadata_url(settings: Settings) -> str:
    # Contract §2 names the origin-level document; the /mcp path form (RFC 9728) is served too.
    return f"{settings.public_url}/.well-known/oauth-protected-resource"


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection for the public host, plus loopback for local clients."""
    public = urlsplit(settings.public_url)
    origin = f"{public.scheme}://{public.netloc}"
    hosts = {public.netloc, public.hostname or public.netloc}
    hosts |= {"127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"}
    origins = {origin}
    for loopback in ("127.0.0.1", "localhost", "[::1]"):
        origins |= {f"http://{loopback}", f"http://{loopback}:*"}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted(hosts),
        allowed_origins=sorted(origins),
    )


# --- the tool pipeline -------------------------------------------------------------------------


def _text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def error_result(exc: AppError) -> CallToolResult:
    """A tool error carrying the REST ErrorEnvelope, as text and as structured content."""
    envelope = exc.envelope()
    return CallToolResult(
        content=[TextContent(type="text", text=_text(envelope))],
        structured_content=envelope,
        is_error=True,
    )


def body_result(body: Any) -> CallToolResult:
    """The REST response body, as structured content and as JSON text."""
    if body is None:  # a 204 operation
        return CallToolResult(content=[TextContent(type="text", text="{}")], structured_content={})
    data = jsonable_encoder(body)
    structured = data if isinstance(data, dict) else {"result": data}
    return CallToolResult(
        content=[TextContent(type="text", text=_text(data))], structured_content=structured
    )


def _headers_argument(arguments: dict[str, Any]) -> Any:
    headers = arguments.get("headers")
    if isinstance(headers, str):
        # Some clients send nested objects as JSON text.
        with contextlib.suppress(ValueError):
            headers = json.loads(headers)
    return headers


def _requested_organization(headers: Any) -> str | None:
    """The raw organization value (for the rate-limit bucket, like REST's header)."""
    if isinstance(headers, dict):
        value = headers.get("xOrganizationId")
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _named_organization(headers: Any) -> uuid.UUID | None:
    if headers is None:
        return None
    if not isinstance(headers, dict):
        raise ValidationFailed.at(["arguments", "headers"], "headers must be an object.")
    unknown = sorted(set(headers) - {"xOrganizationId"})
    if unknown:
        raise ValidationFailed.at(["arguments", "headers", unknown[0]], "Unknown property.")
    value = headers.get("xOrganizationId")
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return uuid.UUID(str(value).strip())
    except ValueError:
        raise ValidationFailed.at(
            ["arguments", "headers", "xOrganizationId"], "Organization id must be a UUID."
        ) from None


def _validate_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> Any:
    try:
        return spec.args.model_validate(arguments)
    except ValidationError as exc:
        errors = render_validation_errors(exc.errors())
        for error in errors:
            error["location"] = ["arguments", *error["location"]]
        raise ValidationFailed(
            "The tool arguments are not valid.", details={"errors": errors}
        ) from None


MCP_ORGANIZATION_REQUIRED = (
    "Several organizations are reachable: call setActiveOrganization once, "
    "or pass headers.xOrganizationId on this call."
)


def _resolve_organization(principal: Principal, named: uuid.UUID | None) -> uuid.UUID:
    """REST's rule, with an MCP client's words for naming an organization."""
    try:
        return resolve_organization(principal, named)
    except OrganizationRequired as exc:
        raise OrganizationRequired(MCP_ORGANIZATION_REQUIRED, details=exc.details) from None


def permitted(principal: Principal | None, spec: ToolSpec) -> bool:
    """Whether the token may call the tool at all (scope, user-backed): tools/list shows only
    these, so that agents choose among tools they can use."""
    if principal is None:
        return False
    if spec.scope is not None and spec.scope not in principal.scopes:
        return False
    return principal.user_backed or not spec.user_token


async def run_tool(spec: ToolSpec, arguments: dict[str, Any], request: Request) -> CallToolResult:
    """Authenticate (done by the endpoint) → rate limit → scope → organization → arguments →
    the adapter in one transaction. Every failure is a tool error with the REST envelope."""
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
        await limiter.consume(
            token_id=principal.token_id,
            organization=_requested_organization(headers)
            or (str(remembered) if remembered else None),
            group=spec.group,
            write=True,  # every MCP tool call is write traffic (spec "Rate limits")
            tool_name=spec.name,
        )
        check_scope(principal, spec.scope)
        if spec.user_token:
            check_user_backed(principal)
        named = _named_organization(headers)
        organization_id: uuid.UUID | None = None
        if spec.organization:
            organization_id = _resolve_organization(principal, named or remembered)
        elif named is not None:
            _resolve_organization(principal, named)
        args = _validate_arguments(spec, {k: v for k, v in arguments.items() if k != "headers"})
        async with app.state.sessionmaker() as session:
            call = ToolCall(
                name=spec.name,
                app=app,
                principal=principal,
                session=session,
                organization_id=organization_id,
                request_id=request_id,
                memory=memory,
            )
            try:
                body = await spec.run(call, args)
                await session.commit()
            except BaseException:
                await session.rollback()
                raise
        return body_result(body)
    except AppError as exc:
        return error_result(exc)
    except Exception:
        log.exception("tool %s failed", spec.name, extra={"request_id": request_id})
        return error_result(AppError(details={"requestId": request_id}))


class _RawArguments(ArgModelBase):
    """Hands the raw arguments to `run_tool`, which validates them after auth, rate limit and
    scope (the REST order) and answers a validation failure with the REST envelope."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def sdk_tool(spec: ToolSpec) -> Tool:
    async def call(arguments: dict[str, Any], ctx: Context) -> CallToolResult:
        request = ctx.request_context.request
        if not isinstance(request, Request):  # pragma: no cover - HTTP is the only transport
            return error_result(Unauthorized())
        return await run_tool(spec, arguments, request)

    return Tool(
        fn=call,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        parameters=input_schema(spec),
        fn_metadata=FuncMetadata(arg_model=_RawArguments),
        is_async=True,
        context_kwarg="ctx",
        annotations=ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            open_world_hint=False,
        ),
        meta={
            "salesplan/requiredScope": spec.scope,
            "salesplan/rateLimitGroup": spec.group,
        },
    )


def build_server() -> MCPServer:
    """A fresh MCP server with every registered tool."""
    import salesplan.mcp.tools  # noqa: F401  (registers the adapters)

    # MCPServer() calls logging.basicConfig (a Rich handler on the root logger) when the root has
    # no handler yet; the app's logging is the CLI's business, so give it a placeholder meanwhile.
    root = logging.getLogger()
    placeholder = logging.NullHandler() if not root.handlers else None
    if placeholder is not None:
        root.addHandler(placeholder)
    try:
        server = MCPServer(
            "salesplan",
            version=__version__,
            instructions=INSTRUCTIONS,
            tools=[sdk_tool(spec) for spec in TOOLS.values()],
        )
    finally:
        if placeholder is not None:
            root.removeHandler(placeholder)
    lowlevel = server._lowlevel_server
    # No prompts or resources: do not advertise them (capabilities follow the handlers).
    for method in [
        m for m in lowlevel._request_handlers if m.startswith(("prompts/", "resources/"))
    ]:
        del lowlevel._request_handlers[method]
    listing = lowlevel.get_request_handler("tools/list")
    assert listing is not None

    async def list_permitted_tools(ctx: Any, params: Any) -> ListToolsResult:
        result = await listing.handler(ctx, params)
        assert isinstance(result, ListToolsResult)
        request = getattr(ctx, "request", None)
        state = request.scope.get("state", {}) if isinstance(request, Request) else {}
        principal = state.get(PRINCIPAL_KEY)
        result.tools = [t for t in result.tools if permitted(principal, TOOLS[t.name])]
        return result

    lowlevel.add_request_handler("tools/list", listing.params_type, list_permitted_tools)
    return server


# --- HTTP: authentication in front of the SDK's session manager ---------------------------------


class McpEndpoint:
    """`/mcp`: 401 (ErrorEnvelope + WWW-Authenticate) without a valid token, else the SDK's
    streamable HTTP transport. The principal rides in the ASGI scope: `scope["user"]` ties each
    SDK session to the token that created it (another token presenting the session id gets the
    SDK's 404 "Session not found"), `scope["state"]` hands the principal to the tools."""

    def __init__(self, manager: StreamableHTTPSessionManager, settings: Settings) -> None:
        self.manager = manager
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        app = scope["app"]
        try:
            async with app.state.sessionmaker() as session:
                principal = await authenticate(request, session, audience="mcp")
                await session.commit()  # the key's last-used stamp
        except AppError as exc:
            headers = dict(exc.headers)
            if exc.status == 401:
                # Keep the error's own parameters (error="invalid_token", …) after the metadata.
                params = headers.get("WWW-Authenticate", "Bearer").removeprefix("Bearer").strip()
                headers["WWW-Authenticate"] = (
                    f'Bearer resource_metadata="{resource_metadata_url(self.settings)}"'
                    + (f", {params}" if params else "")
                )
            response = error_response(exc.status, exc.code, exc.message, exc.details, headers)
            await response(scope, receive, send)
            return
        token = AccessToken(
            token=str(principal.token_id),  # never the secret itself
            client_id=str(principal.token_id),
            scopes=sorted(principal.scopes),
            resource=principal.resource,
            subject=str(principal.user_id or principal.app_id or principal.token_id),
        )
        scope["user"] = AuthenticatedUser(token)
        scope["auth"] = AuthCredentials(sorted(principal.scopes))
        scope.setdefault("state", {})[PRINCIPAL_KEY] = principal
        await self.manager.handle_request(scope, receive, send)


def install_mcp(app: FastAPI, settings: Settings) -> None:
    """Mount `/mcp` as an exact route (a Mount would answer 307 before auth) and run the SDK's
    session manager inside the app's lifespan. One fresh server per app."""
    server = build_server()
    manager = StreamableHTTPSessionManager(
        app=server._lowlevel_server,
        security_settings=transport_security(settings),
    )
    app.state.mcp_server = server
    app.state.mcp_session_manager = manager

    @contextlib.asynccontextmanager
    async def run_session_manager(_: FastAPI) -> AsyncIterator[None]:
        # The manager's task group lives in a task of its own: a lifespan may be entered and
        # left in different tasks (test harnesses do), which an anyio cancel scope refuses.
        ready, stop = asyncio.Event(), asyncio.Event()

        async def serve() -> None:
            async with manager.run():
                ready.set()
                await stop.wait()

        task = asyncio.create_task(serve(), name="mcp-session-manager")
        waiter = asyncio.create_task(ready.wait())
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            waiter.cancel()
            task.result()  # raises why the manager could not start
        try:
            yield
        finally:
            stop.set()
            await task

    app.state.lifespan_hooks.append(run_session_manager)
    app.router.routes.append(Route(MCP_PATH, endpoint=McpEndpoint(manager, settings)))
