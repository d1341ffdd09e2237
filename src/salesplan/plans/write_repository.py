"""SQL of the plans domain's writes: the checks every write shares, the bulk writes (which
announce `PlanChanged` for every plan owning a row they match), and updatePlanTask's
statements on the driver. The reads are in `repository.py`."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Row,
    ScalarSelect,
    Update,
    bindparam,
    case,
    exists,
    func,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from salesplan.kit.clock import utcnow
from salesplan.kit.driver import DriverStatement
from salesplan.kit.repository import table_of
from salesplan.kit.scoping import (
    TenantScope,
    organization_parameter,
    scoped,
    scoped_by_parameter,
)
from salesplan.models.base import Base
from salesplan.models.crm import Account, BuyingGroup, Contact, Opportunity
from salesplan.models.identity import Membership
from salesplan.models.plans import PlanGoal, PlanMilestone, PlanTask
from salesplan.plans.changes import changed
from salesplan.plans.render import TASK_KEYS, wire_attribute
from salesplan.plans.repository import TASK_COLUMNS, P, T, bump

Db = AsyncSession | AsyncConnection
# A plan's child: a milestone, goal or task.
Child = TypeVar("Child", PlanMilestone, PlanGoal, PlanTask)

# --- checks ---------------------------------------------------------------------------------

# Statements built once, run on the driver (kit.driver): in a session's transaction, or in
# the Core write path's (`tasks.update_task`).
_MEMBER = DriverStatement(
    scoped_by_parameter(
        select(Membership.user_id).where(Membership.user_id == bindparam("user_id")), Membership
    )
)
_LIVE_MILESTONE = DriverStatement(
    scoped_by_parameter(
        select(PlanMilestone.id).where(
            PlanMilestone.id == bindparam("milestone_id"),
            PlanMilestone.plan_id == bindparam("plan_id"),
            PlanMilestone.archived_at.is_(None),
        ),
        PlanMilestone,
    )
)


def plan_account(plan_id: uuid.UUID | ColumnElement[uuid.UUID]) -> ScalarSelect[uuid.UUID]:
    """The account of the plan `plan_id` (a scalar subquery): its buying group's or its
    opportunity's; null for a USER plan."""
    return (
        select(func.coalesce(BuyingGroup.account_id, Opportunity.account_id))
        .select_from(
            P.outerjoin(BuyingGroup, BuyingGroup.id == P.c.buying_group_id).outerjoin(
                Opportunity, Opportunity.id == P.c.opportunity_id
            )
        )
        .where(P.c.id == plan_id, organization_parameter(P.c))
        .scalar_subquery()
    )


# Contract §16: an assignee is a user of the organization (seller side) or a live contact of
# the plan's account (buyer side; a USER plan has none).
_ASSIGNABLE = DriverStatement(
    select(
        exists(
            scoped_by_parameter(
                select(Membership.id).where(Membership.user_id == bindparam("assignee_id")),
                Membership,
            )
        ),
        exists(
            scoped_by_parameter(
                select(Contact.id).where(
                    Contact.id == bindparam("assignee_id"),
                    Contact.archived_at.is_(None),
                    Contact.account_id == plan_account(bindparam("plan_id")),
                ),
                Contact,
            )
        ),
    )
)


async def is_assignable(
    db: Db, ctx: TenantScope, plan_id: uuid.UUID, assignee_id: uuid.UUID
) -> bool:
    params = {
        "assignee_id": assignee_id,
        "plan_id": plan_id,
        "organization_id": ctx.organization_id,
    }
    row = await _ASSIGNABLE.fetchrow(db, params)
    return row is not None and (bool(row[0]) or bool(row[1]))


async def account_contact_ids(
    session: AsyncSession, ctx: TenantScope, plan_id: uuid.UUID, ids: Collection[uuid.UUID]
) -> set[uuid.UUID]:
    """Which of `ids` are live contacts of the plan's account."""
    stmt = scoped(
        select(Contact.id).where(
            Contact.id.in_(ids),
            Contact.archived_at.is_(None),
            Contact.account_id == plan_account(bindparam("plan_id")),
        ),
        ctx,
        Contact,
    )
    params = {"plan_id": plan_id, "organization_id": ctx.organization_id}
    return set((await session.execute(stmt, params)).scalars())


async def is_member(db: Db, ctx: TenantScope, user_id: uuid.UUID) -> bool:
    params = {"user_id": user_id, "organization_id": ctx.organization_id}
    return await _MEMBER.fetchrow(db, params) is not None


