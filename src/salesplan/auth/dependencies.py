"""Auth declared as a dependency. `require("plans:read", group="plans")` does, in the contract's
order: authenticate (401) → spend a rate-limit unit (429) → scope (403) → organization (400/403).
The same object tells the OpenAPI document the operation's scope and rate-limit group, and the
MCP tool derived from the route (salesplan.mcp.derive) its scope and group: `authorize` is the
one pipeline of both transports."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from fastapi import Depends, Request, params
from fastapi.routing import APIRoute
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from salesplan.auth.organization import (
    named_organization,
    requested_organization,
    resolve_organization,
)
from salesplan.auth.principal import Principal, PrincipalContext, RequestContext
from salesplan.auth.tokens import bearer_token, cached_principal, resolve_token
from salesplan.config import Settings
from salesplan.db_dependencies import check_available
from salesplan.errors import Forbidden, RateLimited
from salesplan.kit.uow import UnitOfWork
from salesplan.ratelimit.limiter import RateLimiter
from salesplan.ratelimit.policy import GROUPS, is_write


def request_id_of(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", ""))


async def authenticate(request: Request, session: AsyncSession, audience: str = "api") -> Principal:
    return await resolve_token(
        session, bearer_token(request.headers.get("authorization")), audience
    )


async def authenticate_request(request: Request, audience: str = "api") -> Principal:
    """The principal of the request's bearer token: from the principal cache without touching
    the database, else looked up in a session of its own, committed (the key's last-used
    stamp) before the request's own work begins: a unit of work of its own."""
    raw = bearer_token(request.headers.get("authorization"))
    cached = cached_principal(raw, audience)
    if cached is not None:
        return cached
    check_available(request)
    async with UnitOfWork(request.app.state.database) as uow:
        return await resolve_token(await uow.session(), raw, audience)


def check_scope(principal: Principal, scope: str | None) -> None:
    if scope is not None and scope not in principal.scopes:
        raise Forbidden(
            f"The token lacks the scope {scope}.",
            details={"requiredScope": scope, "reason": "insufficient_scope"},
        )


def check_user_backed(principal: Principal) -> None:
    if not principal.user_backed:
        raise Forbidden(
            "This operation needs a user-backed token (an API key or an authorization-code "
            "token), not an app token.",
            details={"reason": "user_token_required"},
        )


@dataclass(frozen=True)
class Access:
    """What a transport brings to the pipeline besides the requirement. REST reads it from the
    HTTP request (`rest_access`); MCP from the tool call (`salesplan.mcp.pipeline`).

    - `principal`: set when the transport authenticated already (MCP authenticates `/mcp`);
      None → the bearer token of `request` is resolved here.
    - `write`: the verb class of the rate-limit bucket (every MCP call is a write).
    - `bucket_organization`: the raw organization value the caller named, for the bucket.
    - `named`: parses the organization the caller named (a 400 at the transport's location).
    - `default_organization`: used when none is named (MCP: the one setActiveOrganization
      remembered); REST has none.
    - `tool_name`: added to a 429's details (MCP).
    - `organization_required`: the message of `organization_required` in the transport's words.
    """

    write: bool
    bucket_organization: str | None
    named: Callable[[], uuid.UUID | None]
    principal: Principal | None = None
    default_organization: uuid.UUID | None = None
    tool_name: str | None = None
    organization_required: str | None = None


def rest_access(request: Request) -> Access:
    return Access(
        write=is_write(request.method),
        bucket_organization=requested_organization(request),
        named=lambda: named_organization(request),
    )


# The request-state key under which a transport that ran `authorize` itself (MCP, before it
# dispatches to the route) leaves the context, so that the route's dependency does not run the
# pipeline (and spend a rate-limit unit) a second time.
AUTHORIZED = "salesplan.authorized"


class Requirement:
    """A route's auth requirement. `organization=False` for organization-level routes."""

    def __init__(
        self,
        scope: str | None,
        group: str,
        *,
        organization: bool = True,
        user_token: bool = False,
    ) -> None:
        if group not in GROUPS:
            raise ValueError(f"unknown rate-limit group {group}")
        self.scope = scope
        self.group = group
        self.organization = organization
        self.user_token = user_token

    async def __call__(self, request: Request) -> PrincipalContext | RequestContext:
        # No session of its own: a cached principal costs no database work, and a token
        # looked up goes through a short session of its own (`authenticate_request`).
        state = request.scope.setdefault("state", {})
        authorized = state.get(AUTHORIZED)
        if authorized is not None:
            return authorized
        limiter: RateLimiter = request.app.state.rate_limiter
        return await authorize(self, rest_access(request), state, limiter, request=request)


