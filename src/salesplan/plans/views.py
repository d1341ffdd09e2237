"""What the plan routes answer: a plan, milestone, goal or task as rendered by `render.py` from
the statements of `repository.py`, and the lists of a plan's children.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import NotFound
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.models.plans import PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import repository as repo
from salesplan.plans.checks import find_plan
from salesplan.plans.render import (
    PlanTree,
    goal_base,
    milestone_base,
    plan_base,
    task_dict,
)
from salesplan.webhooks import events

INCLUDABLE = ("milestones", "goals", "tasks")

Obj = dict[str, Any]


async def plan_view(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> Obj:
    """getPlan: one plan statement and three child statements, whatever the plan's size."""
    return await plan_view_on(await session.connection(), ctx, plan_id)


async def plan_view_on(conn: AsyncConnection, ctx: RequestContext, plan_id: uuid.UUID) -> Obj:
    """`plan_view` on a session's connection."""
    row = await repo.plan_row(conn, ctx, plan_id)
    if row is None:
        raise NotFound("Plan not found.", details={"id": str(plan_id)})
    return (await repo.plan_tree(conn, ctx, plan_id)).plan(plan_base(row))


def plan_updated(
    db: AsyncSession | AsyncConnection, ctx: RequestContext, plan_id: uuid.UUID
) -> tuple[uuid.UUID, str, Callable[[], Awaitable[Obj]]]:
    """The `plan.updated` event (contract §13) of a write to the plan's milestones, goals or
    tasks, for `events.record_many`: the plan as getPlan answers it, rendered only when an
    endpoint receives it (after the writes are flushed).

    On a connection (the Core write path, inside `kit.driver.transaction`), the plan is read
    with the driver's statements only: a SQLAlchemy statement there would begin SQLAlchemy's
    own transaction (a savepoint inside the driver's on PostgreSQL) that someone would have to
    end; the driver's transaction stays the one owner, committed or rolled back as a whole."""

    async def data() -> Obj:
        if isinstance(db, AsyncSession):
            return await plan_view_on(await db.connection(), ctx, plan_id)
        found = await repo.plan_on_driver(db, ctx, plan_id)
        if found is None:
            raise NotFound("Plan not found.", details={"id": str(plan_id)})
        row, tree = found
        return tree.plan(plan_base(row))

    return (ctx.organization_id, "plan.updated", data)


async def record_plan_updated(
    db: AsyncSession | AsyncConnection, ctx: RequestContext, plan_id: uuid.UUID
) -> int:
    """Record `plan_updated` in `db`'s transaction (once per request that changes them)."""
    return await events.record_many(db, [plan_updated(db, ctx, plan_id)])


async def fresh_tree(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> PlanTree:
    await session.flush()
    return await repo.plan_tree(await session.connection(), ctx, plan_id)


async def milestone_view(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, milestone_id: uuid.UUID
) -> Obj:
    tree = await fresh_tree(session, ctx, plan_id)
    found = tree.milestone_by_id.get(milestone_id)
    if found is None:
        row = await repo.one_row(
            await session.connection(), ctx, PlanMilestone, plan_id, milestone_id
        )
        if row is None:
            raise NotFound("Milestone not found.", details={"id": str(milestone_id)})
        found = milestone_base(row)
    return tree.milestone(found)


async def goal_view(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, goal_id: uuid.UUID
) -> Obj:
    tree = await fresh_tree(session, ctx, plan_id)
    found = tree.goal_by_id.get(goal_id)
    if found is None:
        row = await repo.one_row(await session.connection(), ctx, PlanGoal, plan_id, goal_id)
        if row is None:
            raise NotFound("Goal not found.", details={"id": str(goal_id)})
        found = goal_base(row)
    return tree.goal(found)


async def task_view(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, task_id: uuid.UUID
) -> Obj:
    await session.flush()
    row = await repo.one_row(await session.connection(), ctx, PlanTask, plan_id, task_id)
    if row is None:
        raise NotFound("Task not found.", details={"id": str(task_id)})
    return task_dict(row)


async def list_children(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    model: Any,
    params: ListParams,
    codec: CursorCodec,
    *,
    include_archived: bool,
    where: Sequence[Any] = (),
    sort_columns: dict[str, Any],
) -> tuple[list[Obj], PaginationMeta]:
    await find_plan(session, ctx, plan_id)
    conn = await session.connection()
    rows, meta = await repo.child_page(
        conn,
        ctx,
        plan_id,
        model,
        params,
        codec,
        include_archived=include_archived,
        where=where,
        sort_columns=sort_columns,
    )
    if model is PlanTask:
        return [task_dict(r) for r in rows], meta
    tree = await repo.plan_tree(conn, ctx, plan_id)
    if model is PlanMilestone:
        return [tree.milestone(milestone_base(r)) for r in rows], meta
    return [tree.goal(goal_base(r)) for r in rows], meta
