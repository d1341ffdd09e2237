"""A campaign contact's sequence, as plain SQL state changes: what a sent message, a failure, a
reply, a suppression, a pause, a resume and a manual completion do to enrollments and to the
campaign's messages still waiting in the outbox; and the reads and locks of the campaign runs
(`campaign_runs.py`, which schedules steps and renders templates).

An enrollment moves `pending` → `scheduled` (its `current_step`'s message is in the outbox) →
`sent` (that message went out at `last_sent_at`; the campaign job schedules the next step, or
completes the enrollment after the last) → … and ends `completed`, `replied`, `stopped` (with a
`reason`) or `skipped` (its first step could not be scheduled, with a SKIP_REASONS reason)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Update, exists, func, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.kit.clock import utcnow
from salesplan.kit.email import mailbox_or_none
from salesplan.kit.repository import M
from salesplan.kit.scoping import OrgScope, TenantScope, in_organization, scoped
from salesplan.models.crm import Contact
from salesplan.models.engage import (
    EngageCampaign,
    EngageEnrollment,
    EngageEnrollmentJob,
    EngageSuppression,
)
from salesplan.models.engage_delivery import EngageMessage
from salesplan.worker.claims import candidates

Enrollment = EngageEnrollment
LIVE = ("pending", "scheduled", "sent")
# Campaign messages not yet handed to a provider: what a reply, a pause or a stop affects.
WAITING = ("scheduled", "queued")


def sent_statement(message: EngageMessage, sent_at: datetime) -> Update:
    """The enrollment of a campaign message that just went out moves to `sent` (written in the
    same transaction as the message's `sent`). Only from `scheduled` at that step: a reply or a
    stop that came meanwhile wins."""
    return (
        update(Enrollment)
        .where(
            Enrollment.id == message.enrollment_id,
            Enrollment.state == "scheduled",
            Enrollment.current_step == message.step_index,
        )
        .values(state="sent", last_sent_at=sent_at, next_run_at=None, updated_at=sent_at)
        .execution_options(synchronize_session=False)
    )


async def mark_sent(conn: AsyncConnection, message: EngageMessage, sent_at: datetime) -> None:
    if message.enrollment_id is not None and message.step_index is not None:
        await conn.execute(sent_statement(message, sent_at))


async def mark_sent_many(
    conn: AsyncConnection, messages: list[EngageMessage], sent_at: datetime
) -> None:
    """`mark_sent` for the campaign messages of a batch the worker just sent: one statement
    (the same rule: only an enrollment still `scheduled` at that message's step moves)."""
    steps = [
        (m.enrollment_id, m.step_index)
        for m in messages
        if m.enrollment_id is not None and m.step_index is not None
    ]
    if not steps:
        return
    await conn.execute(
        update(Enrollment)
        .where(
            Enrollment.state == "scheduled",
            tuple_(Enrollment.id, Enrollment.current_step).in_(steps),
        )
        .values(state="sent", last_sent_at=sent_at, next_run_at=None, updated_at=sent_at)
        .execution_options(synchronize_session=False)
    )


async def stop_failed(session: AsyncSession, messages: list[EngageMessage]) -> None:
    """A campaign message that failed for good ends its contact's sequence (`stopped`,
    reason `failed`)."""
    ids = [m.enrollment_id for m in messages if m.enrollment_id is not None]
    if not ids:
        return
    await _end_live(session, "stopped", "failed", Enrollment.id.in_(ids))


async def _end_live(
    session: AsyncSession,
    state: str,
    reason: str | None,
    *where: ColumnElement[bool],
    step: int | None = None,
) -> None:
    """The live enrollments matching `where` end in `state` (with `reason`, when one is
    given; at `step`, when one is given): no further step is scheduled for them."""
    values: dict[str, object] = {"state": state, "next_run_at": None, "updated_at": utcnow()}
    if reason is not None:
        values["reason"] = reason
    if step is not None:
        values["current_step"] = step
    await session.execute(
        update(Enrollment)
        .where(Enrollment.state.in_(LIVE), *where)
        .values(values)
        .execution_options(synchronize_session=False)
    )


async def _cancel_waiting(session: AsyncSession, *where: ColumnElement[bool]) -> None:
    now = utcnow()
    await session.execute(
        update(EngageMessage)
        .where(EngageMessage.status.in_(WAITING), *where)
        .values(status="cancelled", next_attempt_at=None, updated_at=now)
        .execution_options(synchronize_session=False)
    )


async def stop_on_reply(
    session: AsyncSession,
    organization_id: uuid.UUID,
    campaign_id: uuid.UUID,
    contact_id: uuid.UUID,
    step: int | None = None,
) -> None:
    """A reply stops that contact's remaining steps in the campaign: its waiting messages are
    cancelled and its enrollment is `replied` (no further step is scheduled), at `step`, the
    step whose message it answered (the campaign's status counts it there, not under the next
    step that was waiting)."""
    scope = OrgScope(organization_id)
    await _cancel_waiting(
        session,
        in_organization(EngageMessage, scope),
        EngageMessage.campaign_id == campaign_id,
        EngageMessage.contact_id == contact_id,
    )
    await _end_live(
        session,
        "replied",
        None,
        in_organization(Enrollment, scope),
        Enrollment.campaign_id == campaign_id,
        Enrollment.contact_id == contact_id,
        step=step,
    )


async def contact_of(
    session: AsyncSession, organization_id: uuid.UUID, address: str
) -> uuid.UUID | None:
    """The organization's live contact with this e-mail address (the parsed address,
    contract §12), the oldest when several have it: who a reply from `address` comes from."""
    key = mailbox_or_none(address)
    if key is None:
        return None
    stmt = (
        scoped(select(Contact.id), OrgScope(organization_id), Contact)
        .where(Contact.email_mailbox == key, Contact.archived_at.is_(None))
        .order_by(Contact.created_at, Contact.id)
        .limit(1)
    )
    found: uuid.UUID | None = await session.scalar(stmt)
    return found


async def stop_for_address(
    session: AsyncSession, organization_id: uuid.UUID, address: str, reason: str
) -> None:
    """An address put on the suppression list is never written to again: its waiting messages
    (campaign steps and scheduled sends) are cancelled and campaigns stop their sequences.
    `address` is already kit.email.mailbox'd; the rows hold theirs (`to_mailbox`,
    `email_mailbox`), so each lookup is one indexed equality."""
    scope = OrgScope(organization_id)
    await _cancel_waiting(
        session, in_organization(EngageMessage, scope), EngageMessage.to_mailbox == address
    )
    contacts = scoped(select(Contact.id), scope, Contact).where(Contact.email_mailbox == address)
    await _end_live(
        session,
        "stopped",
        reason[:32],
        in_organization(Enrollment, scope),
        Enrollment.contact_id.in_(contacts),
    )


async def hold(session: AsyncSession, campaign_id: uuid.UUID) -> None:
    """Pausing a campaign: its waiting messages are not taken by the worker (their
    `next_attempt_at` is cleared; `scheduledAt` keeps the time) and no new step is scheduled
    (the campaign job looks at active campaigns only)."""
    await session.execute(
        update(EngageMessage)
        .where(EngageMessage.campaign_id == campaign_id, EngageMessage.status.in_(WAITING))
        .values(next_attempt_at=None, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )


async def release(session: AsyncSession, campaign_id: uuid.UUID) -> None:
    """Resuming: held messages are due at their scheduled time again (or at once)."""
    now = utcnow()
    await session.execute(
        update(EngageMessage)
        .where(
            EngageMessage.campaign_id == campaign_id,
            EngageMessage.status.in_(WAITING),
            EngageMessage.manual.is_(False),
            EngageMessage.next_attempt_at.is_(None),
        )
        .values(next_attempt_at=func.coalesce(EngageMessage.scheduled_at, now), updated_at=now)
        .execution_options(synchronize_session=False)
    )


async def stop_campaign(session: AsyncSession, campaign_id: uuid.UUID) -> None:
    """A campaign set `completed` by hand: nothing more is sent."""
    await _cancel_waiting(session, EngageMessage.campaign_id == campaign_id)
    await _end_live(session, "stopped", "campaign_completed", Enrollment.campaign_id == campaign_id)


# -- campaign runs (campaign_runs.py) -----------------------------------------------------------


async def lock_campaign(session: AsyncSession, campaign_id: uuid.UUID) -> None:
    """The campaign's row lock, to the end of the transaction (serializes its starts)."""
    await session.execute(
        select(EngageCampaign.id).where(EngageCampaign.id == campaign_id).with_for_update()
    )


async def pending_enrollments(
    session: AsyncSession, campaign_id: uuid.UUID, after: uuid.UUID | None, limit: int
) -> list[EngageEnrollment]:
    """The campaign's next `limit` `pending` enrollments after `after`, by id."""
    stmt = (
        select(Enrollment)
        .where(Enrollment.campaign_id == campaign_id, Enrollment.state == "pending")
        .order_by(Enrollment.id)
        .limit(limit)
    )
    if after is not None:
        stmt = stmt.where(Enrollment.id > after)
    return list((await session.scalars(stmt)).all())


async def by_id(
    session: AsyncSession, model: type[M], scope: TenantScope, ids: set[uuid.UUID]
) -> dict[uuid.UUID, M]:
    """The organization's rows of `model` among `ids`, by id, in one query."""
    table: Any = model
    stmt = scoped(select(model).where(table.id.in_(ids)), scope, model)
    found: list[Any] = list((await session.scalars(stmt)).all())  # M names no columns
    return {row.id: row for row in found}


async def suppressed_among(session: AsyncSession, scope: TenantScope, emails: set[str]) -> set[str]:
    """The addresses (already kit.email.mailbox'd) on the organization's suppression list."""
    stmt = scoped(select(EngageSuppression.email), scope, EngageSuppression)
    return set(await session.scalars(stmt.where(EngageSuppression.email.in_(emails))))


async def claim_due_steps(session: AsyncSession, limit: int) -> list[EngageEnrollment]:
    """The enrollments whose next step is due to be scheduled (`pending` or `sent`, in an
    active, started campaign), locked to the end of the transaction (worker/claims.py: the
    transaction is the lease; concurrent workers pass over each other's rows)."""
    stmt = candidates(
        Enrollment,
        due=(
            EngageCampaign.id == Enrollment.campaign_id,
            EngageCampaign.status == "active",
            EngageCampaign.started_at.is_not(None),
            Enrollment.state.in_(("pending", "sent")),
        ),
        order_by=(Enrollment.campaign_id, Enrollment.id),
        limit=limit,
        lock_of=Enrollment,
    )
    return list((await session.scalars(stmt)).all())


async def active_campaign_shared(
    session: AsyncSession, campaign_id: uuid.UUID
) -> EngageCampaign | None:
    """The campaign if it is active, locked FOR SHARE: a PATCH pausing it waits for this
    transaction (and then holds what it wrote), or this one sees it paused."""
    found: EngageCampaign | None = (
        await session.scalars(
            select(EngageCampaign)
            .where(EngageCampaign.id == campaign_id, EngageCampaign.status == "active")
            .with_for_update(read=True)
        )
    ).one_or_none()
    return found


async def complete_finished(session: AsyncSession) -> list[EngageCampaign]:
    """Active, started campaigns with enrollments, none of them live, and no enrollment job
    still to run become `completed`: answers them (as written)."""
    now = utcnow()
    camp = EngageCampaign
    has_any = exists().where(Enrollment.campaign_id == camp.id)
    live = exists().where(Enrollment.campaign_id == camp.id, Enrollment.state.in_(LIVE))
    running = exists().where(
        EngageEnrollmentJob.campaign_id == camp.id,
        EngageEnrollmentJob.status.in_(("queued", "running")),
    )
    result = await session.scalars(
        update(camp)
        .where(camp.status == "active", camp.started_at.is_not(None), has_any, ~live, ~running)
        .values(status="completed", updated_at=now)
        .returning(camp)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    return list(result.all())
