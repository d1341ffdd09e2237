"""The MCP transport at `{origin}/mcp` (contract §9): the official SDK's streamable HTTP transport
behind our bearer authentication, its transport security, its lifespan, and the SDK glue that
hands each registered tool to `salesplan.mcp.pipeline.run_tool`.

The SDK runs STATELESS: no process keeps anything of a session, so that any process (a second
worker, another machine behind a load balancer) serves any request, without sticky routing.
What a session is (an id bound to the principal that initialized it) and what it remembers
(setActiveOrganization) live in the rate-limit store (memory, or Redis shared by every process):
`/mcp` issues the session id on `initialize` and refuses it (404) to any other principal."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.routing import APIRoute
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, ListToolsResult, TextContent, ToolAnnotations
from pydantic import ConfigDict
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from salesplan import __version__
from salesplan.auth.dependencies import authenticate
from salesplan.auth.principal import Principal
from salesplan.auth.scopes import READ_SCOPES
from salesplan.config import Settings
from salesplan.error_handlers import error_response
from salesplan.errors import AppError, Unauthorized
from salesplan.kit.adapters import drop_handlers, lowlevel_server
from salesplan.kit.uow import UnitOfWork
from salesplan.mcp.call import TOKEN_TTL, OrganizationMemory
from salesplan.mcp.output import output_schemas, publishes_output
from salesplan.mcp.pipeline import PRINCIPAL_KEY, SESSION_HEADER, error_result, permitted, run_tool
from salesplan.mcp.registry import TOOLS, ToolSpec, input_schema
from salesplan.mcp.tools import register_api_tools
from salesplan.mcp.toolsets import EVERYTHING, Selection, parse_selection
from salesplan.ratelimit.store import RateLimitStore, StoreUnavailable

log = logging.getLogger("salesplan.mcp")

MCP_PATH = "/mcp"
SELECTION_KEY = "mcp_selection"
TOOLS_LIST_TTL_MS = 300_000

INSTRUCTIONS = """\
salesplan: a sales CRM and account-planning API. Tools mirror the REST operations
(same scopes, same organizations, same rate limits; every tool call counts as a write).
Start with listOrganizations; when the token reaches several organizations, call
setActiveOrganization once (remembered for this session) or pass headers.xOrganizationId
on a call. Errors come back as tool errors carrying the REST ErrorEnvelope
{"error": {"code", "message", "details"}}; on rate_limit_exceeded wait
details.retryAfterSeconds.
Lists answer {"data", "pagination": {hasNextPage, and nextCursor in cursor mode, or page,
pageSize, totalCount, totalPages in page mode}}; sortBy (one of the tool's keys) and order
(asc, the default, or desc) sort them. Page mode: page (from 1) and pageSize (default 50, at
most 200). Cursor mode: give limit (1..200) without page, then pass pagination.nextCursor as
cursor until hasNextPage is false; never mix cursor with page.
Incremental sync (updatedSince, an RFC 3339 instant with its offset): only rows whose
updatedAt is at or after it; without sortBy sorted by updatedAt ascending, ties by id. Page by
cursor (a row changed meanwhile comes again at the end, none is skipped) and pass the last
row's updatedAt as the next updatedSince (that row comes back once; skip what you hold at the
same updatedAt). Add includeArchived=true to learn of deletions (archived rows).
Catalog: the MCP URL's toolsets query parameter (or X-MCP-Toolsets header) narrows the tools
to core, engage, calendar, feed, rooms (comma-separated); readonly=1 (or X-MCP-Readonly: 1)
hides the write tools."""


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


class _RawArguments(ArgModelBase):
    """Hands the raw arguments to `run_tool`, which validates them after auth, rate limit and
    scope (the REST order) and answers a validation failure with the REST envelope."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, object]:
        return {"arguments": dict(self.model_extra or {})}


