"""SQL of the plans domain: the reads (this module) and the writes (`write_repository.py`).

Reads of the hot paths (getPlan, listPlans) are Core selects returning plain rows: no ORM object
is built (architecture.md, "Performance facts"). Every statement starts from `scoped` (or
`scoped_by_parameter` for a statement built once)."""

from __future__ import annotations

import functools
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from sqlalchemy import (
    ColumnElement,
    DateTime,
    Select,
    SQLColumnExpression,
    Table,
    Update,
    bindparam,
    or_,
    select,
    type_coerce,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.kit.driver import DriverStatement
from salesplan.kit.pagination import CursorCodec, ListParams, paginate
from salesplan.kit.repository import table_of
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import (
    AnyRow,
    AnySelect,
    SqlColumn,
    TenantScope,
    scoped,
    scoped_by_parameter,
)
from salesplan.kit.search import contains_ci
from salesplan.models.base import Base
from salesplan.models.crm import BuyingGroup, Opportunity
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.plans.render import (
    GOAL_KEYS,
    MILESTONE_KEYS,
    PLAN_KEYS,
    TASK_KEYS,
    PlanTree,
    wire_attribute,
)

P = table_of(Plan)
M = table_of(PlanMilestone)
G = table_of(PlanGoal)
T = table_of(PlanTask)


_PLAIN_DATETIME = DateTime(timezone=True)


def wire_columns(table: Table, keys: Sequence[str]) -> list[SQLColumnExpression[object]]:
    """The table's columns in wire order. Date-times skip the UTCDateTime decorator: asyncpg
    already answers aware UTC values and the renderer reads SQLite's naive ones as UTC."""
    columns: list[SQLColumnExpression[object]] = []
    for key in keys:
        column = table.c[wire_attribute(key)]
        if isinstance(column.type, type(P.c.created_at.type)):
            columns.append(type_coerce(column, _PLAIN_DATETIME).label(column.name))
        else:
            columns.append(column)
    return columns


PLAN_COLUMNS = wire_columns(P, PLAN_KEYS)
MILESTONE_COLUMNS = wire_columns(M, MILESTONE_KEYS)
GOAL_COLUMNS = wire_columns(G, GOAL_KEYS)
TASK_COLUMNS = wire_columns(T, TASK_KEYS)
COLUMNS: dict[type[Base], list[SQLColumnExpression[object]]] = {
    Plan: PLAN_COLUMNS,
    PlanMilestone: MILESTONE_COLUMNS,
    PlanGoal: GOAL_COLUMNS,
    PlanTask: TASK_COLUMNS,
}

# The sortable columns of the lists (`list_params`' names → columns).
PLAN_SORT = {"createdAt": P.c.created_at, "updatedAt": P.c.updated_at, "name": P.c.name}
MILESTONE_SORT = {
    "sortIndex": M.c.sort_index,
    "createdAt": M.c.created_at,
    "updatedAt": M.c.updated_at,
}
GOAL_SORT = {"createdAt": G.c.created_at, "updatedAt": G.c.updated_at, "title": G.c.title}
TASK_SORT = {"createdAt": T.c.created_at, "updatedAt": T.c.updated_at, "title": T.c.title}


def plan_select() -> AnySelect:
    return select(*PLAN_COLUMNS)


async def plan_row(conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID) -> AnyRow | None:
    stmt = scoped(plan_select().where(P.c.id == plan_id), ctx, Plan)
    return (await conn.execute(stmt)).first()


def _of_plans(table: Table, plan_ids: Sequence[uuid.UUID]) -> ColumnElement[bool]:
    # One plan (getPlan) binds one parameter: cheaper to compile than an expanding IN.
    if len(plan_ids) == 1:
        return table.c.plan_id == plan_ids[0]
    return table.c.plan_id.in_(plan_ids)


_CHILDREN = ((PlanMilestone, M), (PlanGoal, G), (PlanTask, T))


async def child_rows(
    conn: AsyncConnection, ctx: TenantScope, plan_ids: Sequence[uuid.UUID]
) -> tuple[Sequence[AnyRow], Sequence[AnyRow], Sequence[AnyRow]]:
    """Live milestones, goals and tasks of the plans, oldest first: three statements whatever
    the size."""
    out = []
    for model, table in _CHILDREN:
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
    grouped: dict[uuid.UUID, list[list[AnyRow]]] = defaultdict(lambda: [[], [], []])
    for i, rows in enumerate((milestones, goals, tasks)):
        for r in rows:
            grouped[r.plan_id][i].append(r)
    return {pid: PlanTree(*grouped[pid][:3]) for pid in plan_ids}


async def one_row(
    conn: AsyncConnection,
    ctx: TenantScope,
    model: type[Base],
    plan_id: uuid.UUID,
    row_id: uuid.UUID,
) -> AnyRow | None:
    table = table_of(model)
    stmt = scoped(
        select(*COLUMNS[model]).where(table.c.id == row_id, table.c.plan_id == plan_id),
        ctx,
        model,
    )
    return (await conn.execute(stmt)).first()


# --- versions (getPlan's ETag) ------------------------------------------------------------

_VERSION = scoped_by_parameter(select(P.c.version).where(P.c.id == bindparam("plan_id")), Plan)
_PLAN_ROW = scoped_by_parameter(
    select(*PLAN_COLUMNS, P.c.version).where(P.c.id == bindparam("plan_id")), Plan
)


NEXT_VERSION = P.c.version + 1


def bump(ids: Sequence[object] | Select[uuid.UUID], updated_at: object = P.c.updated_at) -> Update:
    """UPDATE plans SET version = version + 1 for `ids` (a collection or a subquery). The
    plans' `updated_at` is kept (the writes stamp it when they run, so that what they render
    shows it), unless `updated_at` gives the new value."""
    return update(P).where(P.c.id.in_(ids)).values(version=NEXT_VERSION, updated_at=updated_at)


# The bump of one plan, run by `changes.bump_versions` on the transaction's connection.
_BUMP = DriverStatement(bump([bindparam("plan_id", type_=P.c.id.type)]))


async def bump_versions(conn: AsyncConnection, plan_ids: Sequence[uuid.UUID]) -> None:
    """`bump` of each plan, in the order given (one round trip)."""
    rows = [{"plan_id": plan_id} for plan_id in plan_ids]
    if len(rows) == 1:
        await _BUMP.fetchval(conn, rows[0])
    else:
        await _BUMP.executemany(conn, rows)


async def plan_version(conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID) -> int | None:
    """The plan's version in the caller's organization (None: not found there). One statement
    on the primary key."""
    params = {"plan_id": plan_id, "organization_id": ctx.organization_id}
    found: int | None = (await conn.execute(_VERSION, params)).scalar_one_or_none()
    return found


async def plan_row_with_version(
    conn: AsyncConnection, ctx: TenantScope, plan_id: uuid.UUID
) -> AnyRow | None:
    """The plan's wire columns and its version (getPlan's first statement)."""
    params = {"plan_id": plan_id, "organization_id": ctx.organization_id}
    return (await conn.execute(_PLAN_ROW, params)).first()


# --- lists ----------------------------------------------------------------------------------


@functools.cache
def _list_query(
    *,
    archived_only: bool,
    include_archived: bool,
    search: bool,
    entity_type: bool,
    on_account: bool,
    entity_id: bool,
    account_id: bool,
    updated_since: bool = False,
) -> AnySelect:
    """listPlans' statement for one combination of filters, built once: the organization and
    the filters' values are its parameters (see `list_plans`)."""
    stmt = scoped_by_parameter(plan_select(), Plan)
    if archived_only:
        stmt = stmt.where(P.c.archived_at.is_not(None))
    elif not include_archived:
        stmt = stmt.where(P.c.archived_at.is_(None))
    if updated_since:
        stmt = stmt.where(P.c.updated_at >= bindparam("updated_since", type_=P.c.updated_at.type))
    if search:
        stmt = stmt.where(contains_ci(P.c.name, bindparam("search", type_=P.c.name.type)))

    def account_groups(name: str) -> Select[uuid.UUID]:
        groups = select(BuyingGroup.id).where(BuyingGroup.account_id == bindparam(name))
        return scoped_by_parameter(groups, BuyingGroup)

    def account_opportunities(name: str) -> Select[uuid.UUID]:
        deals = select(Opportunity.id).where(Opportunity.account_id == bindparam(name))
        return scoped_by_parameter(deals, Opportunity)

    if on_account:
        # ACCOUNT plans are stored on the account's buying groups.
        stmt = stmt.where(P.c.entity_type == "BUYING_GROUP")
        for name, given in (("entity_id", entity_id), ("account_id", account_id)):
            if given:
                stmt = stmt.where(P.c.buying_group_id.in_(account_groups(name)))
        return stmt
    if entity_type:
        stmt = stmt.where(P.c.entity_type == bindparam("entity_type", type_=P.c.entity_type.type))
    if entity_id:
        stmt = stmt.where(P.c.entity_id == bindparam("entity_id", type_=P.c.entity_id.type))
    if account_id:
        stmt = stmt.where(
            or_(
                P.c.buying_group_id.in_(account_groups("account_id")),
                P.c.opportunity_id.in_(account_opportunities("account_id")),
            )
        )
    return stmt


async def plan_page(
    conn: AsyncConnection,
    params: ListParams,
    codec: CursorCodec,
    values: dict[str, object],
    **shape: bool,
) -> tuple[list[Any], PaginationMeta]:
    """One page of listPlans: the statement of the filters' `shape` (built once), run with
    `values` (the organization's id and the filters' values)."""
    return await paginate(
        conn,
        _list_query(**shape),
        params,
        sort_columns=PLAN_SORT,
        id_column=P.c.id,
        codec=codec,
        bound=values,
    )


def child_filters(
    model: type[Base],
    *,
    milestone_id: uuid.UUID | None = None,
    completed: bool | None = None,
    assigned_to_id: uuid.UUID | None = None,
) -> list[ColumnElement[bool]]:
    """listPlanGoals' and listPlanTasks' optional filters."""
    table = table_of(model)
    where: list[ColumnElement[bool]] = []
    if completed is not None:
        where.append(table.c.completed.is_(completed))
    if milestone_id is not None:
        where.append(table.c.milestone_id == milestone_id)
    if assigned_to_id is not None:
        where.append(table.c.assigned_to_id == assigned_to_id)
    return where


async def child_page(
    conn: AsyncConnection,
    ctx: TenantScope,
    plan_id: uuid.UUID,
    model: type[Base],
    params: ListParams,
    codec: CursorCodec,
    *,
    include_archived: bool,
    where: Sequence[ColumnElement[bool]],
    sort_columns: Mapping[str, SqlColumn],
) -> tuple[list[Any], PaginationMeta]:
    """One page of a plan's milestones, goals or tasks."""
    table = table_of(model)
    stmt = scoped(select(*COLUMNS[model]).where(table.c.plan_id == plan_id, *where), ctx, model)
    if not include_archived:
        stmt = stmt.where(table.c.archived_at.is_(None))
    if params.search and "title" in table.c:
        stmt = stmt.where(contains_ci(table.c.title, params.search))
    return await paginate(
        conn, stmt, params, sort_columns=sort_columns, id_column=table.c.id, codec=codec
    )


async def my_task_page(
    session: AsyncSession,
    ctx: TenantScope,
    user_id: uuid.UUID | None,
    params: ListParams,
    codec: CursorCodec,
    *,
    completed: bool | None,
    plan_id: uuid.UUID | None,
    due_before: date | None,
) -> tuple[list[Any], PaginationMeta]:
    """One page of listMyTasks: `user_id`'s live tasks in live plans. The plan is checked per
    task (EXISTS on its primary key) rather than the tasks found from a list of the live plans:
    with its statistics SQLite otherwise walked every plan's tasks and sorted them (700 ms at
    50,000 tasks); so the page stays a range of (organization, assignee, sort key, id)."""
    live_plan = scoped(
        select(P.c.id).where(P.c.id == T.c.plan_id, P.c.archived_at.is_(None)), ctx, Plan
    )
    stmt = scoped(
        select(*TASK_COLUMNS).where(
            T.c.assigned_to_id == user_id,
            T.c.archived_at.is_(None),
            live_plan.exists(),
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
    return await paginate(
        await session.connection(),
        stmt,
        params,
        sort_columns=TASK_SORT,
        id_column=T.c.id,
        codec=codec,
    )
