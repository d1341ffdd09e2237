"""SQL of the plans domain. Reads of the hot paths (getPlan, listPlans) are Core selects on the
session's connection returning plain rows: no ORM object is built (architecture.md,
"Performance facts"). Every statement starts from `scoped`."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import DateTime, Row, Select, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.kit.scoping import TenantScope, scoped
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.plans.render import (
    GOAL_KEYS,
    MILESTONE_KEYS,
    PLAN_KEYS,
    TASK_KEYS,
    PlanTree,
    wire_attribute,
)

P = Plan.__table__
M = PlanMilestone.__table__
G = PlanGoal.__table__
T = PlanTask.__table__


_PLAIN_DATETIME = DateTime(timezone=True)


def wire_columns(table: Any, keys: Sequence[str]) -> list[Any]:
    """The table's columns in wire order. Date-times skip the UTCDateTime decorator: asyncpg
    already answers aware UTC values and the renderer reads SQLite's naive ones as UTC."""
    columns = []
    for key in keys:
        column = table.c[wire_attribute(key)]
        if isinstance(column.type, type(Plan.__table__.c.created_at.type)):
            column = type_coerce(column, _PLAIN_DATETIME).label(column.name)
        columns.append(column)
    return columns


PLAN_COLUMNS = wire_columns(P, PLAN_KEYS)
MILESTONE_COLUMNS = wire_columns(M, MILESTONE_KEYS)
GOAL_COLUMNS = wire_columns(G, GOAL_KEYS)
TASK_COLUMNS = wire_columns(T, TASK_KEYS)
COLUMNS = {Plan: PLAN_COLUMNS, PlanMilestone: MILESTONE_COLUMNS, PlanGoal: GOAL_COLUMNS}
COLUMNS[PlanTask] = TASK_COLUMNS


def plan_select() -> Select[Any]:
    return select(*PLAN_COLUMNS)


async def plan_row(conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID) -> Row[Any] | None:
    stmt = scoped(plan_select().where(P.c.id == plan_id), ctx, Plan)
    return (await conn.execute(stmt)).first()


def _of_plans(table: Any, plan_ids: Sequence[uuid.UUID]) -> Any:
    # One plan (getPlan) binds one parameter: cheaper to compile than an expanding IN.
    if len(plan_ids) == 1:
        return table.c.plan_id == plan_ids[0]
    return table.c.plan_id.in_(plan_ids)


async def child_rows(
    conn: AsyncConnection, ctx: TenantScope, plan_ids: Sequence[uuid.UUID]
) -> tuple[Sequence[Row[Any]], Sequence[Row[Any]], Sequence[Row[Any]]]:
    """Live milestones, goals and tasks of the plans, oldest first: three statements whatever
    the size."""
    out = []
    for model, table in ((PlanMilestone, M), (PlanGoal, G), (PlanTask, T)):
        stmt = scoped(
            select(*COLUMNS[model]).where(
                _of_plans(table, plan_ids), table.c.archived_at.is_(None)
            ),
            ctx,
            model,
        ).order_by(table.c.created_at, table.c.id)
        out.append((await conn.execute(stmt)).all())
    return out[0], out[1], out[2]


async def plan_tree(conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID) -> PlanTree:
    milestones, goals, tasks = await child_rows(conn, ctx, [plan_id])
    return PlanTree(milestones, goals, tasks)


async def plan_trees(
    conn: AsyncConnection, ctx: TenantScope, plan_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, PlanTree]:
    if not plan_ids:
        return {}
    milestones, goals, tasks = await child_rows(conn, ctx, plan_ids)
    grouped: dict[uuid.UUID, list[list[Any]]] = defaultdict(lambda: [[], [], []])
    for i, rows in enumerate((milestones, goals, tasks)):
        for r in rows:
            grouped[r.plan_id][i].append(r)
    return {pid: PlanTree(*grouped[pid][:3]) for pid in plan_ids}


async def one_row(
    conn: AsyncConnection, ctx: TenantScope, model: Any, plan_id: uuid.UUID, row_id: uuid.UUID
) -> Row[Any] | None:
    table = model.__table__
    stmt = scoped(
        select(*COLUMNS[model]).where(table.c.id == row_id, table.c.plan_id == plan_id),
        ctx,
        model,
    )
    return (await conn.execute(stmt)).first()
