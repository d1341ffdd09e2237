"""Organizations, their users and memberships."""

from __future__ import annotations

import re
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.passwords import hash_password
from salesplan.auth.principal import Principal, RequestContext
from salesplan.errors import Conflict, NotFound, Unprocessable, ValidationFailed
from salesplan.kit.email import is_email
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import TenantScope
from salesplan.models.identity import ROLES, Membership, Organization, User
from salesplan.organizations import repository
from salesplan.organizations.repository import MembershipRepository


async def check_owner(session: AsyncSession, ctx: TenantScope, owner_id: uuid.UUID | None) -> None:
    """`ownerId` must be a user of the organization (else a 422 naming the field)."""
    if owner_id is None:
        return
    if not await MembershipRepository(session, ctx).user_ids_among((owner_id,)):
        raise Unprocessable(
            "ownerId is not a user of the organization.",
            details={"field": "ownerId", "id": str(owner_id)},
        )


def _slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "organization"


async def create_organization(session: AsyncSession, *, name: str) -> Organization:
    name = name.strip()
    if not name:
        raise ValidationFailed.at(["name"], "The organization name is required.")
    base = _slugify(name)[:180]
    taken = await repository.slugs_like(session, base)
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    org = Organization(name=name, slug=slug)
    session.add(org)
    await session.flush()
    return org


async def add_user(
    session: AsyncSession,
    *,
    organization_id: uuid.UUID,
    email: str,
    password: str | None = None,
    role: str = "member",
    full_name: str | None = None,
    password_hash: str | None = None,
) -> User:
    """Create a user with a membership, or add a membership to an existing user.

    `password_hash` (an argon2 hash) may stand in for `password`."""
    email = email.strip().lower()
    if not is_email(email):
        raise ValidationFailed.at(["email"], "Not a valid e-mail address.")
    if role not in ROLES:
        raise ValidationFailed.at(["role"], f"role must be one of: {', '.join(ROLES)}.")
    if await session.get(Organization, organization_id) is None:
        raise NotFound("Organization not found.", details={"id": str(organization_id)})
    user = await repository.user_by_email(session, email)
    if user is None:
        if not password and not password_hash:
            raise ValidationFailed.at(["password"], "A password is required for a new user.")
        user = User(
            email=email,
            full_name=(full_name or email.split("@")[0]).strip(),
            password_hash=password_hash or hash_password(password or ""),
        )
        session.add(user)
        await session.flush()
    else:
        if await repository.role_in(session, user.id, organization_id) is not None:
            raise Conflict(
                "This user is already a member of the organization.",
                details={"email": email, "organizationId": str(organization_id)},
            )
    session.add(Membership(organization_id=organization_id, user_id=user.id, role=role))
    await session.flush()
    return user


def _reachable(principal: Principal, organization_id: uuid.UUID) -> None:
    # An organization the principal cannot reach is a 404 here (contract §11).
    if organization_id not in principal.organization_ids:
        raise NotFound("Organization not found.", details={"id": str(organization_id)})


async def list_organizations(
    session: AsyncSession, principal: Principal, params: ListParams, codec: CursorCodec
) -> tuple[list[Organization], PaginationMeta]:
    return await repository.list_organizations(session, principal.organization_ids, params, codec)


async def get_organization(
    session: AsyncSession, principal: Principal, organization_id: uuid.UUID
) -> Organization:
    _reachable(principal, organization_id)
    org = await session.get(Organization, organization_id)
    if org is None:
        raise NotFound("Organization not found.", details={"id": str(organization_id)})
    return org


async def list_organization_users(
    session: AsyncSession,
    principal: Principal,
    organization_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[dict[str, Any]], PaginationMeta]:
    await get_organization(session, principal, organization_id)
    ctx = RequestContext(principal, organization_id)
    return await MembershipRepository(session, ctx).list_users(params, codec)