def sdk_tool(spec: ToolSpec) -> Tool:
    structured = publishes_output(spec)

    async def call(arguments: dict[str, Any], ctx: Context) -> CallToolResult:
        request = ctx.request_context.request
        if not isinstance(request, Request):  # pragma: no cover - HTTP is the only transport
            return error_result(Unauthorized())
        if not selection_of(request).shows(spec.toolset, spec.read_only):
            # Outside the toolsets (or a write tool in read-only mode): an unknown tool, in the
            # SDK's own words for one.
            text = f"Unknown tool: {spec.name}"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        result = await run_tool(spec, arguments, request)
        if result.is_error and structured:
            # The envelope would not validate against the tool's output schema: a read tool's
            # error carries it as text only (clients validate only successful results).
            result.structured_content = None
        return result

    return Tool(
        fn=call,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        parameters=input_schema(spec),
        fn_metadata=FuncMetadata(arg_model=_RawArguments),
        is_async=True,
        context_kwarg="ctx",
        annotations=ToolAnnotations(  # (the title is the tool's own, not repeated here)
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
        meta={"salesplan/requiredScope": spec.scope},
    )


def selection_of(request: Request) -> Selection:
    """The toolsets and read-only mode the request to `/mcp` asked for."""
    selection = request.scope.get("state", {}).get(SELECTION_KEY)
    return selection if isinstance(selection, Selection) else EVERYTHING


def permitted_listing(ctx: ServerRequestContext[Any, Any], result: object) -> ListToolsResult:
    """The SDK's tools/list answer, cut to the tools the caller's token may call and the
    toolsets (and read-only mode) it asked for, with their output schemas, in a deterministic
    order (by name) whatever the registration order."""
    if not isinstance(result, ListToolsResult):
        result = ListToolsResult.model_validate(result)
    request = ctx.request
    state = request.scope.get("state", {}) if isinstance(request, Request) else {}
    principal = state.get(PRINCIPAL_KEY)
    selection = state.get(SELECTION_KEY, EVERYTHING)
    schemas = output_schemas(request.app) if isinstance(request, Request) else {}
    tools = [
        t
        for t in result.tools
        if permitted(principal, spec := TOOLS[t.name])
        and selection.shows(spec.toolset, spec.read_only)
    ]
    for tool in tools:
        tool.output_schema = schemas.get(tool.name)
    result.tools = sorted(tools, key=lambda t: t.name)
    return result


class _PermittedToolsMiddleware:
    """`permitted_listing` through the SDK's public request middleware, for an SDK whose
    handler table we cannot reach."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/list" and result is not None:
            return permitted_listing(ctx, result)
        return result


def build_server() -> MCPServer:
    """A fresh MCP server with every registered tool."""
    register_api_tools()
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
            # 2026-07-28 clients may reuse a tools/list for a while: it changes only with the
            # token (its scopes; hence private) or a new release.
            cache_hints={"tools/list": CacheHint(ttl_ms=TOOLS_LIST_TTL_MS, scope="private")},
        )
    finally:
        if placeholder is not None:
            root.removeHandler(placeholder)
    # No prompts or resources: do not advertise them (capabilities follow the handlers).
    lowlevel = lowlevel_server(server)
    if lowlevel is None:
        # The plain path: the SDK's public middleware filters the listing.
        server.middleware.append(_PermittedToolsMiddleware())
        return server
    drop_handlers(lowlevel, ("prompts/", "resources/"))
    listing = lowlevel.get_request_handler("tools/list")
    assert listing is not None

    async def list_permitted_tools(
        ctx: ServerRequestContext[Any, Any], params: Any
    ) -> ListToolsResult:
        return permitted_listing(ctx, await listing.handler(ctx, params))

    lowlevel.add_request_handler("tools/list", listing.params_type, list_permitted_tools)
    return server


# --- HTTP: authentication and sessions in front of the SDK's stateless transport -------------

SESSION_NOT_FOUND = {
    "jsonrpc": "2.0",
    "id": "server-error",
    "error": {"code": -32600, "message": "Session not found"},
}


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _is_initialize(body: bytes) -> bool:
    try:
        payload = json.loads(body)
    except ValueError:
        return False
    messages = payload if isinstance(payload, list) else [payload]
    return any(isinstance(m, dict) and m.get("method") == "initialize" for m in messages)


SESSION_MAX_AGE = TOKEN_TTL
"""A session id is refused past this age (the client initializes a new session, as on any 404),
so that the mark of an ended session need not be kept longer than this."""


class McpSessions:
    """Session ids that any process can check and none has to keep: `<nonce>.<issued>.<mac>`,
    the mac an HMAC (the deployment's signing key, shared by every process like the cursor key)
    of the nonce, the Unix second it was issued and the token id that initialized the session.
    Another token presenting the id fails the check; what the session remembers lives in the
    shared store (OrganizationMemory), and so does the mark of a session ended by DELETE
    (`end`, `ended`), so that every process refuses its id afterwards (contract §12)."""

    def __init__(self, key: bytes, store: RateLimitStore) -> None:
        self.key = key
        self.store = store

    def _mac(self, nonce: str, issued: str, principal: Principal) -> str:
        message = f"mcp-session\n{nonce}\n{issued}\n{principal.token_id}".encode()
        return hmac.new(self.key, message, hashlib.sha256).hexdigest()[:32]

    def open(self, principal: Principal) -> str:
        nonce = secrets.token_hex(16)
        issued = str(int(time.time()))
        return f"{nonce}.{issued}.{self._mac(nonce, issued, principal)}"

    @staticmethod
    def _parts(session_id: str) -> tuple[str, int] | None:
        """(nonce, issued) of a well-formed id, else None."""
        nonce, _, rest = session_id.partition(".")
        issued, _, mac = rest.partition(".")
        if not nonce or not mac or not issued.isascii() or not issued.isdigit():
            return None
        return nonce, int(issued)

    def owned(self, session_id: str, principal: Principal) -> bool:
        """Issued by this deployment to this token, and not older than SESSION_MAX_AGE."""
        parts = self._parts(session_id)
        if parts is None:
            return False
        nonce, issued = parts
        if not 0 <= time.time() - issued < SESSION_MAX_AGE:
            return False
        mac = session_id.rsplit(".", 1)[1]
        return hmac.compare_digest(mac.encode(), self._mac(nonce, str(issued), principal).encode())

    @staticmethod
    def _ended_key(session_id: str) -> str:
        return f"mcp:ended:{session_id.partition('.')[0]}"

    async def ended(self, session_id: str) -> bool:
        return bool(await self.store.kv_get(self._ended_key(session_id)))

    async def end(self, session_id: str) -> None:
        """Mark the session ended for as long as its id could otherwise be accepted. Raises
        StoreUnavailable when the mark could not be stored."""
        parts = self._parts(session_id)
        issued = parts[1] if parts is not None else int(time.time())
        ttl = max(1, int(issued + SESSION_MAX_AGE - time.time()) + 1)
        await self.store.kv_set(self._ended_key(session_id), "1", ttl)


class McpEndpoint:
    """`/mcp`: 401 (ErrorEnvelope + WWW-Authenticate) without a valid token, else the SDK's
    streamable HTTP transport (stateless). The principal rides in the ASGI scope
    (`scope["state"]` hands it to the tools). Sessions: `initialize` (without a session id) gets
    a new `Mcp-Session-Id` bound to the token (McpSessions); a request presenting an id not
    bound to this token gets 404 "Session not found" (as the SDK answers an unknown one);
    DELETE ends the session. Clients on a session-less revision send no id at all."""

    def __init__(self, manager: StreamableHTTPSessionManager, settings: Settings) -> None:
        self.manager = manager
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        app = scope["app"]
        try:
            async with UnitOfWork(app.state.database) as uow:  # commits the key's last use
                principal = await authenticate(request, await uow.session(), audience="mcp")
        except AppError as exc:
            headers = dict(exc.headers)
            if exc.status == 401:
                # Keep the error's own parameters (error="invalid_token", …) after the metadata.
                params = headers.get("WWW-Authenticate", "Bearer").removeprefix("Bearer").strip()
                # The read scopes: what a client without a scope of its own asks for
                # (contract §15), rather than every scope the metadata lists.
                headers["WWW-Authenticate"] = (
                    f'Bearer resource_metadata="{resource_metadata_url(self.settings)}"'
                    + f', scope="{" ".join(READ_SCOPES)}"'
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
        try:
            selection = parse_selection(request.query_params, request.headers)
        except AppError as exc:
            await error_response(exc.status, exc.code, exc.message, exc.details)(
                scope, receive, send
            )
            return
        scope["user"] = AuthenticatedUser(token)
        scope["auth"] = AuthCredentials(sorted(principal.scopes))
        state = scope.setdefault("state", {})
        state[PRINCIPAL_KEY] = principal
        state[SELECTION_KEY] = selection

        store = app.state.rate_limiter.store
        sessions = McpSessions(self.settings.signing_key, store)
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is not None:
            if not sessions.owned(session_id, principal) or await sessions.ended(session_id):
                await JSONResponse(SESSION_NOT_FOUND, status_code=404)(scope, receive, send)
                return
            if scope["method"] == "DELETE":
                # The session ends: its id is refused afterwards on every process (the mark
                # is in the shared store), and what it remembered is forgotten.
                try:
                    await sessions.end(session_id)
                except StoreUnavailable:
                    response = error_response(
                        503,
                        "service_unavailable",
                        "The session could not be ended; retry later.",
                        {},
                        {"Retry-After": "1"},
                    )
                    await response(scope, receive, send)
                    return
                with contextlib.suppress(StoreUnavailable):
                    await OrganizationMemory(store, principal, session_id).clear()
                await Response(status_code=200)(scope, receive, send)
                return
            await self.manager.handle_request(scope, receive, send)
            return
        if scope["method"] != "POST":
            await self.manager.handle_request(scope, receive, send)
            return
        body = await _read_body(receive)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        if not _is_initialize(body):
            await self.manager.handle_request(scope, replay, send)
            return
        new_id = sessions.open(principal)

        async def send_with_session(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                headers = list(message.get("headers", []))
                headers.append((SESSION_HEADER.encode(), new_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.manager.handle_request(scope, replay, send_with_session)


def mcp_routes(app: FastAPI) -> dict[str, APIRoute]:
    """operationId → the mounted route that a derived tool runs (the first mount: organizations
    is mounted under /organizations and /subscribers)."""
    routes: dict[str, APIRoute] = {}
    for route in app.router.routes:
        if isinstance(route, APIRoute) and route.operation_id in TOOLS:
            routes.setdefault(route.operation_id, route)
    return routes


def install_mcp(app: FastAPI, settings: Settings) -> None:
    """Mount `/mcp` as an exact route (a Mount would answer 307 before auth) and run the SDK's
    session manager inside the app's lifespan. One fresh server per app. Call it after the API
    routes are mounted (derived tools run them)."""
    server = build_server()
    # The SDK's own transport app is not used (McpEndpoint is the route); building it makes
    # the session manager, over the server's low-level server.
    server.streamable_http_app(
        stateless_http=True,  # nothing per process: sessions live in the shared store
        transport_security=transport_security(settings),
    )
    manager = server.session_manager
    app.state.mcp_routes = mcp_routes(app)
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
