"""Auth's statements that no service module makes itself: API keys by id and for listing, and
signing a user's browsers out."""

from __future__ import annotations

import uuid

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.models.identity import ApiKey
from salesplan.models.oauth import WebSession


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
