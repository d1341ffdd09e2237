"""OAuth access tokens: opaque `sp_at_…`, stored as SHA-256, one hour, and the resolver that turns
one into a Principal. A token bound to `resource={mcp_url}` is accepted only at /mcp; a token
without a resource only at /api/v1 (contract §8)."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import Principal
from salesplan.auth.repository import user_organizations
from salesplan.auth.tokens import (
    Resolved,
    hashes_match,
    principal_cache,
    register_token_kind,
    token_hash,
)
from salesplan.errors import Unauthorized
from salesplan.kit.clock import utcnow
from salesplan.models.oauth import OAuthToken
from salesplan.oauth import repository

ACCESS_TOKEN_PREFIX = "sp_at_"
ACCESS_TOKEN_SECONDS = 3600


async def issue_access_token(
    session: AsyncSession,
    *,
    app_id: uuid.UUID,
    scopes: Sequence[str],
    organization_ids: Sequence[uuid.UUID | str],
    user_id: uuid.UUID | None = None,
    code_id: uuid.UUID | None = None,
    resource: str | None = None,
) -> tuple[OAuthToken, str]:
    raw = ACCESS_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = OAuthToken(
        token_hash=token_hash(raw),
        app_id=app_id,
        user_id=user_id,
        code_id=code_id,
        scopes=list(scopes),
        organization_ids=[str(o) for o in organization_ids],
        resource=resource,
        expires_at=utcnow() + timedelta(seconds=ACCESS_TOKEN_SECONDS),
    )
    session.add(token)
    await session.flush()
    return token, raw


async def revoke_tokens_of_code(session: AsyncSession, code_id: uuid.UUID) -> None:
    for token_id in await repository.revoke_tokens_of_code(session, code_id):
        principal_cache.invalidate(token_id)


def audience_accepts(resource: str | None, audience: str) -> bool:
    """Resource-bound tokens (RFC 8707) work only at their resource: `mcp` for the MCP URL."""
    if resource is None:
        return audience == "api"
    return audience == "mcp"


def wrong_resource(resource: str | None) -> Unauthorized:
    """401 that says which resource the token belongs to (RFC 6750 `invalid_token`)."""
    if resource is None:
        message = (
            "The bearer token was issued for the REST API (/api/v1), not for the MCP server "
            "(/mcp): request a token with the resource parameter set to the MCP URL."
        )
    else:
        message = (
            f"The bearer token was issued for {resource}, not for the REST API (/api/v1): "
            "request a token without the resource parameter for the REST API."
        )
    quoted = message.replace("\\", "").replace('"', "")  # a quoted-string (RFC 7230)
    challenge = f'Bearer error="invalid_token", error_description="{quoted}"'
    return Unauthorized(message, headers={"WWW-Authenticate": challenge})


async def resolve_oauth_token(session: AsyncSession, raw: str, audience: str) -> Resolved | None:
    digest = token_hash(raw)
    row = await repository.token_with_app_reach(session, digest)
    if row is None:
        return None
    token, app_orgs = row
    if not hashes_match(token.token_hash, digest):
        return None
    if token.revoked_at is not None or token.expires_at <= utcnow():
        return None
    if not audience_accepts(token.resource, audience):
        raise wrong_resource(token.resource)
    reach = {uuid.UUID(str(o)) for o in token.organization_ids}
    if app_orgs is not None:
        # Narrowing an app's organizations in developer settings applies to live tokens too.
        reach &= {uuid.UUID(str(o)) for o in app_orgs}
    roles: dict[uuid.UUID, str] = {}
    if token.user_id is not None:
        # A user-backed token reaches only organizations the user still belongs to.
        member_of = await user_organizations(session, token.user_id)
        roles = {org: role for org, role in member_of.items() if org in reach}
        reach = set(roles)
    principal = Principal.of_token(
        token, "oauth", reach, roles, app_id=token.app_id, resource=token.resource
    )
    return principal, token.expires_at


register_token_kind(ACCESS_TOKEN_PREFIX, resolve_oauth_token)