async def authorize(
    requirement: Requirement,
    access: Access,
    state: dict[str, object],
    limiter: RateLimiter,
    *,
    request: Request | None = None,
    session: AsyncSession | None = None,
) -> PrincipalContext | RequestContext:
    """THE pipeline of every operation, REST route or MCP tool, in the contract's order:
    authenticate (401) → spend a rate-limit unit (429) → scope (403) → organization named
    (400) → user-backed token (403) → organization reachable (403) or required (400).
    `state` receives the rate-limit headers and the resolved organization id."""
    principal = access.principal
    if principal is None:
        assert request is not None
        if session is None:
            principal = await authenticate_request(request)
        else:
            principal = await authenticate(request, session)
    usage = await limiter.consume(
        token_id=principal.token_id,
        organization=access.bucket_organization,
        group=requirement.group,
        write=access.write,
        tool_name=access.tool_name,
    )
    if usage is not None:
        state["ratelimit_headers"] = usage.headers()
    check_scope(principal, requirement.scope)
    named = access.named()
    if requirement.user_token:
        check_user_backed(principal)
    request_id = str(state.get("request_id", ""))
    if not requirement.organization:
        # No context needed, but one that is named must still be reachable.
        if named is not None:
            resolve_organization(principal, named)
        return PrincipalContext(principal, request_id)
    org_id = resolve_organization(
        principal,
        named or access.default_organization,
        required_message=access.organization_required,
    )
    # Read by what binds to the organization without taking the context (list cursors).
    state["organization_id"] = str(org_id)
    return RequestContext(principal, org_id, request_id)


def require(
    scope: str | None,
    group: str,
    *,
    user_token: bool = False,
) -> params.Depends:
    """`ctx: Annotated[RequestContext, require("plans:read", "plans")]`."""
    return Depends(Requirement(scope, group, user_token=user_token))


def require_principal(scope: str | None, group: str) -> params.Depends:
    """For organization-level routes: `Annotated[PrincipalContext, require_principal(...)]`."""
    return Depends(Requirement(scope, group, organization=False))


def public(group: Literal["foundation"] = "foundation") -> dict[str, object]:
    """`openapi_extra` for a public operation (no auth, no rate limit)."""
    return {"x-scopes": [], "x-rate-limit-group": group, "x-public": True}


def limit_by_ip(
    endpoint: str,
    refusal: Callable[[RateLimited], Exception] | None = None,
    *,
    per_minute: Callable[[Settings], int] | None = None,
) -> params.Depends:
    """A dependency for unauthenticated endpoints: spend one unit of the per-IP limit.
    `refusal` turns the 429 into the endpoint's own error shape (OAuth answers RFC 6749 bodies);
    without it the ErrorEnvelope is raised. `per_minute(settings)` is the endpoint's own limit
    (default: `ip_rate_limit_per_minute`)."""

    async def dependency(request: Request) -> None:
        limiter: RateLimiter = request.app.state.rate_limiter
        ip = request.client.host if request.client else "unknown"
        limit = per_minute(request.app.state.settings) if per_minute is not None else None
        try:
            usage = await limiter.consume_ip(ip, endpoint, limit)
        except RateLimited as exc:
            if refusal is None:
                raise
            raise refusal(exc) from None
        if usage is not None:
            request.scope.setdefault("state", {})["ratelimit_headers"] = usage.headers()

    return Depends(dependency)


class AuthorizedBeforeBody:
    """A route's ASGI app behind its requirement: the pipeline (authenticate → rate limit →
    scope → organization) runs before FastAPI reads and parses the body (contract §12,
    "requests before bodies"). FastAPI decodes a JSON body before it solves dependencies, so
    that without this a malformed body is a 400 for anybody, token or not, and costs no
    rate-limit unit. The context is left in the request state (`AUTHORIZED`), where the
    route's own dependency finds it instead of running the pipeline again; a transport that
    authorized already (MCP) is not authorized twice."""

    def __init__(self, app: ASGIApp, requirement: Requirement) -> None:
        self.app = app
        self.requirement = requirement

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = scope.setdefault("state", {})
        if AUTHORIZED not in state:
            state[AUTHORIZED] = await self.requirement(Request(scope, receive))
        await self.app(scope, receive, send)


def authorize_before_bodies(
    routes: Iterable[BaseRoute], requirement_of: Callable[[APIRoute], Requirement | None]
) -> int:
    """Put every route that reads a body behind its requirement (`AuthorizedBeforeBody`);
    answers how many. `requirement_of(route)` finds a route's Requirement (or None)."""
    count = 0
    for route in routes:
        if not isinstance(route, APIRoute) or route.body_field is None:
            continue
        if isinstance(route.app, AuthorizedBeforeBody):
            continue
        requirement = requirement_of(route)
        if requirement is None:
            continue
        route.app = AuthorizedBeforeBody(route.app, requirement)
        count += 1
    return count