async def is_live_milestone(
    db: Db, ctx: TenantScope, plan_id: uuid.UUID, milestone_id: uuid.UUID
) -> bool:
    params = {
        "milestone_id": milestone_id,
        "plan_id": plan_id,
        "organization_id": ctx.organization_id,
    }
    return await _LIVE_MILESTONE.fetchrow(db, params) is not None


async def child_object(
    session: AsyncSession,
    ctx: TenantScope,
    model: type[Child],
    plan_id: uuid.UUID,
    row_id: uuid.UUID,
) -> Child | None:
    """The plan's milestone, goal or task `row_id` (an ORM object), or None."""
    stmt = scoped(select(model).where(model.id == row_id, model.plan_id == plan_id), ctx, model)
    return (await session.execute(stmt)).scalar_one_or_none()


async def existing_ids(
    session: AsyncSession,
    ctx: TenantScope,
    model: type[Base],
    column: InstrumentedAttribute[uuid.UUID],
    ids: Collection[uuid.UUID],
) -> set[uuid.UUID]:
    """Which of `ids` (values of `column`) name rows of `model` in the organization."""
    stmt = scoped(select(column).where(column.in_(ids)), ctx, model)
    return set((await session.execute(stmt)).scalars())


async def is_live(
    session: AsyncSession,
    ctx: TenantScope,
    model: type[Account] | type[BuyingGroup] | type[Opportunity],
    row_id: uuid.UUID,
) -> bool:
    """Whether `model` (an account, buying group or opportunity) has a live row `row_id`."""
    stmt = scoped(
        select(model.id).where(model.id == row_id, model.archived_at.is_(None)), ctx, model
    )
    return (await session.execute(stmt)).first() is not None


async def default_group_id(
    session: AsyncSession, ctx: TenantScope, account_id: uuid.UUID
) -> uuid.UUID | None:
    """The live default buying group of the account (where ACCOUNT plans are kept)."""
    stmt = scoped(
        select(BuyingGroup.id).where(
            BuyingGroup.account_id == account_id,
            BuyingGroup.is_default.is_(True),
            BuyingGroup.archived_at.is_(None),
        ),
        ctx,
        BuyingGroup,
    )
    found: uuid.UUID | None = (await session.execute(stmt)).scalar_one_or_none()
    return found


# --- milestones and goals -------------------------------------------------------------------


async def last_sort_index(
    session: AsyncSession, ctx: TenantScope, plan_id: uuid.UUID
) -> int | None:
    stmt = scoped(
        select(func.max(PlanMilestone.sort_index)).where(
            PlanMilestone.plan_id == plan_id, PlanMilestone.archived_at.is_(None)
        ),
        ctx,
        PlanMilestone,
    )
    last = (await session.execute(stmt)).scalar_one_or_none()
    return None if last is None else int(last)


async def live_milestones(
    session: AsyncSession, ctx: TenantScope, plan_id: uuid.UUID
) -> dict[uuid.UUID, PlanMilestone]:
    """The plan's live milestones (ORM objects) by id."""
    stmt = scoped(
        select(PlanMilestone).where(
            PlanMilestone.plan_id == plan_id, PlanMilestone.archived_at.is_(None)
        ),
        ctx,
        PlanMilestone,
    )
    return {m.id: m for m in (await session.execute(stmt)).scalars()}


async def goal_link_rows(
    session: AsyncSession, ctx: TenantScope, plan_id: uuid.UUID, *, archived: bool
) -> Sequence[Row[uuid.UUID, uuid.UUID | None, datetime | None]]:
    """(id, parent_goal_id, archived_at) of the plan's live goals, or of its archived ones."""
    cond = PlanGoal.archived_at.is_not(None) if archived else PlanGoal.archived_at.is_(None)
    stmt = scoped(
        select(PlanGoal.id, PlanGoal.parent_goal_id, PlanGoal.archived_at).where(
            PlanGoal.plan_id == plan_id, cond
        ),
        ctx,
        PlanGoal,
    )
    return (await session.execute(stmt)).all()


# --- bulk writes ----------------------------------------------------------------------------


async def update_children(
    session: AsyncSession,
    model: type[PlanMilestone] | type[PlanGoal] | type[PlanTask],
    where: Sequence[ColumnElement[bool]],
    values: Mapping[str, object],
) -> None:
    """UPDATE `model` (PlanMilestone, PlanGoal or PlanTask) SET `values` WHERE `where`, in
    one statement, announcing every plan owning a row it matches. The owners are stamped
    (`updated_at`, as every write to a plan's content does) first, in one statement that
    answers them: their rows locked in the order every plan write takes its locks (the plan,
    then its rows)."""
    table = table_of(model)
    owned = select(table.c.plan_id).where(*where).distinct()
    owners = update(P).where(P.c.id.in_(owned)).values(updated_at=utcnow()).returning(P.c.id)
    for plan_id in (await session.execute(owners)).scalars():
        changed(session, plan_id)
    # Through the ORM: the session's objects of the rows it matches follow it.
    await session.execute(update(model).where(*where).values(dict(values)))


