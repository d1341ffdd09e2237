"""Auth's statements: a user's memberships and API keys (not tenant-owned: a key belongs to a
user, and reaches the organizations it names), and signing a user's browsers out."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.models.identity import ApiKey, Membership
from salesplan.models.oauth import WebSession


async def user_organizations(session: AsyncSession, user_id: uuid.UUID) -> dict[uuid.UUID, str]:
    """The organizations the user is a member of, with the user's role in each."""
    rows = await session.execute(
        select(Membership.organization_id, Membership.role).where(Membership.user_id == user_id)
    )
    return {org_id: role for org_id, role in rows.all()}


# Built once: the hot path of an API key's request (when the principal cache misses).
_KEY_LOOKUP = (
    select(
        ApiKey.id,
        ApiKey.key_hash,
        ApiKey.user_id,
        ApiKey.scopes,
        ApiKey.organization_ids,
        ApiKey.expires_at,
        ApiKey.revoked_at,
        ApiKey.last_used_at,
        Membership.organization_id,
        Membership.role,
    )
    .outerjoin(Membership, Membership.user_id == ApiKey.user_id)
    .where(ApiKey.key_hash == bindparam("digest"))
)


async def api_key_with_memberships(session: AsyncSession, digest: str) -> Sequence[Row[Any]]:
    """The key of this hash, one row per membership of its user (one round trip); no rows when
    there is no such key."""
    return (await session.execute(_KEY_LOOKUP, {"digest": digest})).all()


async def touch_api_key(session: AsyncSession, key_id: uuid.UUID, now: datetime) -> None:
    """Note the key's last use."""
    await session.execute(update(ApiKey).where(ApiKey.id == key_id).values(last_used_at=now))


async def owned_api_key(
    session: AsyncSession, user_id: uuid.UUID, key_id: uuid.UUID
) -> ApiKey | None:
    """The user's key of this id (None: no such key, or another user's)."""
    stmt = select(ApiKey).where(ApiKey.id == key_id, ApiKey.user_id == user_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def api_key_by_id(session: AsyncSession, key_id: uuid.UUID) -> ApiKey | None:
    return await session.get(ApiKey, key_id)


async def all_api_keys(session: AsyncSession, user_id: uuid.UUID | None = None) -> list[ApiKey]:
    """Every API key (the user's when given), revoked ones included, oldest first."""
    stmt = select(ApiKey).order_by(ApiKey.created_at, ApiKey.id)
    if user_id is not None:
        stmt = stmt.where(ApiKey.user_id == user_id)
    return list((await session.execute(stmt)).scalars())


async def sign_out_everywhere(session: AsyncSession, user_id: uuid.UUID) -> None:
    """End every browser session of the user."""
    await session.execute(delete(WebSession).where(WebSession.user_id == user_id))
