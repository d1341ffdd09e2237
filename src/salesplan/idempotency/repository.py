"""Idempotency's statements: a key's record (read with the key's advisory lock on PostgreSQL),
and removing an expired or abandoned one."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.kit.scoping import in_organization
from salesplan.models.engage_delivery import IdempotencyRecord


def _scope(ctx: RequestContext, operation: str, key: str) -> tuple[Any, ...]:
    return (
        in_organization(IdempotencyRecord, ctx),
        IdempotencyRecord.token_id == ctx.principal.token_id,
        IdempotencyRecord.operation == operation,
        IdempotencyRecord.key == key,
    )


def _lock_key(ctx: RequestContext, operation: str, key: str) -> int:
    scope = f"{ctx.organization_id}\n{ctx.principal.token_id}\n{operation}\n{key}"
    return int.from_bytes(hashlib.sha256(scope.encode()).digest()[:8], "big", signed=True)


async def locked_record(
    session: AsyncSession, ctx: RequestContext, operation: str, key: str
) -> tuple[bool, IdempotencyRecord | None]:
    """The key's record (None: none), and whether this request holds the key: on PostgreSQL
    the key's transaction-level advisory lock is taken in the same statement (False: another
    request holds it) and held to the end of the request's transaction; SQLite meets
    concurrent requests on the unique constraint instead (always True)."""
    scope = _scope(ctx, operation, key)
    if session.get_bind().dialect.name == "postgresql":
        locked = func.pg_try_advisory_xact_lock(_lock_key(ctx, operation, key)).label("locked")
        row = (
            await session.execute(
                select(locked, IdempotencyRecord)
                .select_from(select(literal(1).label("one")).subquery())
                .outerjoin(IdempotencyRecord, and_(*scope))
            )
        ).one()
        return bool(row.locked), row.IdempotencyRecord
    found = select(IdempotencyRecord).where(*scope)
    return True, (await session.execute(found)).scalar_one_or_none()


async def delete_if(session: AsyncSession, record_id: uuid.UUID, locked_at: datetime) -> None:
    """Remove an expired or abandoned record (in the request's transaction), unless someone
    else already took it over."""
    await session.execute(
        delete(IdempotencyRecord).where(
            IdempotencyRecord.id == record_id, IdempotencyRecord.locked_at == locked_at
        )
    )


async def delete_expired(session: AsyncSession, now: datetime) -> int:
    """Delete the records expired at `now`; answers how many."""
    result = await session.execute(
        delete(IdempotencyRecord).where(IdempotencyRecord.expires_at <= now)
    )
    return int(getattr(result, "rowcount", 0) or 0)
