"""Auth declared as a dependency. `require("plans:read", group="plans")` does, in the contract's
order: authenticate (401) → spend a rate-limit unit (429) → scope (403) → organization (400/403).
The same object tells the OpenAPI document the operation's scope and rate-limit group."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.organization import (
    named_organization,
    requested_organization,
    resolve_organization,
)
from salesplan.auth.principal import Principal, PrincipalContext, RequestContext
from salesplan.auth.tokens import bearer_token, resolve_token
from salesplan.db import get_session
from salesplan.errors import Forbidden, RateLimited
from salesplan.ratelimit.limiter import RateLimiter
from salesplan.ratelimit.policy import GROUPS, is_write


def request_id_of(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", ""))


async def authenticate(request: Request, session: AsyncSession, audience: str = "api") -> Principal:
    return await resolve_token(
        session, bearer_token(request.headers.get("authorization")), audience
    )


async def spend_rate_limit(
    request: Request,
    principal: Principal,
    group: str,
    *,
    write: bool,
    organization: str | None,
    tool_name: str | None = None,
) -> None:
    limiter: RateLimiter = request.app.state.rate_limiter
    usage = await limiter.consume(
        token_id=principal.token_id,
        organization=organization,
        group=group,
        write=write,
        tool_name=tool_name,
    )
    if usage is not None:
        request.scope.setdefault("state", {})["ratelimit_headers"] = usage.headers()


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

    async def __call__(
        self, request: Request, session: AsyncSession = Depends(get_session, scope="function")
    ) -> Any:
        principal = await authenticate(request, session)
        await spend_rate_limit(
            request,
            principal,
            self.group,
            write=is_write(request.method),
            organization=requested_organization(request),
        )
        check_scope(principal, self.scope)
        named = named_organization(request)
        if self.user_token:
            check_user_backed(principal)
        request_id = request_id_of(request)
        if not self.organization:
            # No context needed, but one that is named must still be reachable.
            if named is not None:
                resolve_organization(principal, named)
            return PrincipalContext(principal, request_id)
        org_id = resolve_organization(principal, named)
        # Read by what binds to the organization without taking the context (list cursors).
        request.scope.setdefault("state", {})["organization_id"] = str(org_id)
        return RequestContext(principal, org_id, request_id)


def require(
    scope: str | None,
    group: str,
    *,
    user_token: bool = False,
) -> Any:
    """`ctx: Annotated[RequestContext, require("plans:read", "plans")]`."""
    return Depends(Requirement(scope, group, user_token=user_token))


def require_principal(scope: str | None, group: str) -> Any:
    """For organization-level routes: `Annotated[PrincipalContext, require_principal(...)]`."""
    return Depends(Requirement(scope, group, organization=False))


def public(group: Literal["foundation"] = "foundation") -> dict[str, Any]:
    """`openapi_extra` for a public operation (no auth, no rate limit)."""
    return {"x-scopes": [], "x-rate-limit-group": group, "x-public": True}


def limit_by_ip(endpoint: str, refusal: Callable[[RateLimited], Exception] | None = None) -> Any:
    """A dependency for unauthenticated endpoints: spend one unit of the per-IP limit.
    `refusal` turns the 429 into the endpoint's own error shape (OAuth answers RFC 6749 bodies);
    without it the ErrorEnvelope is raised."""

    async def dependency(request: Request) -> None:
        limiter: RateLimiter = request.app.state.rate_limiter
        ip = request.client.host if request.client else "unknown"
        try:
            usage = await limiter.consume_ip(ip, endpoint)
        except RateLimited as exc:
            if refusal is None:
                raise
            raise refusal(exc) from None
        if usage is not None:
            request.scope.setdefault("state", {})["ratelimit_headers"] = usage.headers()

    return Depends(dependency)
