"""SQL of the room's notices (contract §16 "Events and notices"): the sellers' digest of a
plan's buyer activity and the buyers' due-date reminders. Both are claimed by the worker
through `worker.claims`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Row, and_, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.kit.scoping import TenantScope, scoped
from salesplan.models.identity import Membership, User
from salesplan.models.plans import Plan, PlanTask
from salesplan.models.rooms import PlanActivity, PlanRoomNotice, PlanShare, PlanTaskReminder
from salesplan.worker.claims import claim

DIGESTED = ("task_completed", "task_reopened", "commented")


def _insert(db: AsyncSession | AsyncConnection, model: type) -> postgresql.Insert | sqlite.Insert:
    """An INSERT that may skip what exists (`on_conflict_do_nothing`), in the engine's dialect."""
    dialect = db.dialect if isinstance(db, AsyncConnection) else db.get_bind().dialect
    if dialect.name == "postgresql":
        return postgresql.insert(model)
    return sqlite.insert(model)


async def digest_due(
    conn: AsyncConnection, organization_id: uuid.UUID, plan_id: uuid.UUID, at: datetime
) -> None:
    """The plan has buyer activity to tell its sellers since `at` (when none was waiting)."""
    row = {"plan_id": plan_id, "organization_id": organization_id, "due_at": at, "since": at}
    await conn.execute(_insert(conn, PlanRoomNotice).values(row).on_conflict_do_nothing())
    await conn.execute(
        update(PlanRoomNotice)
        .where(PlanRoomNotice.plan_id == plan_id, PlanRoomNotice.due_at.is_(None))
        .values(due_at=at, since=at)
    )


async def claim_digests(
    session: AsyncSession, now: datetime, quiet_since: datetime, lease_until: datetime, limit: int
) -> list[tuple[uuid.UUID, uuid.UUID, datetime | None]]:
    """The plans whose digest is due (and whose last one went before `quiet_since`): their
    `due_at` moved to `lease_until`. (plan id, organization id, since)."""
    result = await claim(
        session,
        PlanRoomNotice,
        key="plan_id",
        due=[
            PlanRoomNotice.due_at <= now,
            or_(PlanRoomNotice.sent_at.is_(None), PlanRoomNotice.sent_at <= quiet_since),
        ],
        order_by=[PlanRoomNotice.due_at],
        limit=limit,
        values={"due_at": lease_until},
        returning=[PlanRoomNotice.plan_id, PlanRoomNotice.organization_id, PlanRoomNotice.since],
    )
    rows: Sequence[Any] = result.all()  # the claim's RETURNING, as asked
    return [(row[0], row[1], row[2]) for row in rows]


async def digest_sent(
    session: AsyncSession, plan_id: uuid.UUID, lease_until: datetime, now: datetime
) -> None:
    """The digest went: nothing waits (unless what came meanwhile set it due again)."""
    await session.execute(
        update(PlanRoomNotice)
        .where(PlanRoomNotice.plan_id == plan_id, PlanRoomNotice.due_at == lease_until)
        .values(due_at=None, since=None, sent_at=now)
    )


async def digested_activity(
    session: AsyncSession, scope: TenantScope, plan_id: uuid.UUID, since: datetime, until: datetime
) -> Sequence[Row[str, uuid.UUID | None, uuid.UUID | None, datetime]]:
    """(type, contact id, task id, when) of the buyers' ticks and comments to tell."""
    stmt = scoped(
        select(
            PlanActivity.type,
            PlanActivity.contact_id,
            PlanActivity.task_id,
            PlanActivity.created_at,
        ).where(
            PlanActivity.plan_id == plan_id,
            PlanActivity.type.in_(DIGESTED),
            PlanActivity.created_at >= since,
            PlanActivity.created_at <= until,
        ),
        scope,
        PlanActivity,
    ).order_by(PlanActivity.created_at, PlanActivity.id)
    return (await session.execute(stmt)).all()


async def plan_and_creator(
    session: AsyncSession, scope: TenantScope, plan_id: uuid.UUID
) -> Row[str, uuid.UUID | None] | None:
    stmt = scoped(
        select(Plan.name, Plan.created_by_id).where(Plan.id == plan_id, Plan.archived_at.is_(None)),
        scope,
        Plan,
    )
    return (await session.execute(stmt)).first()