async def update_plans(
    session: AsyncSession, where: Sequence[ColumnElement[bool]], values: Mapping[str, object]
) -> None:
    """UPDATE plans SET `values` WHERE `where`, announcing every plan it matches."""
    statement = update(P).where(*where).values(dict(values)).returning(P.c.id)
    for plan_id in (await session.execute(statement)).scalars():
        changed(session, plan_id)


async def set_goals_archived(
    session: AsyncSession, goal_ids: Sequence[uuid.UUID], archived_at: datetime | None
) -> None:
    """One statement for a whole subtree (the ids come from the plan's scoped goal links)."""
    if goal_ids:
        await update_children(
            session, PlanGoal, [PlanGoal.id.in_(goal_ids)], {"archived_at": archived_at}
        )


# --- updatePlanTask: the hot write, in Core on the driver (plans/tasks.py) -------------------

_IDS: dict[str, BindParameter[uuid.UUID]] = {
    "plan_id": bindparam("plan_id"),
    "task_id": bindparam("task_id"),
    "organization_id": bindparam("organization_id"),
}

# The task named in the path, of that plan and the organization.
_THE_TASK = (
    (T.c.id == _IDS["task_id"]) & (T.c.plan_id == _IDS["plan_id"]) & organization_parameter(T.c)
)
_THE_PLAN = (P.c.id == _IDS["plan_id"]) & organization_parameter(P.c)

# The plan locked (a row lock until the transaction ends, as `live_plan`'s FOR UPDATE: writes to
# one plan's content run one after the other) and its updated_at stamped, in one statement (as
# `checks.plan_written` does on the ORM path). Its version moves with the `PlanUpdated` the
# write emits (`changes.bump_versions`, before COMMIT).
LOCK_AND_STAMP = DriverStatement(
    update(P)
    .where(_THE_PLAN)
    .values(updated_at=bindparam("new_updated_at"))
    .returning(P.c.archived_at)
)

TASK_EXISTS = DriverStatement(select(T.c.id).where(_THE_TASK))


@functools.lru_cache(maxsize=128)
def task_update(keys: frozenset[str]) -> DriverStatement:
    """UPDATE of the task setting `keys` (TaskUpdate's properties that were sent) and
    `updated_at`, answering the task's wire columns: one statement per set of keys, built
    once. `completed_at` follows `completed` from the row's own current value: kept when
    `completed` does not change, else the new value (now, or null when reopened)."""
    values: dict[ColumnElement[object], ColumnElement[object]] = {
        T.c[k]: bindparam(f"new_{k}", type_=T.c[k].type) for k in keys
    }
    if "completed" in keys:
        values[T.c.completed_at] = case(
            (
                T.c.completed == bindparam("new_completed", type_=T.c.completed.type),
                T.c.completed_at,
            ),
            else_=bindparam("new_completed_at", type_=T.c.completed_at.type),
        )
    values[T.c.updated_at] = bindparam("new_updated_at", type_=T.c.updated_at.type)
    return DriverStatement(update(T).where(_THE_TASK).values(values).returning(*TASK_COLUMNS))


@functools.lru_cache(maxsize=128)
def task_update_at_once(keys: frozenset[str]) -> DriverStatement:
    """`task_update` with the plan's lock and bump in the same statement (PostgreSQL): the
    whole unit of work of updatePlanTask, `PlanUpdated`'s bump (`bump`, the statement of
    `changes.bump_versions`) included, for a write no other handler follows:

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
    locked = select(P.c.id, P.c.archived_at).where(_THE_PLAN).with_for_update().cte("locked")
    live = select(locked.c.id).where(locked.c.archived_at.is_(None)).scalar_subquery()
    update_task = task_update(keys).statement
    assert isinstance(update_task, Update)
    written = update_task.where(T.c.plan_id == live).cte("written")
    bumped = bump(select(written.c.plan_id), bindparam("new_updated_at")).cte("bumped")
    columns = [written.c[wire_attribute(key)] for key in TASK_KEYS]
    return DriverStatement(select(*columns).add_cte(bumped))
