"""Tasks: completion, assignees, and the caller's own tasks across plans.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams, contains_ci, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import scoped
from salesplan.models.plans import Plan, PlanTask
from salesplan.plans import repository as repo
from salesplan.plans.checks import (
    check_assignee,
    check_milestone,
    close_patch,
    live_plan,
    open_patch,
)
from salesplan.plans.render import task_dict, task_object_dict
from salesplan.plans.schemas import (
    TaskCreate,
    TaskFields,
    TaskUpdate,
)

TASK_SORT = {
    "createdAt": repo.T.c.created_at,
    "updatedAt": repo.T.c.updated_at,
    "title": repo.T.c.title,
}


def task_row(fields: TaskFields, plan: Plan, ctx: RequestContext, **extra: Any) -> PlanTask:
    data = fields.model_dump(exclude={"milestone_id"})
    return PlanTask(
        organization_id=plan.organization_id,
        plan_id=plan.id,
        completed_at=utcnow() if data["completed"] else None,
        created_by_id=ctx.user_id,
        **data,
        **extra,
    )


async def create_task(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: TaskCreate
) -> uuid.UUID:
    plan = await live_plan(session, ctx, plan_id)
    await check_milestone(session, ctx, plan_id, body.milestone_id)
    await check_assignee(session, ctx, body.assigned_to_id)
    row = task_row(body, plan, ctx, milestone_id=body.milestone_id)
    session.add(row)
    await session.flush()
    return row.id


async def update_task(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    task_id: uuid.UUID,
    body: TaskUpdate,
) -> dict[str, Any]:
    """The task updated, as the API answers it (rendered from what was written)."""
    row, sent = await open_patch(
        session, ctx, PlanTask, plan_id, task_id, body, ("title", "completed")
    )
    if sent.get("assigned_to_id") is not None:
        await check_assignee(session, ctx, sent["assigned_to_id"])
    if sent.get("completed") is True and not row.completed:
        row.completed_at = utcnow()
    elif sent.get("completed") is False and row.completed:
        row.completed_at = None
    await close_patch(session, row, sent)
    return task_object_dict(row)


async def list_my_tasks(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    completed: bool | None,
    plan_id: uuid.UUID | None,
    due_before: date | None,
) -> tuple[list[dict], PaginationMeta]:
    T, P = repo.T, repo.P
    live_plans = scoped(select(P.c.id).where(P.c.archived_at.is_(None)), ctx, Plan)
    stmt = scoped(
        select(*repo.TASK_COLUMNS).where(
            T.c.assigned_to_id == ctx.user_id,
            T.c.archived_at.is_(None),
            T.c.plan_id.in_(live_plans),
        ),
        ctx,
        PlanTask,
    )
    if completed is not None:
        stmt = stmt.where(T.c.completed.is_(completed))
    if plan_id is not None:
        stmt = stmt.where(T.c.plan_id == plan_id)
    if due_before is not None:
        stmt = stmt.where(T.c.target_date < due_before)
    if params.search:
        stmt = stmt.where(contains_ci(T.c.title, params.search))
    rows, meta = await paginate(
        await session.connection(),
        stmt,
        params,
        sort_columns=TASK_SORT,
        id_column=T.c.id,
        codec=codec,
    )
    return [task_dict(r) for r in rows], meta
