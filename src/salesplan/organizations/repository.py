"""Organizations' statements: organizations, users, and the memberships that join them."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.kit.pagination import CursorCodec, ListParams, paginate
from salesplan.kit.repository import Repository, page_of, sorts
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import OrgScope, in_organization, scoped
from salesplan.kit.search import contains_ci
from salesplan.models.identity import Membership, Organization, User

USER_SORT = {"createdAt": Membership.created_at, "email": User.email, "fullName": User.full_name}


async def slugs_like(session: AsyncSession, base: str) -> set[str]:
    """The organization slugs that are `base` or `base-…`."""
    stmt = select(Organization.slug).where(
        (Organization.slug == base) | Organization.slug.like(f"{base}-%")
    )
    return set((await session.execute(stmt)).scalars())


async def user_by_email(session: AsyncSession, email: str) -> User | None:
    return (await session.execute(select(User).where(User.email == email))).scalar_one_or_none()


async def user_by_id(session: AsyncSession, user_id: uuid.UUID) -> User | None:
    return await session.get(User, user_id)


async def users_with_roles(
    session: AsyncSession, organization_id: uuid.UUID | None = None
) -> list[tuple[User, uuid.UUID | None, str | None]]:
    """Every user (those of one organization when given) with each organization and role, one
    row per membership (a user without any: once, with None), by e-mail then organization."""
    stmt = (
        select(User, Membership.organization_id, Membership.role)
        .outerjoin(Membership, Membership.user_id == User.id)
        .order_by(User.email, Membership.organization_id)
    )
    if organization_id is not None:
        stmt = stmt.where(in_organization(Membership, OrgScope(organization_id)))
    return [(user, org_id, role) for user, org_id, role in (await session.execute(stmt)).all()]


async def role_in(
    session: AsyncSession, user_id: uuid.UUID, organization_id: uuid.UUID
) -> str | None:
    """The user's role in the organization, or None when not a member."""
    stmt = select(Membership.role).where(
        Membership.user_id == user_id, Membership.organization_id == organization_id
    )
    role: str | None = await session.scalar(stmt)
    return role


async def list_organizations(
    session: AsyncSession, ids: Iterable[uuid.UUID], params: ListParams, codec: CursorCodec
) -> tuple[list[Organization], PaginationMeta]:
    """One page of the organizations among `ids`."""
    stmt = select(Organization).where(Organization.id.in_(list(ids)))
    sort = sorts(Organization, name=Organization.name)
    return await page_of(session, stmt, Organization, params, codec, sort, (Organization.name,))


class MembershipRepository(Repository[Membership]):
    model = Membership

    async def user_ids_among(self, user_ids: Iterable[uuid.UUID]) -> set[uuid.UUID]:
        """The ones among `user_ids` that are users of the organization (one query)."""
        wanted = set(user_ids)
        if not wanted:
            return set()
        stmt = scoped(select(Membership.user_id).where(Membership.user_id.in_(wanted)), self.ctx)
        return set((await self.session.execute(stmt)).scalars())

    async def list_users(
        self, params: ListParams, codec: CursorCodec
    ) -> tuple[list[dict[str, Any]], PaginationMeta]:
        """One page of the organization's users with their roles."""
        stmt = scoped(
            select(User.id, User.email, User.full_name, Membership.role).join(
                Membership, Membership.user_id == User.id
            ),
            self.ctx,
            Membership,
        )
        if params.search:
            stmt = stmt.where(
                contains_ci(User.full_name, params.search) | contains_ci(User.email, params.search)
            )
        rows, meta = await paginate(
            self.session,
            stmt,
            params,
            sort_columns=USER_SORT,
            id_column=User.id,
            codec=codec,
        )
        return [
            {"id": r.id, "email": r.email, "full_name": r.full_name, "role": r.role} for r in rows
        ], meta
