"""What the plan routes answer: a plan, milestone, goal or task as rendered by `render.py` from
the statements of `repository.py`, and the lists of a plan's children.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import NotFound
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import SqlColumn, TenantScope, get_scoped
from salesplan.models.base import Base
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import repository as repo
from salesplan.plans.render import (
    PlanTree,
    goal_base,
    milestone_base,
    plan_base,
    task_dict,
)

INCLUDABLE = ("milestones", "goals", "tasks")

Obj = dict[str, Any]


async def plan_view(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> Obj:
    """getPlan: one plan statement and three child statements, whatever the plan's size."""
    return await plan_view_on(await session.connection(), ctx, plan_id)


async def plan_view_on(conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID) -> Obj:
    """`plan_view` on a transaction's connection (a session's, or a unit of work's writer)."""
    row = await repo.plan_row(conn, ctx, plan_id)
    if row is None:
        raise NotFound("Plan not found.", details={"id": str(plan_id)})
    return (await repo.plan_tree(conn, ctx, plan_id)).plan(plan_base(row))


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


async def milestone_view_on(
    conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID, milestone_id: uuid.UUID
) -> Obj:
    """`milestone_view` on a transaction's connection (an archived milestone included)."""
    row = await repo.one_row(conn, ctx, PlanMilestone, plan_id, milestone_id)
    if row is None:
        raise NotFound("Milestone not found.", details={"id": str(milestone_id)})
    tree = await repo.plan_tree(conn, ctx, plan_id)
    return tree.milestone(tree.milestone_by_id.get(milestone_id) or milestone_base(row))


async def goal_view_on(
    conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID, goal_id: uuid.UUID
) -> Obj:
    """`goal_view` on a transaction's connection (an archived goal included)."""
    row = await repo.one_row(conn, ctx, PlanGoal, plan_id, goal_id)
    if row is None:
        raise NotFound("Goal not found.", details={"id": str(goal_id)})
    tree = await repo.plan_tree(conn, ctx, plan_id)
    return tree.goal(tree.goal_by_id.get(goal_id) or goal_base(row))


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
    return await task_view_on(await session.connection(), ctx, plan_id, task_id)


async def task_view_on(
    conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID, task_id: uuid.UUID
) -> Obj:
    """`task_view` on a transaction's connection."""
    row = await repo.one_row(conn, ctx, PlanTask, plan_id, task_id)
    if row is None:
        raise NotFound("Task not found.", details={"id": str(task_id)})
    return task_dict(row)


async def list_children(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    model: type[Base],
    params: ListParams,
    codec: CursorCodec,
    *,
    include_archived: bool,
    where: Sequence[ColumnElement[bool]] = (),
    sort_columns: Mapping[str, SqlColumn],
) -> tuple[list[Obj], PaginationMeta]:
    await get_scoped(session, Plan, ctx, plan_id)
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
