"""The one "admins only" rule (contract §13, §14): an admin of the organization is a
user-backed token's user whose role there is `admin`, or an app token whose app's owner is one
(an app registered dynamically, or by a Client ID Metadata Document, has no owner: never)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import Forbidden
from salesplan.oauth.repository import app_owner
from salesplan.organizations.repository import role_in


async def is_admin(session: AsyncSession, ctx: RequestContext) -> bool:
    principal = ctx.principal
    if principal.user_backed:
        return ctx.role == "admin"
    if principal.app_id is None:
        return False
    owner = await app_owner(session, principal.app_id)
    return owner is not None and await role_in(session, owner, ctx.organization_id) == "admin"


async def require_admin(session: AsyncSession, ctx: RequestContext, message: str) -> None:
    """403 `details.reason: "admin_required"` (with `message`) unless the caller is an admin."""
    if not await is_admin(session, ctx):
        raise Forbidden(message, details={"reason": "admin_required"})
