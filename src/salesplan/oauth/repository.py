"""OAuth's statements: apps, authorization codes and access tokens (not tenant-owned: an app
belongs to a user, a code and a token to an app)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import CursorResult, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.kit.clock import utcnow
from salesplan.models.oauth import OAuthApp, OAuthCode, OAuthToken


async def owned_app(
    session: AsyncSession, user_id: uuid.UUID, app_id: uuid.UUID
) -> OAuthApp | None:
    stmt = select(OAuthApp).where(OAuthApp.id == app_id, OAuthApp.owner_user_id == user_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def owned_apps(session: AsyncSession, user_id: uuid.UUID) -> list[OAuthApp]:
    """The user's apps, oldest first."""
    stmt = select(OAuthApp).where(OAuthApp.owner_user_id == user_id).order_by(OAuthApp.created_at)
    return list((await session.execute(stmt)).scalars())


async def all_apps(session: AsyncSession, owner_user_id: uuid.UUID | None = None) -> list[OAuthApp]:
    """Every app (those the user owns when given), dynamically registered ones included, oldest
    first."""
    stmt = select(OAuthApp).order_by(OAuthApp.created_at, OAuthApp.id)
    if owner_user_id is not None:
        stmt = stmt.where(OAuthApp.owner_user_id == owner_user_id)
    return list((await session.execute(stmt)).scalars())


async def delete_app(session: AsyncSession, app: OAuthApp) -> None:
    """Delete the app; its codes and tokens go with it (foreign keys cascade)."""
    await session.delete(app)
    await session.flush()


async def app_owner(session: AsyncSession, app_id: uuid.UUID) -> uuid.UUID | None:
    """The user who registered the app (None for one registered dynamically)."""
    return await session.scalar(select(OAuthApp.owner_user_id).where(OAuthApp.id == app_id))


async def app_by_client_id(session: AsyncSession, client_id: str) -> OAuthApp | None:
    stmt = select(OAuthApp).where(OAuthApp.client_id == client_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def code_by_hash(session: AsyncSession, code_hash: str) -> OAuthCode | None:
    stmt = select(OAuthCode).where(OAuthCode.code_hash == code_hash)
    return (await session.execute(stmt)).scalar_one_or_none()


async def spend_code(session: AsyncSession, code_id: uuid.UUID) -> bool:
    """Mark the code used, atomically: False when it was used already (by a concurrent
    redemption too)."""
    spent = await session.execute(
        update(OAuthCode)
        .where(OAuthCode.id == code_id, OAuthCode.used_at.is_(None))
        .values(used_at=utcnow())
    )
    return isinstance(spent, CursorResult) and spent.rowcount == 1


async def revoke_tokens_of_code(session: AsyncSession, code_id: uuid.UUID) -> list[uuid.UUID]:
    """Revoke the live tokens the code produced; returns their ids."""
    live = OAuthToken.code_id == code_id, OAuthToken.revoked_at.is_(None)
    ids = list((await session.execute(select(OAuthToken.id).where(*live))).scalars())
    await session.execute(update(OAuthToken).where(*live).values(revoked_at=utcnow()))
    return ids


async def token_with_app_reach(session: AsyncSession, token_hash: str) -> Any:
    """(token, its app's organization_ids) by the token's hash, or None."""
    stmt = (
        select(OAuthToken, OAuthApp.organization_ids)
        .join(OAuthApp, OAuthApp.id == OAuthToken.app_id)
        .where(OAuthToken.token_hash == token_hash)
    )
    return (await session.execute(stmt)).one_or_none()
