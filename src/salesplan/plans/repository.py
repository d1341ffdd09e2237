"""SQL of the plans domain. Reads of the hot paths (getPlan, listPlans) are Core selects on the
session's connection returning plain rows: no ORM object is built (architecture.md,
"Performance facts"). Every statement starts from `scoped`."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, Select, select
from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.kit.scoping import scoped
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.plans.render import PlanTree

P = Plan.__table__
M = PlanMilestone.__table__
G = PlanGoal.__table__
T = PlanTask.__table__


def plan_select() -> Select[Any]:
    return select(*P.c)


async def plan_row(conn: AsyncConnection, ctx: Any, plan_id: uuid.UUID) -> Row[Any] | None:
    stmt = scoped(plan_select().where(P.c.id == plan_id), ctx, Plan)
    return (await conn.execute(stmt)).first()


async def child_rows(
    conn: AsyncConnection, ctx: Any, plan_ids: Sequence[uuid.UUID]
) -> tuple[Sequence[Row[Any]], Sequence[Row[Any]], Sequence[Row[Any]]]:
    """Live milestones, goals and tasks of the plans: three statements whatever the size."""
    out = []
    for model, table in ((PlanMilestone, M), (PlanGoal, G), (PlanTask, T)):
        stmt = scoped(
            select(*table.c).where(table.c.plan_id.in_(plan_ids), table.c.archived_at.is_(None)),
            ctx,
            model,
        )
        out.append((await conn.execute(stmt)).all())
    return out[0], out[1], out[2]


async def plan_tree(conn: AsyncConnection, ctx: Any, plan_id: uuid.UUID) -> PlanTree:
    milestones, goals, tasks = await child_rows(conn, ctx, [plan_id])
    return PlanTree(milestones, goals, tasks)


async def plan_trees(
    conn: AsyncConnection, ctx: Any, plan_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, PlanTree]:
    if not plan_ids:
        return {}
    milestones, goals, tasks = await child_rows(conn, ctx, plan_ids)
    grouped: dict[uuid.UUID, tuple[list[Any], list[Any], list[Any]]] = defaultdict(
        lambda: ([], [], [])
    )
    for i, rows in enumerate((milestones, goals, tasks)):
        for r in rows:
            grouped[r.plan_id][i].append(r)
    return {pid: PlanTree(*grouped[pid]) for pid in plan_ids}


async def one_row(
    conn: AsyncConnection, ctx: Any, model: Any, plan_id: uuid.UUID, row_id: uuid.UUID
) -> Row[Any] | None:
    table = model.__table__
    stmt = scoped(
        select(*table.c).where(table.c.id == row_id, table.c.plan_id == plan_id), ctx, model
    )
    return (await conn.execute(stmt)).first()
