"""Milestones: order (sortIndex, reorder) and completion dates.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import Unprocessable
from salesplan.kit.clock import today, utcnow
from salesplan.kit.events import emit
from salesplan.models.plans import Plan, PlanMilestone
from salesplan.plans import repository as repo
from salesplan.plans import write_repository as writes
from salesplan.plans.checks import check_owners, live_child, live_plan, open_patch, plan_written
from salesplan.plans.events import MilestoneCreated, MilestoneUpdated
from salesplan.plans.schemas import (
    MilestoneCreate,
    MilestoneReorder,
    MilestoneUpdate,
)
from salesplan.plans.views import fresh_tree

MILESTONE_SORT = repo.MILESTONE_SORT


def milestone_row(fields: MilestoneCreate, plan: Plan, sort_index: int) -> PlanMilestone:
    data = fields.model_dump(
        exclude={"goals", "tasks", "sort_index", "prospect_owner_ids", "subscriber_owner_ids"}
    )
    row = PlanMilestone(
        organization_id=plan.organization_id,
        plan_id=plan.id,
        sort_index=sort_index if fields.sort_index is None else fields.sort_index,
        prospect_owner_ids=[str(v) for v in fields.prospect_owner_ids or []],
        subscriber_owner_ids=[str(v) for v in fields.subscriber_owner_ids or []],
        **data,
    )
    if row.status == "completed" and row.actual_date is None:
        row.actual_date = today()
    return row


async def next_sort_index(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> int:
    last = await writes.last_sort_index(session, ctx, plan_id)
    return 0 if last is None else last + 1


async def create_milestone(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: MilestoneCreate
) -> uuid.UUID:
    plan = await live_plan(session, ctx, plan_id)
    await check_owners(session, ctx, plan_id, body.prospect_owner_ids, body.subscriber_owner_ids)
    index = await next_sort_index(session, ctx, plan_id) if body.sort_index is None else 0
    row = milestone_row(body, plan, index)
    session.add(row)
    await plan_written(session, ctx, plan_id)
    await session.flush()
    emit(session, MilestoneCreated(ctx.organization_id, plan_id, row.id))
    return row.id


async def update_milestone(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    milestone_id: uuid.UUID,
    body: MilestoneUpdate,
) -> None:
    row, sent = await open_patch(
        session,
        ctx,
        PlanMilestone,
        plan_id,
        milestone_id,
        body,
        ("milestone", "status", "sort_index"),
    )
    await check_owners(
        session, ctx, plan_id, sent.get("prospect_owner_ids"), sent.get("subscriber_owner_ids")
    )
    was = row.status
    for key, value in sent.items():
        if key in ("prospect_owner_ids", "subscriber_owner_ids"):
            value = [str(v) for v in value or []]
        setattr(row, key, value)
    if row.status == "completed" and was != "completed":
        if row.actual_date is None:
            row.actual_date = today()
    elif was == "completed" and row.status != "completed" and "actual_date" not in sent:
        row.actual_date = None
    row.updated_at = utcnow()
    await plan_written(session, ctx, plan_id)
    await session.flush()
    emit(session, MilestoneUpdated(ctx.organization_id, plan_id, milestone_id))


async def restore_milestone(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, milestone_id: uuid.UUID
) -> None:
    row: PlanMilestone = await live_child(session, ctx, PlanMilestone, plan_id, milestone_id)
    if row.archived_at is not None:
        row.archived_at = None
        row.updated_at = utcnow()
        await plan_written(session, ctx, plan_id)
        await session.flush()
        emit(session, MilestoneUpdated(ctx.organization_id, plan_id, milestone_id))


async def reorder_milestones(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: MilestoneReorder
) -> list[dict[str, Any]]:
    await live_plan(session, ctx, plan_id)
    live = await writes.live_milestones(session, ctx, plan_id)
    wanted = body.milestone_ids
    if len(set(wanted)) != len(wanted) or set(wanted) != set(live):
        raise Unprocessable(
            "milestoneIds must list every live milestone of the plan exactly once.",
            details={
                "field": "milestoneIds",
                "missing": sorted(str(i) for i in set(live) - set(wanted)),
                "unknown": sorted(str(i) for i in set(wanted) - set(live)),
            },
        )
    now = utcnow()
    moved = False
    for index, milestone_id in enumerate(wanted):
        if live[milestone_id].sort_index != index:
            live[milestone_id].sort_index = index
            live[milestone_id].updated_at = now
            moved = True
            emit(session, MilestoneUpdated(ctx.organization_id, plan_id, milestone_id))
    if moved:
        await plan_written(session, ctx, plan_id)
    tree = await fresh_tree(session, ctx, plan_id)
    return [tree.milestone(m) for m in tree.milestones]
