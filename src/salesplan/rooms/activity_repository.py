"""SQL of a room's activity (contract §16 "Activity and engagement"): the rows the subscriber
writes, the 30-minute view rule, the activity list and what engagement counts."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Row, case, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.kit.repository import Repository
from salesplan.kit.scoping import TenantScope, scoped
from salesplan.models.crm import Contact
from salesplan.models.identity import Membership
from salesplan.models.plans import Plan
from salesplan.models.rooms import PlanActivity, PlanShare


class ActivityRepository(Repository[PlanActivity]):
    model = PlanActivity
    sort_columns = {"createdAt": PlanActivity.created_at}


async def insert_activity(conn: AsyncConnection, rows: Sequence[dict[str, object]]) -> None:
    await conn.execute(insert(PlanActivity), list(rows))


async def viewed(
    session: AsyncSession, share_id: uuid.UUID, now: datetime, counted_before: datetime
) -> bool:
    """The share viewed now (`lastViewedAt`), in one statement; whether this view is a new
    `viewed` activity: none was counted since `counted_before`. The row's lock orders
    concurrent views, so two of them never both count."""
    counts = (PlanShare.view_counted_at.is_(None)) | (PlanShare.view_counted_at <= counted_before)
    stmt = (
        update(PlanShare)
        .where(PlanShare.id == share_id)
        .values(
            last_viewed_at=now,
            view_counted_at=case((counts, now), else_=PlanShare.view_counted_at),
            updated_at=PlanShare.updated_at,
        )
        .returning(PlanShare.view_counted_at)
        .execution_options(synchronize_session=False)
    )
    counted = (await session.execute(stmt)).scalar_one_or_none()
    return counted is not None and counted == now


async def timeline(
    db: AsyncSession | AsyncConnection, scope: TenantScope, plan_id: uuid.UUID, since: datetime
) -> Sequence[Row[uuid.UUID | None, str, datetime]]:
    """(contact id, type, created at) of the plan's activity since `since`."""
    stmt = scoped(
        select(PlanActivity.contact_id, PlanActivity.type, PlanActivity.created_at).where(
            PlanActivity.plan_id == plan_id, PlanActivity.created_at >= since
        ),
        scope,
        PlanActivity,
    )
    return (await db.execute(stmt)).all()


async def totals(
    db: AsyncSession | AsyncConnection, scope: TenantScope, plan_id: uuid.UUID
) -> Sequence[Row[uuid.UUID | None, str, int, datetime]]:
    """(contact id, type, how many, the latest) of the plan's activity, per contact and type."""
    stmt = scoped(
        select(
            PlanActivity.contact_id,
            PlanActivity.type,
            func.count(),
            func.max(PlanActivity.created_at),
        )
        .where(PlanActivity.plan_id == plan_id, PlanActivity.contact_id.is_not(None))
        .group_by(PlanActivity.contact_id, PlanActivity.type),
        scope,
        PlanActivity,
    )
    return (await db.execute(stmt)).all()


async def shared_contacts(
    db: AsyncSession | AsyncConnection, scope: TenantScope, plan_id: uuid.UUID
) -> Sequence[Row[uuid.UUID, str | None, str | None]]:
    """(contact id, first name, last name) of every contact the plan was shared with, and of
    every contact with activity on it."""
    shared = scoped(
        select(PlanShare.contact_id).where(PlanShare.plan_id == plan_id), scope, PlanShare
    )
    acted = scoped(
        select(PlanActivity.contact_id).where(
            PlanActivity.plan_id == plan_id, PlanActivity.contact_id.is_not(None)
        ),
        scope,
        PlanActivity,
    )
    stmt = scoped(
        select(Contact.id, Contact.first_name, Contact.last_name).where(
            Contact.id.in_(shared.union(acted))
        ),
        scope,
        Contact,
    )
    return (await db.execute(stmt)).all()


# --- the seller's page ----------------------------------------------------------------------------


async def member_plan(
    session: AsyncSession, user_id: uuid.UUID, plan_id: uuid.UUID
) -> Row[uuid.UUID, str] | None:
    """(organization id, name) of the plan, in any organization the user is a member of."""
    stmt = select(Plan.organization_id, Plan.name).where(
        Plan.id == plan_id,
        Plan.organization_id.in_(
            select(Membership.organization_id).where(Membership.user_id == user_id)
        ),
    )
    return (await session.execute(stmt)).first()


async def shares_of(
    session: AsyncSession, scope: TenantScope, plan_id: uuid.UUID, limit: int
) -> Sequence[PlanShare]:
    """The plan's shares, newest first."""
    stmt = (
        scoped(select(PlanShare), scope, PlanShare)
        .where(PlanShare.plan_id == plan_id)
        .order_by(PlanShare.created_at.desc(), PlanShare.id.desc())
        .limit(limit)
    )
    return (await session.execute(stmt)).scalars().all()


async def latest_activity(
    session: AsyncSession, scope: TenantScope, plan_id: uuid.UUID, limit: int
) -> Sequence[PlanActivity]:
    stmt = (
        scoped(select(PlanActivity), scope, PlanActivity)
        .where(PlanActivity.plan_id == plan_id)
        .order_by(PlanActivity.created_at.desc(), PlanActivity.id.desc())
        .limit(limit)
    )
    return (await session.execute(stmt)).scalars().all()
