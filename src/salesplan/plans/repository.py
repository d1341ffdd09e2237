"""SQL of the plans domain. Reads of the hot paths (getPlan, listPlans) are Core selects on the
session's connection returning plain rows: no ORM object is built (architecture.md,
"Performance facts"). Every statement starts from `scoped`."""

from __future__ import annotations

import functools
import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import DateTime, Row, Select, bindparam, case, select, type_coerce, update
from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.kit.driver import DriverStatement
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


# --- plan versions ---------------------------------------------------------------------------

_PLAN: Any = P
_TASK: Any = T

NEXT_VERSION = P.c.version + 1


def bump(ids: Any) -> Any:
    """UPDATE plans SET version = version + 1 for `ids` (a collection or a subquery)."""
    return update(_PLAN).where(P.c.id.in_(ids)).values(version=NEXT_VERSION)


# --- updatePlanTask: the hot write, in Core on the driver (plans/tasks.py) -------------------

_IDS: dict[str, Any] = {
    "plan_id": bindparam("plan_id"),
    "task_id": bindparam("task_id"),
    "organization_id": bindparam("organization_id"),
}

# The task named in the path, of that plan and the organization.
_THE_TASK = (
    (T.c.id == _IDS["task_id"])
    & (T.c.plan_id == _IDS["plan_id"])
    & (T.c.organization_id == _IDS["organization_id"])
)

# The plan locked (a row lock until the transaction ends, as `live_plan`'s FOR UPDATE: writes to
# one plan's content run one after the other), its version bumped and its updated_at stamped
# (as `bump` does for every child write), in one statement. The bump comes before the
# write it accounts for, as versioning.py's do; a failed write rolls both back.
LOCK_AND_BUMP = DriverStatement(
    update(_PLAN)
    .where(P.c.id == _IDS["plan_id"], P.c.organization_id == _IDS["organization_id"])
    .values(version=NEXT_VERSION, updated_at=bindparam("new_updated_at"))
    .returning(P.c.archived_at)
)

TASK_EXISTS = DriverStatement(select(T.c.id).where(_THE_TASK))


@functools.lru_cache(maxsize=128)
def task_update(keys: frozenset[str]) -> DriverStatement:
    """UPDATE of the task setting `keys` (TaskUpdate's properties that were sent) and
    `updated_at`, answering the task's wire columns: one statement per set of keys, built
    once. `completed_at` follows `completed` from the row's own current value: kept when
    `completed` does not change, else the new value (now, or null when reopened)."""
    values: dict[Any, Any] = {T.c[k]: bindparam(f"new_{k}", type_=T.c[k].type) for k in keys}
    if "completed" in keys:
        values[T.c.completed_at] = case(
            (
                T.c.completed == bindparam("new_completed", type_=T.c.completed.type),
                T.c.completed_at,
            ),
            else_=bindparam("new_completed_at", type_=T.c.completed_at.type),
        )
    values[T.c.updated_at] = bindparam("new_updated_at", type_=T.c.updated_at.type)
    return DriverStatement(update(_TASK).where(_THE_TASK).values(values).returning(*TASK_COLUMNS))


@functools.lru_cache(maxsize=128)
def task_update_at_once(keys: frozenset[str]) -> DriverStatement:
    """`_task_update` with the plan's lock and bump in the same statement (PostgreSQL):

        WITH locked AS (SELECT id, archived_at FROM plans WHERE <the plan> FOR UPDATE),
             written AS (UPDATE plan_tasks SET … WHERE <the task>
                         AND plan_id = (SELECT id FROM locked WHERE archived_at IS NULL)
                         RETURNING <wire columns>),
             bumped AS (UPDATE plans SET version = version + 1, updated_at = …
                        WHERE id IN (SELECT plan_id FROM written))
        SELECT <wire columns> FROM written

    Locks in the order every plan write takes them: the task's row is locked only after the
    filter naming `locked` passed, so after the plan's lock. The plan is bumped only when
    the task was written (the data-modifying CTEs run to completion with the statement);
    no row answered means nothing was written. The task's SET expressions read its latest
    committed version (READ COMMITTED re-reads a row updated while the statement waited)."""
    locked = (
        select(P.c.id, P.c.archived_at)
        .where(P.c.id == _IDS["plan_id"], P.c.organization_id == _IDS["organization_id"])
        .with_for_update()
        .cte("locked")
    )
    live = select(locked.c.id).where(locked.c.archived_at.is_(None)).scalar_subquery()
    update_task: Any = task_update(keys).statement
    written = update_task.where(T.c.plan_id == live).cte("written")
    bumped = (
        bump(select(written.c.plan_id)).values(updated_at=bindparam("new_updated_at")).cte("bumped")
    )
    columns = [written.c[column.name] for column in TASK_COLUMNS]
    return DriverStatement(select(*columns).add_cte(bumped))
