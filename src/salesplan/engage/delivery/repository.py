"""Engage delivery's statements on the outbox (`engage_messages`) and the senders' pauses:
the delivery worker's claim, outcomes and sender-cap counts, the queue's analytics, and the
lookups of inbound mail. The sequence's state changes are `sequence_repository.py`.

The worker's hot statements are built once (`functools.cache`) and run with bound values."""

from __future__ import annotations

import functools
import hashlib
import uuid
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Date,
    Update,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    literal_column,
    not_,
    select,
    text,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.kit.clock import utcnow
from salesplan.kit.repository import table_of
from salesplan.kit.scoping import OrgScope, TenantScope, scoped
from salesplan.models.crm import Contact
from salesplan.models.engage import EngageSuppression
from salesplan.models.engage_delivery import EngageMessage, EngageReply, SenderPause
from salesplan.worker.claims import claim, claim_statement

Message = EngageMessage

# -- the delivery worker's claim ---------------------------------------------------------------


async def paused_senders(session: AsyncSession, now: datetime) -> set[str]:
    """The senders a provider paused until after `now`."""
    rows = await session.execute(select(SenderPause.sender).where(SenderPause.paused_until > now))
    return set(rows.scalars())


def _due(
    now: datetime, slack_paused: Sequence[uuid.UUID], email: bool | None
) -> list[ColumnElement[bool]]:
    """Due messages, but not the Slack ones of organizations whose webhook is paused; only
    e-mail (`email` True), only the other channels (False), or all (None)."""
    due: list[ColumnElement[bool]] = [Message.next_attempt_at <= now]
    if slack_paused:
        orgs = list(slack_paused)
        due.append(not_(and_(Message.channel == "SLACK", Message.organization_id.in_(orgs))))
    if email is True:
        due.append(Message.channel == "EMAIL")
    elif email is False:
        due.append(Message.channel != "EMAIL")
    return due


async def lease(
    session: AsyncSession,
    now: datetime,
    slack_paused: Sequence[uuid.UUID],
    email: bool | None,
    *,
    limit: int,
    worker_id: str,
    sender: str,
    until: datetime,
) -> list[EngageMessage]:
    """Lease at most `limit` due messages (first due first) until `until`: `sending`, one
    more attempt, `next_attempt_at` moved to the lease's end; an e-mail's `from_address` is
    its sender's, so that sender caps count it while in flight."""
    result = await claim(
        session,
        Message,
        due=_due(now, slack_paused, email),
        order_by=(Message.next_attempt_at,),
        limit=limit,
        values={
            "status": "sending",
            "attempts": Message.attempts + 1,
            "lease_owner": worker_id,
            "lease_expires_at": until,
            "next_attempt_at": until,
            "from_address": case((Message.channel == "EMAIL", sender), else_=None),
            "updated_at": now,
        },
        returning=(Message,),
    )
    return list(result.scalars().all())


async def defer_emails(
    session: AsyncSession,
    now: datetime,
    slack_paused: Sequence[uuid.UUID],
    *,
    limit: int,
    until: datetime,
    reason: str,
) -> int:
    """Due e-mails over the sender's cap wait until `until`: still `scheduled`, not an
    attempt, and `scheduledAt` says when (their next free slot, never null; contract §14).
    Answers how many."""
    statement = claim_statement(
        Message,
        due=_due(now, slack_paused, True),
        order_by=(Message.next_attempt_at,),
        limit=limit,
        values={
            "status": "scheduled",
            "last_error": reason,
            "next_attempt_at": until,
            "scheduled_at": until,
        },
    )
    result = await session.execute(statement)
    return int(getattr(result, "rowcount", 0) or 0)


async def lock_sender(session: AsyncSession, sender: str) -> None:
    """On PostgreSQL, the sender's advisory lock, held to the end of the transaction (SQLite
    has one writer)."""
    if session.get_bind().dialect.name == "postgresql":
        lock = int.from_bytes(hashlib.sha256(sender.encode()).digest()[:8], "big", signed=True)
        await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock})


async def in_flight(session: AsyncSession, sender: str) -> int:
    """The sender's messages claimed and not yet sent."""
    count = await session.scalar(
        select(func.count())
        .select_from(Message)
        .where(Message.from_address == sender, Message.sent_at.is_(None))
    )
    return int(count or 0)


def _sent_since(sender: str, since: datetime) -> ColumnElement[bool]:
    return (Message.from_address == sender) & (Message.sent_at > since)


async def sent_since(session: AsyncSession, sender: str, since: datetime) -> int:
    """How many messages the sender sent after `since`."""
    count = await session.scalar(
        select(func.count()).select_from(Message).where(_sent_since(sender, since))
    )
    return int(count or 0)


async def nth_sent_since(
    session: AsyncSession, sender: str, since: datetime, nth: int
) -> datetime | None:
    """When the sender's `nth` (0-based, oldest first) message after `since` was sent."""
    found: datetime | None = await session.scalar(
        select(Message.sent_at)
        .where(_sent_since(sender, since))
        .order_by(Message.sent_at)
        .offset(nth)
        .limit(1)
    )
    return found


# -- the delivery worker's outcomes --------------------------------------------------------------


