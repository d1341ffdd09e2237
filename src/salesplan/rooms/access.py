"""How a buyer gets into a room (contract §16 "Buyer sign-in"): the link's token, the e-mailed
code, the room session.

- A link token is 32 random bytes (URL-safe base64), stored only as its SHA-256.
- A code is 6 random digits, valid 10 minutes and 5 tries, at most 5 an hour per share; stored
  as an HMAC under the server's key (a bare hash of 10^6 values is no secret), compared in
  constant time. A try is counted before the comparison, in the statement that reads the code.
- A room session is a random cookie bound to one share, stored as its SHA-256, 30 days. Every
  request reads it with its share: revoking the share ends it at once, on every process.

A GET never sends, spends or counts anything: only the POSTs of the pages do (`web/buyer_rooms.py`)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.tokens import token_hash
from salesplan.kit.clock import utcnow
from salesplan.kit.scoping import OrgScope, get_scoped
from salesplan.models.rooms import PlanShare, PlanShareCode, PlanShareSession
from salesplan.rooms import repository as repo

TOKEN_BYTES = 32
CODE_TTL = timedelta(minutes=10)
CODE_TRIES = 5
CODES_PER_HOUR = 5
SESSION_TTL = timedelta(days=30)
COOKIE_PREFIX = "sp_room_"

Status = Literal["active", "revoked", "expired"]


def share_status(share: PlanShare | DoorShare, now: datetime | None = None) -> Status:
    if share.revoked_at is not None:
        return "revoked"
    if share.expires_at is not None and share.expires_at <= (now or utcnow()):
        return "expired"
    return "active"


def new_token() -> tuple[str, str]:
    """A link token and its hash."""
    raw = secrets.token_urlsafe(TOKEN_BYTES)
    return raw, token_hash(raw)


def room_url(public_url: str, token: str) -> str:
    return f"{public_url}/rooms/{token}"


@dataclass(frozen=True)
class Entry:
    """What a link token opens: its share, the plan's name and the status of both."""

    share: PlanShare
    plan_name: str
    organization_name: str
    status: Status | Literal["plan_archived"]


@dataclass(frozen=True, slots=True)
class DoorShare:
    """The columns of a share a room GET (and the view beacon) reads."""

    id: uuid.UUID
    organization_id: uuid.UUID
    plan_id: uuid.UUID
    contact_id: uuid.UUID
    role: str
    allow_invites: bool
    revoked_at: datetime | None
    expires_at: datetime | None
    last_viewed_at: datetime | None
    view_counted_at: datetime | None


@dataclass(frozen=True, slots=True)
class Door:
    """What a link token opens, read in one statement (`door`): the share, the plan's and the
    organization's names, the status, the room session of the request's cookie (its id and
    one-time notice; None when not signed in) and the room's stamp."""

    share: DoorShare
    plan_name: str
    organization_name: str
    status: Status | Literal["plan_archived"]
    session_id: uuid.UUID | None
    flash: dict[str, object] | None
    stamp: tuple[object, ...]


# Room cookies read per request: a buyer in more rooms than this signs in again.
MAX_ROOM_COOKIES = 20


async def door(conn: AsyncConnection, token: str, cookies: Mapping[str, str]) -> Door | None:
    """The share behind a link token with the room session of the request's cookies, or None
    for a token that opens nothing; one statement whatever it finds, on a read connection.
    The session counts only under the share's own cookie name."""
    raws = [v for k, v in cookies.items() if k.startswith(COOKIE_PREFIX) and 0 < len(v) <= 100][
        :MAX_ROOM_COOKIES
    ]
    row = await repo.room_door(
        conn, token_hash(token[:200]), [token_hash(v) for v in raws], utcnow()
    )
    if row is None:
        return None
    share = DoorShare(*row[:10])
    plan_name, plan_archived_at, organization_name = row[10:13]
    session_id, session_hash, flash = row[13:16]
    own = cookies.get(cookie_name(share.id))
    if session_id is not None and (
        own is None or not hmac.compare_digest(token_hash(own), session_hash)
    ):
        session_id, flash = None, None
    status: Status | Literal["plan_archived"] = share_status(share)
    if status == "active" and plan_archived_at is not None:
        status = "plan_archived"
    return Door(
        share, plan_name, organization_name, status, session_id, flash, repo.stamp_of(row[16:])
    )


