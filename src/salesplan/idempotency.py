"""`Idempotency-Key` for Engage sends (contract §6), held in the database so that it works
across processes and machines.

1. `claim` records the key as in flight in its own short transaction (the unique constraint on
   (organization, token, operation, key) lets exactly one concurrent request win), or answers
   what an earlier use decides: a replay, 409 `payload_mismatch` or 409 `in_flight`.
2. The operation runs in the request's transaction; `finish` writes its status and body into the
   record in that same transaction, so the outbox rows and the stored result commit together.
3. A 4xx is stored (in its own transaction, the request's being rolled back) and replayed; a 5xx,
   or a 429 that says "try later", releases the key.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
from fastapi import Request
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.responses import JSONResponse

from salesplan.auth.principal import RequestContext
from salesplan.errors import AppError, Conflict, ValidationFailed
from salesplan.kit.clock import utcnow
from salesplan.models.engage_delivery import IdempotencyRecord

EXPIRY = timedelta(hours=24)
# An in-flight record older than this belongs to a request that died (process killed between
# claim and commit); a new request may take it over.
STALE_AFTER = timedelta(minutes=2)
REPLAYED_HEADER = "Idempotency-Replayed"


def check_key(key: str | None) -> str:
    """1..255 printable ASCII characters; missing or anything else is a 400."""
    if key is None or key == "":
        raise ValidationFailed.at(["header", "Idempotency-Key"], "Idempotency-Key is required.")
    if len(key) > 255 or not all(32 <= ord(c) < 127 for c in key):
        raise ValidationFailed.at(
            ["header", "Idempotency-Key"],
            "Idempotency-Key must be 1 to 255 printable ASCII characters.",
        )
    return key


def fingerprint(body: Any, path_params: dict[str, Any] | None = None) -> str:
    """SHA-256 of the canonical JSON of the body and the path parameters."""
    canonical = orjson.dumps({"body": body, "path": path_params or {}}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


@dataclass(frozen=True, slots=True)
class Replay:
    status: int
    body: dict[str, Any]


async def claim(
    maker: async_sessionmaker[AsyncSession],
    ctx: RequestContext,
    operation: str,
    key: str,
    print_: str,
) -> uuid.UUID | Replay:
    """Record the key as in flight and return the record's id, or what the earlier use says."""
    scope = (
        IdempotencyRecord.organization_id == ctx.organization_id,
        IdempotencyRecord.token_id == ctx.principal.token_id,
        IdempotencyRecord.operation == operation,
        IdempotencyRecord.key == key,
    )
    for _ in range(3):
        now = utcnow()
        async with maker() as session:
            record = IdempotencyRecord(
                organization_id=ctx.organization_id,
                token_id=ctx.principal.token_id,
                operation=operation,
                key=key,
                fingerprint=print_,
                state="in_flight",
                locked_at=now,
                created_at=now,
                expires_at=now + EXPIRY,
            )
            session.add(record)
            try:
                await session.commit()
                return record.id
            except IntegrityError:
                await session.rollback()
            existing = (
                await session.execute(select(IdempotencyRecord).where(*scope))
            ).scalar_one_or_none()
            if existing is None:
                continue  # released or pruned in between: try again
            if existing.expires_at <= now:
                await _delete_if(session, existing.id, existing.locked_at)
                continue
            if existing.fingerprint != print_:
                raise Conflict(
                    "This Idempotency-Key was used with a different request body.",
                    details={"reason": "payload_mismatch"},
                )
            if existing.state == "done" and existing.status_code is not None:
                return Replay(existing.status_code, existing.response_body or {})
            if now - existing.locked_at > STALE_AFTER:
                await _delete_if(session, existing.id, existing.locked_at)
                continue
            raise Conflict(
                "A request with this Idempotency-Key is still being processed.",
                details={"reason": "in_flight"},
            )
    raise Conflict(
        "A request with this Idempotency-Key is still being processed.",
        details={"reason": "in_flight"},
    )


async def _delete_if(session: AsyncSession, record_id: uuid.UUID, locked_at: datetime) -> None:
    """Remove an expired or abandoned record, unless someone else already took it over."""
    await session.execute(
        delete(IdempotencyRecord).where(
            IdempotencyRecord.id == record_id, IdempotencyRecord.locked_at == locked_at
        )
    )
    await session.commit()


async def finish(
    session: AsyncSession, record_id: uuid.UUID, status: int, body: dict[str, Any]
) -> None:
    """Store the result in the given session's transaction."""
    await session.execute(
        update(IdempotencyRecord)
        .where(IdempotencyRecord.id == record_id)
        .values(state="done", status_code=status, response_body=body)
    )


async def release(maker: async_sessionmaker[AsyncSession], record_id: uuid.UUID) -> None:
    async with maker() as session:
        await session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.id == record_id))
        await session.commit()


async def prune_expired(session: AsyncSession) -> int:
    """Delete records past their 24 hours (the worker calls this)."""
    result = await session.execute(
        delete(IdempotencyRecord).where(IdempotencyRecord.expires_at <= utcnow())
    )
    return int(getattr(result, "rowcount", 0) or 0)


def _releases(exc: AppError) -> bool:
    # A 5xx releases the key (contract §6); so does a 429, whose whole point is "retry later".
    return exc.status >= 500 or exc.status == 429


async def run_idempotent(
    request: Request,
    session: AsyncSession,
    ctx: RequestContext,
    *,
    operation: str,
    key: str | None,
    path_params: dict[str, Any] | None,
    execute: Callable[[], Awaitable[tuple[int, dict[str, Any]]]],
) -> JSONResponse:
    """Run `execute` at most once per key; see the module docstring."""
    key = check_key(key)
    try:
        body = orjson.loads(await request.body() or b"null")
    except orjson.JSONDecodeError as exc:  # pragma: no cover - FastAPI rejected it already
        raise ValidationFailed("Malformed JSON.") from exc
    print_ = fingerprint(body, path_params)
    # Authentication may have written (an API key's last use); commit it now, so that this
    # session holds no write lock while `claim` writes on its own connection (SQLite).
    if session.in_transaction():
        await session.commit()
    maker: async_sessionmaker[AsyncSession] = request.app.state.sessionmaker
    claimed = await claim(maker, ctx, operation, key, print_)
    if isinstance(claimed, Replay):
        return JSONResponse(claimed.body, claimed.status, headers={REPLAYED_HEADER: "true"})
    try:
        status, payload = await execute()
        await finish(session, claimed, status, payload)
        await session.commit()
    except AppError as exc:
        await session.rollback()
        if _releases(exc):
            await release(maker, claimed)
        else:
            async with maker() as own:
                await finish(own, claimed, exc.status, exc.envelope())
                await own.commit()
        raise
    except BaseException:
        await session.rollback()
        await release(maker, claimed)
        raise
    return JSONResponse(payload, status)