@functools.cache
def sent_statement() -> Update:
    """A group's `sent`, written only where this worker still holds the lease; answers the
    ids written. Binds: b_ids, b_owner, b_at, b_from."""
    table = table_of(EngageMessage)
    at = bindparam("b_at", type_=table.c.sent_at.type)
    return (
        table.update()
        .where(
            table.c.id.in_(bindparam("b_ids", expanding=True)),
            table.c.lease_owner == bindparam("b_owner"),
        )
        .values(
            status="sent",
            last_error=None,
            next_attempt_at=None,
            sent_at=at,
            sealed=None,  # a transactional message's secrets do not outlive its sending
            from_address=case(
                (table.c.channel == "EMAIL", bindparam("b_from", type_=table.c.from_address.type)),
                else_=None,
            ),
            lease_owner=None,
            lease_expires_at=None,
            updated_at=at,
        )
        .returning(table.c.id)
    )


@functools.cache
def _outcome_statement() -> Update:
    """One message's outcome, written only while this worker still holds its lease."""
    table = table_of(EngageMessage)
    return (
        table.update()
        .where(table.c.id == bindparam("b_id"), table.c.lease_owner == bindparam("b_owner"))
        .values(
            status=bindparam("status"),
            attempts=bindparam("attempts"),
            last_error=bindparam("last_error"),
            next_attempt_at=bindparam("next_attempt_at"),
            sent_at=bindparam("sent_at"),
            # A message that failed for good keeps no secret (engage/delivery/sealed.py).
            sealed=case((bindparam("status") == "failed", None), else_=table.c.sealed),
            from_address=None,
            lease_owner=None,
            lease_expires_at=None,
            updated_at=bindparam("updated_at"),
        )
    )


async def write_outcomes(session: AsyncSession, rows: list[dict[str, object]]) -> None:
    """The outcomes (one executemany): rows of b_id, b_owner, status, attempts, last_error,
    next_attempt_at, sent_at, updated_at."""
    if rows:
        await session.execute(_outcome_statement(), rows)


async def pause_sender(session: AsyncSession, sender: str, until: datetime, reason: str) -> None:
    """The sender rests until `until` (a later pause already there stays)."""
    existing = await session.get(SenderPause, sender)
    if existing is None:
        session.add(SenderPause(sender=sender, paused_until=until, reason=reason))
    elif existing.paused_until < until:
        existing.paused_until = until
        existing.reason = reason
    await session.flush()


async def paused_until(session: AsyncSession, sender: str) -> datetime | None:
    row = await session.get(SenderPause, sender)
    if row is None or row.paused_until <= utcnow():
        return None
    return row.paused_until


# -- sends and the queue -----------------------------------------------------------------------


async def suppression_reason(session: AsyncSession, scope: TenantScope, email: str) -> str | None:
    """Why `email` (already kit.email.mailbox'd) is on the organization's suppression list,
    or None."""
    stmt = scoped(select(EngageSuppression.reason), scope, EngageSuppression).where(
        EngageSuppression.email == email
    )
    found: str | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


async def is_suppressed(session: AsyncSession, scope: TenantScope, email: str) -> bool:
    """Whether `email` (already kit.email.mailbox'd) is on the organization's list."""
    stmt = scoped(select(EngageSuppression.id), scope, EngageSuppression).where(
        EngageSuppression.email == email
    )
    return (await session.execute(stmt)).first() is not None


async def contact(
    session: AsyncSession, scope: TenantScope, contact_id: uuid.UUID
) -> Contact | None:
    stmt = scoped(select(Contact).where(Contact.id == contact_id), scope)
    found: Contact | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


def _day(column: Any, dialect: str) -> Any:
    if dialect == "postgresql":
        return cast(func.timezone("UTC", column), Date)
    return func.date(column)


ANALYTICS_COLUMNS = {
    "sent": EngageMessage.sent_at,
    "delivered": EngageMessage.delivered_at,
    "opened": EngageMessage.opened_at,
    "clicked": EngageMessage.clicked_at,
    "replied": EngageMessage.replied_at,
    "bounced": EngageMessage.bounced_at,
}


async def analytics_rows(
    session: AsyncSession,
    scope: TenantScope,
    low: datetime,
    high: datetime,
    campaign_id: uuid.UUID | None,
) -> list[tuple[str, date | str, int]]:
    """(metric, day, count) of the organization's messages in [low, high), in one statement:
    each metric on the day its timestamp fell on."""
    dialect = session.get_bind().dialect.name
    parts = []
    for name, column in ANALYTICS_COLUMNS.items():
        part = scoped(
            select(
                literal(name).label("metric"),
                _day(column, dialect).label("day"),
                func.count().label("n"),
            ),
            scope,
            EngageMessage,
        ).where(column >= low, column < high)
        if campaign_id is not None:
            part = part.where(EngageMessage.campaign_id == campaign_id)
        parts.append(part.group_by(literal_column("day")))
    return [tuple(row) for row in (await session.execute(union_all(*parts))).all()]


# -- inbound mail ----------------------------------------------------------------------------------


async def reply_stored(session: AsyncSession, scope: OrgScope, rfc_message_id: str) -> bool:
    """Whether the organization already holds the reply with this Message-ID."""
    stmt = scoped(select(EngageReply.id), scope, EngageReply).where(
        EngageReply.rfc_message_id == rfc_message_id
    )
    return (await session.execute(stmt.limit(1))).first() is not None


async def messages_by_rfc_id(
    session: AsyncSession, scope: OrgScope, ids: Sequence[str]
) -> dict[str | None, EngageMessage]:
    """The organization's messages among these Message-IDs, by Message-ID."""
    rows = (
        await session.execute(
            scoped(select(EngageMessage), scope).where(EngageMessage.rfc_message_id.in_(ids))
        )
    ).scalars()
    return {m.rfc_message_id: m for m in rows}
