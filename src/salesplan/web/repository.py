"""The reads the pages make that no other domain's repository answers."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.models.identity import ApiKey, Membership, Organization


async def organizations_by_name(
    session: AsyncSession, ids: Sequence[uuid.UUID]
) -> list[Organization]:
    if not ids:
        return []
    rows = await session.execute(
        select(Organization).where(Organization.id.in_(list(ids))).order_by(Organization.name)
    )
    return list(rows.scalars())


async def member_organizations(session: AsyncSession, user_id: uuid.UUID) -> list[Organization]:
    """The organizations the user is a member of, by name."""
    rows = await session.execute(
        select(Organization)
        .join(Membership, Membership.organization_id == Organization.id)
        .where(Membership.user_id == user_id)
        .order_by(Organization.name)
    )
    return list(rows.scalars())


async def member_organization_ids(session: AsyncSession, user_id: uuid.UUID) -> list[uuid.UUID]:
    rows = await session.execute(
        select(Membership.organization_id).where(Membership.user_id == user_id)
    )
    return list(rows.scalars())


async def api_keys(session: AsyncSession, user_id: uuid.UUID) -> list[ApiKey]:
    """The user's API keys, newest first."""
    rows = await session.execute(
        select(ApiKey).where(ApiKey.user_id == user_id).order_by(ApiKey.created_at.desc())
    )
    return list(rows.scalars())
