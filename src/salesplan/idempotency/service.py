"""`Idempotency-Key` for Engage sends (contract §6), held in the database so that it works
across processes and machines.

One transaction per request, the request's own unit of work, which this wraps (it commits
nothing itself):
1. `_look` reads the key's record (`repository.locked_record`; on PostgreSQL it takes a
   transaction-level advisory lock on the key in the same statement): a finished record is
   replayed, another body is 409 `payload_mismatch`, a record in flight or a lock held by
   another request is 409 `in_flight`.
2. The operation runs, and its status and body are inserted as the key's record in the same
   transaction, so the outbox rows and the stored result commit together (or neither does).
   The unique constraint on (organization, token, operation, key) is what makes concurrent
   requests meet on SQLite, and the last word anywhere: the loser rolls back and looks again.
3. A 4xx is stored (in a unit of work of its own, the request's being rolled back) and
   replayed; a 5xx, or a 429 that says "try later", stores nothing, so the key is free again.

(It was three transactions: the authentication's, the in-flight record's, the operation's.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

import orjson
from fastapi import Request
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import JSONResponse

from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import unit_of_work
from salesplan.errors import AppError, Conflict, ValidationFailed
from salesplan.idempotency import repository
from salesplan.kit.clock import utcnow
from salesplan.kit.uow import UnitOfWork
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


def fingerprint(body: object, path_params: Mapping[str, object] | None = None) -> str:
    """SHA-256 of the canonical JSON of the body and the path parameters."""
    canonical = orjson.dumps({"body": body, "path": path_params or {}}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


@dataclass(frozen=True, slots=True)
class Replay:
    status: int
    body: dict[str, object]


IN_FLIGHT = "A request with this Idempotency-Key is still being processed."


async def _look(
    session: AsyncSession, ctx: RequestContext, operation: str, key: str, print_: str
) -> Replay | None:
    """What an earlier use of the key decides (a replay, or a 409), or None: go ahead. On
    PostgreSQL the key's advisory lock is taken in the same statement and held to the end of
    the request's transaction."""
    now = utcnow()
    locked, existing = await repository.locked_record(session, ctx, operation, key)
    if not locked:
        raise Conflict(IN_FLIGHT, details={"reason": "in_flight"})
    if existing is None:
        return None
    if existing.expires_at <= now:
        await repository.delete_if(session, existing.id, existing.locked_at)
        return None
    if existing.fingerprint != print_:
        raise Conflict(
            "This Idempotency-Key was used with a different request body.",
            details={"reason": "payload_mismatch"},
        )
    if existing.state == "done" and existing.status_code is not None:
        return Replay(existing.status_code, existing.response_body or {})
    if now - existing.locked_at > STALE_AFTER:  # an in-flight record of a request that died
        await repository.delete_if(session, existing.id, existing.locked_at)
        return None
    raise Conflict(IN_FLIGHT, details={"reason": "in_flight"})


def _record(
    ctx: RequestContext, operation: str, key: str, print_: str, status: int, body: dict[str, object]
) -> IdempotencyRecord:
    now = utcnow()
    return IdempotencyRecord(
        organization_id=ctx.organization_id,
        token_id=ctx.principal.token_id,
        operation=operation,
        key=key,
        fingerprint=print_,
        state="done",
        status_code=status,
        response_body=body,
        locked_at=now,
        created_at=now,
        expires_at=now + EXPIRY,
    )


async def prune_expired(session: AsyncSession) -> int:
    """Delete records past their 24 hours (the worker calls this)."""
    return await repository.delete_expired(session, utcnow())


def _releases(exc: AppError) -> bool:
    # A 5xx releases the key (contract §6); so does a 429, whose whole point is "retry later".
    return exc.status >= 500 or exc.status == 429


async def run_idempotent(
    request: Request,
    ctx: RequestContext,
    *,
    operation: str,
    key: str | None,
    path_params: Mapping[str, object] | None,
    execute: Callable[[AsyncSession], Awaitable[tuple[int, dict[str, object]]]],
) -> JSONResponse:
    """Run `execute` (given the session of the request's unit of work) at most once per key;
    see the module docstring. This wraps the unit of work and commits nothing itself: the
    unit of work commits the operation's writes with the key's record, or rolls both back."""
    key = check_key(key)
    try:
        body = orjson.loads(await request.body() or b"null")
    except orjson.JSONDecodeError as exc:  # pragma: no cover - FastAPI rejected it already
        raise ValidationFailed("Malformed JSON.") from exc
    print_ = fingerprint(body, path_params)
    for _ in range(3):
        committing = False
        uow = unit_of_work(request)
        try:
            async with uow:
                session = await uow.session()
                replay = await _look(session, ctx, operation, key, print_)
                if replay is not None:
                    headers = {REPLAYED_HEADER: "true"}
                    return JSONResponse(replay.body, replay.status, headers=headers)
                status, payload = await execute(session)
                await session.flush()  # the operation's own errors surface here, not below
                session.add(_record(ctx, operation, key, print_, status, payload))
                committing = True
        except IntegrityError:
            if not committing:
                raise
            # Another request with this key committed first (SQLite, or a lock-free race):
            # this one's work was rolled back, and the key's record answers it.
            continue
        except AppError as exc:
            own = isinstance(exc, Conflict) and exc.details.get("reason") in _OWN_CONFLICTS
            if not own and not _releases(exc):
                await _store_error(uow, ctx, operation, key, print_, exc)
            raise
        return JSONResponse(payload, status)
    raise Conflict(IN_FLIGHT, details={"reason": "in_flight"})


# The key's own answers (not the operation's): never stored as its result.
_OWN_CONFLICTS = frozenset({"in_flight", "payload_mismatch"})


async def _store_error(
    uow: UnitOfWork,
    ctx: RequestContext,
    operation: str,
    key: str,
    print_: str,
    exc: AppError,
) -> None:
    """A 4xx answer is the key's result: stored (in a unit of work of its own, the request's
    being rolled back) and replayed."""
    try:
        async with uow.separate() as own:
            (await own.session()).add(
                _record(ctx, operation, key, print_, exc.status, exc.envelope())
            )
    except IntegrityError:  # a concurrent request with the key stored its answer first
        pass