async def entry(session: AsyncSession, token: str) -> Entry | None:
    """The share behind a link token, or None for a token that opens nothing. A token of
    another shape is hashed and looked up like any other (one statement either way)."""
    found = await repo.share_by_token(session, token_hash(token[:200]))
    if found is None:
        return None
    share, plan_name, plan_archived_at, organization_name = found
    status: Status | Literal["plan_archived"] = share_status(share)
    if status == "active" and plan_archived_at is not None:
        status = "plan_archived"
    return Entry(share, plan_name, organization_name, status)


# --- codes ---------------------------------------------------------------------------------------


def code_hash(signing_key: bytes, share_id: uuid.UUID, code: str) -> str:
    message = f"room-code:{share_id}:{code}".encode()
    return hmac.new(signing_key, message, hashlib.sha256).hexdigest()


def normalized_code(value: object) -> str | None:
    """The six digits a buyer typed (spaces and dashes allowed), or None."""
    if not isinstance(value, str):
        return None
    digits = "".join(c for c in value if c not in " -\t")
    return digits if len(digits) == 6 and digits.isascii() and digits.isdigit() else None


async def issue_code(session: AsyncSession, signing_key: bytes, share: PlanShare) -> str | None:
    """A new code for the share, or None when it had its `CODES_PER_HOUR` this hour. The
    share's row is locked first (both engines), so that concurrent requests count one after
    the other."""
    await get_scoped(session, PlanShare, OrgScope(share.organization_id), share.id, for_update=True)
    now = utcnow()
    if await repo.codes_since(session, share.id, now - timedelta(hours=1)) >= CODES_PER_HOUR:
        return None
    code = f"{secrets.randbelow(10**6):06d}"
    session.add(
        PlanShareCode(
            organization_id=share.organization_id,
            share_id=share.id,
            code_hash=code_hash(signing_key, share.id, code),
            expires_at=now + CODE_TTL,
            created_at=now,
        )
    )
    await session.flush()
    return code


async def check_code(
    session: AsyncSession, signing_key: bytes, share: PlanShare, code: str
) -> tuple[Literal["right", "wrong", "none"], int]:
    """Spend one try of the share's newest code on `code`: right (the code is used now),
    wrong, or none (no code that may still be tried: used, expired, out of tries); and the
    tries left."""
    now = utcnow()
    found = await repo.spend_try(session, share.id, now, CODE_TRIES)
    if found is None:
        return "none", 0
    code_id, stored, spent = found
    if not hmac.compare_digest(stored, code_hash(signing_key, share.id, code)):
        return "wrong", max(0, CODE_TRIES - int(spent))
    await repo.use_code(session, code_id, now)
    return "right", 0


# --- room sessions ---------------------------------------------------------------------------------


def cookie_name(share_id: uuid.UUID) -> str:
    """One cookie per share (a buyer may be in several rooms), named without its id."""
    return COOKIE_PREFIX + hashlib.sha256(share_id.bytes).hexdigest()[:16]


async def start_session(session: AsyncSession, share: PlanShare) -> str:
    """A new room session for the share: the cookie's value."""
    raw = secrets.token_urlsafe(32)
    session.add(
        PlanShareSession(
            organization_id=share.organization_id,
            share_id=share.id,
            session_hash=token_hash(raw),
            expires_at=utcnow() + SESSION_TTL,
        )
    )
    await session.flush()
    return raw


async def find_session(
    session: AsyncSession, share: PlanShare, cookies: dict[str, str]
) -> PlanShareSession | None:
    raw = cookies.get(cookie_name(share.id))
    if not raw or len(raw) > 100:
        return None
    return await repo.room_session(session, share.id, token_hash(raw))


async def prune(session: AsyncSession) -> None:
    """What the worker clears now and then: codes a day old, expired room sessions."""
    now = utcnow()
    await repo.delete_stale(session, now - timedelta(days=1), now)