async def tasks_of(
    session: AsyncSession, scope: TenantScope, task_ids: Sequence[uuid.UUID]
) -> Sequence[Row[uuid.UUID, str, uuid.UUID | None]]:
    """(id, title, assignee id) of the tasks."""
    stmt = scoped(
        select(PlanTask.id, PlanTask.title, PlanTask.assigned_to_id).where(
            PlanTask.id.in_(list(task_ids))
        ),
        scope,
        PlanTask,
    )
    return (await session.execute(stmt)).all()


async def members(
    session: AsyncSession, scope: TenantScope, user_ids: Sequence[uuid.UUID]
) -> Sequence[Row[uuid.UUID, str]]:
    """(id, e-mail) of those of `user_ids` who are members of the organization."""
    stmt = scoped(
        select(User.id, User.email)
        .join(Membership, Membership.user_id == User.id)
        .where(User.id.in_(list(user_ids))),
        scope,
        Membership,
    )
    return (await session.execute(stmt)).all()


# --- the buyers' reminders ------------------------------------------------------------------------


async def reminder_candidates(
    session: AsyncSession, today: date, now: datetime, limit: int
) -> Sequence[Row[uuid.UUID, uuid.UUID, uuid.UUID | None]]:
    """(organization id, task id, contact id) of open buyer tasks due tomorrow or earlier
    whose contact has a live share of the task's live plan and had no reminder of it today."""
    tomorrow = date.fromordinal(today.toordinal() + 1)
    reminded = (
        select(PlanTaskReminder.id)
        .where(
            PlanTaskReminder.task_id == PlanTask.id,
            PlanTaskReminder.contact_id == PlanTask.assigned_to_id,
            PlanTaskReminder.sent_on >= today,
        )
        .exists()
    )
    stmt = (
        select(PlanTask.organization_id, PlanTask.id, PlanTask.assigned_to_id)
        .join(Plan, Plan.id == PlanTask.plan_id)
        .join(
            PlanShare,
            and_(
                PlanShare.plan_id == PlanTask.plan_id,
                PlanShare.contact_id == PlanTask.assigned_to_id,
            ),
        )
        .where(
            PlanTask.completed.is_(False),
            PlanTask.archived_at.is_(None),
            PlanTask.target_date <= tomorrow,
            Plan.archived_at.is_(None),
            PlanShare.revoked_at.is_(None),
            or_(PlanShare.expires_at.is_(None), PlanShare.expires_at > now),
            ~reminded,
        )
        .distinct()
        .limit(limit)
    )
    return (await session.execute(stmt)).all()


async def add_reminders(session: AsyncSession, rows: Sequence[dict[str, object]]) -> None:
    """The reminder rows of these (task, contact) pairs, where there are none yet."""
    if rows:
        await session.execute(
            _insert(session, PlanTaskReminder).values(list(rows)).on_conflict_do_nothing()
        )


async def claim_reminders(
    session: AsyncSession, task_ids: Sequence[uuid.UUID], today: date, limit: int
) -> list[tuple[uuid.UUID, uuid.UUID, uuid.UUID]]:
    """Today's reminders of these tasks, each claimed once a day: (organization id, task id,
    contact id)."""
    result = await claim(
        session,
        PlanTaskReminder,
        due=[
            PlanTaskReminder.task_id.in_(list(task_ids)),
            or_(PlanTaskReminder.sent_on.is_(None), PlanTaskReminder.sent_on < today),
        ],
        order_by=[PlanTaskReminder.id],
        limit=limit,
        values={"sent_on": today},
        returning=[
            PlanTaskReminder.organization_id,
            PlanTaskReminder.task_id,
            PlanTaskReminder.contact_id,
        ],
    )
    rows: Sequence[Any] = result.all()  # the claim's RETURNING, as asked
    return [(row[0], row[1], row[2]) for row in rows]


async def share_of(
    session: AsyncSession,
    scope: TenantScope,
    task_id: uuid.UUID,
    contact_id: uuid.UUID,
    now: datetime,
) -> PlanShare | None:
    """The contact's newest live share of the task's plan."""
    plan_of_task = select(PlanTask.plan_id).where(PlanTask.id == task_id).scalar_subquery()
    stmt = (
        scoped(select(PlanShare), scope, PlanShare)
        .where(
            PlanShare.plan_id == plan_of_task,
            PlanShare.contact_id == contact_id,
            PlanShare.revoked_at.is_(None),
            or_(PlanShare.expires_at.is_(None), PlanShare.expires_at > now),
        )
        .order_by(PlanShare.created_at.desc(), PlanShare.id.desc())
        .limit(1)
    )
    found: PlanShare | None = (await session.execute(stmt)).scalar_one_or_none()
    return found
