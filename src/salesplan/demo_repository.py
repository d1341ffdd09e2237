"""`salesplan demo`'s statements (`demo.py`): finding what an earlier run loaded."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.kit.scoping import TenantScope, scoped
from salesplan.models.crm import Account
from salesplan.models.identity import ApiKey, Organization, User


async def organization_by_slug(session: AsyncSession, slug: str) -> Organization | None:
    stmt = select(Organization).where(Organization.slug == slug)
    return (await session.execute(stmt)).scalar_one_or_none()


async def user_by_email(session: AsyncSession, email: str) -> User:
    """The user of `email` (the demo's: there when its organization is)."""
    return (await session.execute(select(User).where(User.email == email))).scalar_one()


async def live_key_ids(session: AsyncSession, user_id: uuid.UUID, name: str) -> list[uuid.UUID]:
    """The user's API keys named `name` that are not revoked."""
    stmt = select(ApiKey.id).where(
        ApiKey.user_id == user_id, ApiKey.name == name, ApiKey.revoked_at.is_(None)
    )
    return list((await session.execute(stmt)).scalars())


async def account_named(session: AsyncSession, ctx: TenantScope, name: str) -> Account:
    stmt = scoped(select(Account).where(Account.name == name), ctx)
    return (await session.execute(stmt)).scalar_one()
