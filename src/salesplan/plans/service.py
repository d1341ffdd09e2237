"""Plan rules (contract §7 "plans"): entity resolution, nested creation in one transaction,
milestone order and completion dates, goal nesting and derived progress, task completion,
archiving. Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.dependencies import check_user_backed
from salesplan.auth.principal import RequestContext
from salesplan.errors import NotFound, Unprocessable, ValidationFailed
from salesplan.kit.clock import today, utcnow
from salesplan.kit.pagination import CursorCodec, ListParams, contains_ci, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped, scoped
from salesplan.models.crm import Account, BuyingGroup, Contact, Opportunity
from salesplan.models.identity import Membership
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import repository as repo
from salesplan.plans.render import (
    EMPTY,
    PlanTree,
    goal_base,
    milestone_base,
    plan_base,
    task_dict,
)
from salesplan.plans.schemas import (
    GoalCreate,
    GoalFields,
    GoalSeed,
    GoalUpdate,
    MilestoneCreate,
    MilestoneReorder,
    MilestoneUpdate,
    PlanCreate,
    PlanUpdate,
    TaskCreate,
    TaskFields,
    TaskUpdate,
)

MAX_GOAL_DEPTH = 5
INCLUDABLE = ("milestones", "goals", "tasks")


def _missing(field: str, what: str, value: Any) -> Unprocessable:
    return Unprocessable(
        f"{what} {value} does not exist in this organization.",
        details={"field": field, "id": str(value)},
    )


def _no_nulls(sent: dict[str, Any], fields: Iterable[str]) -> None:
    """PATCH: a property that cannot be null may be left out, not sent as null."""
    from pydantic.alias_generators import to_camel

    for name in fields:
        if name in sent and sent[name] is None:
            raise ValidationFailed.at(["body", to_camel(name)], "This property cannot be null.")


# --- entity resolution -----------------------------------------------------------------------


@dataclass
class Attachment:
    entity_type: str
    entity_id: uuid.UUID
    opportunity_id: uuid.UUID | None = None
    buying_group_id: uuid.UUID | None = None
    user_id: uuid.UUID | None = None


async def _is_member(session: AsyncSession, ctx: RequestContext, user_id: uuid.UUID) -> bool:
    stmt = scoped(select(Membership.user_id).where(Membership.user_id == user_id), ctx, Membership)
    return (await session.execute(stmt)).first() is not None


async def resolve_entity(
    session: AsyncSession, ctx: RequestContext, entity_type: str, entity_id: uuid.UUID | None
) -> Attachment:
    if entity_type == "USER":
        if entity_id is None:
            check_user_backed(ctx.principal)
            assert ctx.user_id is not None
            return Attachment("USER", ctx.user_id, user_id=ctx.user_id)
        if not await _is_member(session, ctx, entity_id):
            raise _missing("entityId", "User", entity_id)
        return Attachment("USER", entity_id, user_id=entity_id)
    if entity_id is None:
        raise ValidationFailed.at(["body", "entityId"], "entityId is required for this entityType.")
    if entity_type == "ACCOUNT":
        account = (
            await session.execute(
                scoped(
                    select(Account.id).where(
                        Account.id == entity_id, Account.archived_at.is_(None)
                    ),
                    ctx,
                    Account,
                )
            )
        ).first()
        if account is None:
            raise _missing("entityId", "Account", entity_id)
        group_id = (
            await session.execute(
                scoped(
                    select(BuyingGroup.id).where(
                        BuyingGroup.account_id == entity_id,
                        BuyingGroup.is_default.is_(True),
                        BuyingGroup.archived_at.is_(None),
                    ),
                    ctx,
                    BuyingGroup,
                )
            )
        ).scalar_one_or_none()
        if group_id is None:
            raise Unprocessable(
                "The account has no default buying group.",
                details={"field": "entityId", "id": str(entity_id)},
            )
        return Attachment("BUYING_GROUP", group_id, buying_group_id=group_id)
    model: Any = BuyingGroup if entity_type == "BUYING_GROUP" else Opportunity
    found = (
        await session.execute(
            scoped(
                select(model.id).where(model.id == entity_id, model.archived_at.is_(None)),
                ctx,
                model,
            )
        )
    ).first()
    if found is None:
        raise _missing("entityId", model.__display_name__, entity_id)
    if entity_type == "BUYING_GROUP":
        return Attachment("BUYING_GROUP", entity_id, buying_group_id=entity_id)
    return Attachment("OPPORTUNITY", entity_id, opportunity_id=entity_id)


def _attach(plan: Plan, a: Attachment) -> None:
    plan.entity_type = a.entity_type
    plan.entity_id = a.entity_id
    plan.opportunity_id = a.opportunity_id
    plan.buying_group_id = a.buying_group_id
    plan.user_id = a.user_id


# --- loading ---------------------------------------------------------------------------------


async def find_plan(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> Plan:
    return await get_scoped(session, Plan, ctx, plan_id)


async def _live_plan(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    child: tuple[Any, uuid.UUID] | None = None,
) -> Plan:
    """The plan whose children are written: an archived plan is read-only until restored.
    With `child` = (model, id), that child must exist too, and that is checked first: contract
    §2 puts existence (404) before semantics (422)."""
    # Locked until the transaction ends: writes to one plan's content run one after the other,
    # so that a reorder, an archive or a nesting check sees the others' committed result.
    plan = await get_scoped(session, Plan, ctx, plan_id, for_update=True)
    if child is not None:
        await _child(session, ctx, child[0], plan_id, child[1])
    if plan.archived_at is not None:
        raise Unprocessable(
            "The plan is archived; restore it before changing its content.",
            details={"planId": str(plan_id), "reason": "plan_archived"},
        )
    return plan


async def _child(
    session: AsyncSession, ctx: RequestContext, model: Any, plan_id: uuid.UUID, row_id: uuid.UUID
) -> Any:
    stmt = scoped(select(model).where(model.id == row_id, model.plan_id == plan_id), ctx, model)
    row = (await session.execute(stmt)).scalar_one_or_none()
    if row is None:
        raise NotFound(f"{model.__display_name__} not found.", details={"id": str(row_id)})
    return row


async def _check_milestone(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, milestone_id: uuid.UUID | None
) -> None:
    if milestone_id is None:
        return
    stmt = scoped(
        select(PlanMilestone.id).where(
            PlanMilestone.id == milestone_id,
            PlanMilestone.plan_id == plan_id,
            PlanMilestone.archived_at.is_(None),
        ),
        ctx,
        PlanMilestone,
    )
    if (await session.execute(stmt)).first() is None:
        raise Unprocessable(
            "milestoneId must be a live milestone of this plan.",
            details={"field": "milestoneId", "id": str(milestone_id)},
        )


async def _check_owners(
    session: AsyncSession,
    ctx: RequestContext,
    prospect_ids: Iterable[uuid.UUID] | None,
    subscriber_ids: Iterable[uuid.UUID] | None,
) -> None:
    """Milestone owners exist in this organization: prospect owners are its contacts,
    subscriber owners its users (members). One query per kind, whatever the count."""
    for field, ids, model, column in (
        ("prospectOwnerIds", set(prospect_ids or ()), Contact, Contact.id),
        ("subscriberOwnerIds", set(subscriber_ids or ()), Membership, Membership.user_id),
    ):
        if not ids:
            continue
        stmt = scoped(select(column).where(column.in_(ids)), ctx, model)
        found = set((await session.execute(stmt)).scalars())
        if missing := ids - found:
            raise _missing(field, "Contact" if model is Contact else "User", min(missing, key=str))


async def _check_assignee(
    session: AsyncSession, ctx: RequestContext, user_id: uuid.UUID | None
) -> None:
    if user_id is not None and not await _is_member(session, ctx, user_id):
        raise _missing("assignedToId", "User", user_id)


# --- views (what the routes answer) ----------------------------------------------------------


async def plan_view(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> dict:
    """getPlan: one plan statement and three child statements, whatever the plan's size."""
    conn = await session.connection()
    row = await repo.plan_row(conn, ctx, plan_id)
    if row is None:
        raise NotFound("Plan not found.", details={"id": str(plan_id)})
    return (await repo.plan_tree(conn, ctx, plan_id)).plan(plan_base(row))


async def _tree(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> PlanTree:
    await session.flush()
    return await repo.plan_tree(await session.connection(), ctx, plan_id)


async def milestone_view(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, milestone_id: uuid.UUID
) -> dict:
    tree = await _tree(session, ctx, plan_id)
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
) -> dict:
    tree = await _tree(session, ctx, plan_id)
    found = tree.goal_by_id.get(goal_id)
    if found is None:
        row = await repo.one_row(await session.connection(), ctx, PlanGoal, plan_id, goal_id)
        if row is None:
            raise NotFound("Goal not found.", details={"id": str(goal_id)})
        found = goal_base(row)
    return tree.goal(found)


async def task_view(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, task_id: uuid.UUID
) -> dict:
    await session.flush()
    row = await repo.one_row(await session.connection(), ctx, PlanTask, plan_id, task_id)
    if row is None:
        raise NotFound("Task not found.", details={"id": str(task_id)})
    return task_dict(row)


# --- plans -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanFilters:
    entity_type: str | None = None
    entity_id: uuid.UUID | None = None
    account_id: uuid.UUID | None = None
    include_archived: bool = False
    archived_only: bool = False


INCLUDE_PATTERN = "^({0})(,({0}))*$".format("|".join(INCLUDABLE))


def parse_include(raw: str | None) -> tuple[str, ...]:
    if raw is None or not raw.strip():
        return ()
    parts = tuple(p.strip() for p in raw.split(",") if p.strip())
    bad = [p for p in parts if p not in INCLUDABLE]
    if bad:
        raise ValidationFailed.at(
            ["query", "include"], f"include takes a list of: {', '.join(INCLUDABLE)}."
        )
    return parts


async def list_plans(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    filters: PlanFilters,
    include: Sequence[str],
    codec: CursorCodec,
) -> tuple[list[dict], PaginationMeta]:
    P = repo.P
    stmt = scoped(repo.plan_select(), ctx, Plan)
    if filters.archived_only:
        stmt = stmt.where(P.c.archived_at.is_not(None))
    elif not filters.include_archived:
        stmt = stmt.where(P.c.archived_at.is_(None))
    if params.search:
        stmt = stmt.where(contains_ci(P.c.name, params.search))

    def account_groups(account_id: uuid.UUID) -> Any:
        return scoped(
            select(BuyingGroup.id).where(BuyingGroup.account_id == account_id), ctx, BuyingGroup
        )

    def account_opportunities(account_id: uuid.UUID) -> Any:
        return scoped(
            select(Opportunity.id).where(Opportunity.account_id == account_id), ctx, Opportunity
        )

    if filters.entity_type == "ACCOUNT":
        # ACCOUNT plans are stored on the account's buying groups.
        stmt = stmt.where(P.c.entity_type == "BUYING_GROUP")
        for account_id in {filters.entity_id, filters.account_id} - {None}:
            assert account_id is not None
            stmt = stmt.where(P.c.buying_group_id.in_(account_groups(account_id)))
    else:
        if filters.entity_type is not None:
            stmt = stmt.where(P.c.entity_type == filters.entity_type)
        if filters.entity_id is not None:
            stmt = stmt.where(P.c.entity_id == filters.entity_id)
        if filters.account_id is not None:
            stmt = stmt.where(
                or_(
                    P.c.buying_group_id.in_(account_groups(filters.account_id)),
                    P.c.opportunity_id.in_(account_opportunities(filters.account_id)),
                )
            )
    conn = await session.connection()
    rows, meta = await paginate(
        conn,
        stmt,
        params,
        sort_columns={"createdAt": P.c.created_at, "updatedAt": P.c.updated_at, "name": P.c.name},
        id_column=P.c.id,
        codec=codec,
    )
    trees = await repo.plan_trees(conn, ctx, [r.id for r in rows]) if include else {}
    return [trees.get(r.id, EMPTY).plan(plan_base(r), include) for r in rows], meta


def _goal_row(fields: GoalFields, plan: Plan, **extra: Any) -> PlanGoal:
    data = fields.model_dump(exclude={"child_goals", "milestone_id", "parent_goal_id"})
    return PlanGoal(organization_id=plan.organization_id, plan_id=plan.id, **data, **extra)


def _task_row(fields: TaskFields, plan: Plan, ctx: RequestContext, **extra: Any) -> PlanTask:
    data = fields.model_dump(exclude={"milestone_id"})
    return PlanTask(
        organization_id=plan.organization_id,
        plan_id=plan.id,
        completed_at=utcnow() if data["completed"] else None,
        created_by_id=ctx.user_id,
        **data,
        **extra,
    )


def _milestone_row(fields: MilestoneCreate, plan: Plan, sort_index: int) -> PlanMilestone:
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


def _seed_goals(
    session: AsyncSession,
    plan: Plan,
    seeds: Sequence[GoalSeed],
    *,
    milestone_id: uuid.UUID | None,
    parent: PlanGoal | None,
    level: int,
    location: list[str | int],
) -> None:
    for i, seed in enumerate(seeds):
        if level > MAX_GOAL_DEPTH:
            raise Unprocessable(
                f"Goals nest at most {MAX_GOAL_DEPTH} levels.",
                details={"field": "parentGoalId", "location": [*location, i]},
            )
        goal = _goal_row(
            seed,
            plan,
            id=_new_id(),
            milestone_id=milestone_id,
            parent_goal_id=parent.id if parent else None,
        )
        session.add(goal)
        _seed_goals(
            session,
            plan,
            seed.child_goals or [],
            milestone_id=milestone_id,
            parent=goal,
            level=level + 1,
            location=[*location, i, "childGoals"],
        )


def _new_id() -> uuid.UUID:
    from salesplan.kit.ids import uuid7

    return uuid7()


async def create_plan(session: AsyncSession, ctx: RequestContext, body: PlanCreate) -> uuid.UUID:
    attachment = await resolve_entity(session, ctx, body.entity_type, body.entity_id)
    plan = Plan(
        id=_new_id(),
        organization_id=ctx.organization_id,
        name=body.name,
        description=body.description,
        entity_type=attachment.entity_type,
        entity_id=attachment.entity_id,
    )
    _attach(plan, attachment)
    session.add(plan)
    assignees = {t.assigned_to_id for t in body.tasks or []}
    for seed in body.milestones or []:
        assignees |= {t.assigned_to_id for t in seed.tasks or []}
    for user_id in assignees - {None}:
        await _check_assignee(session, ctx, user_id)
    await _check_owners(
        session,
        ctx,
        [i for seed in body.milestones or [] for i in seed.prospect_owner_ids or []],
        [i for seed in body.milestones or [] for i in seed.subscriber_owner_ids or []],
    )
    # Flushed table by table: without ORM relationships the unit of work does not order
    # inserts by foreign keys.
    await session.flush()
    milestones = []
    for i, seed in enumerate(body.milestones or []):
        milestone = _milestone_row(seed, plan, i)
        milestone.id = _new_id()
        session.add(milestone)
        milestones.append((milestone, seed))
    await session.flush()
    for milestone, seed in milestones:
        _seed_goals(
            session,
            plan,
            seed.goals or [],
            milestone_id=milestone.id,
            parent=None,
            level=1,
            location=["body", "milestones", milestones.index((milestone, seed)), "goals"],
        )
    _seed_goals(
        session,
        plan,
        body.goals or [],
        milestone_id=None,
        parent=None,
        level=1,
        location=["body", "goals"],
    )
    await session.flush()
    for milestone, seed in milestones:
        for t in seed.tasks or []:
            session.add(_task_row(t, plan, ctx, milestone_id=milestone.id))
    for t in body.tasks or []:
        session.add(_task_row(t, plan, ctx))
    await session.flush()
    return plan.id


async def update_plan(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: PlanUpdate
) -> None:
    plan = await find_plan(session, ctx, plan_id)
    sent = body.sent()
    _no_nulls(sent, ("name", "entity_type"))
    if "name" in sent:
        plan.name = sent["name"]
    if "description" in sent:
        plan.description = sent["description"]
    if "entity_type" in sent or "entity_id" in sent:
        entity_type = sent.get("entity_type") or plan.entity_type
        if "entity_id" in sent:
            entity_id = sent["entity_id"]
        elif "entity_type" in sent and sent["entity_type"] != plan.entity_type:
            entity_id = None
        else:
            entity_id = plan.entity_id
        _attach(plan, await resolve_entity(session, ctx, entity_type, entity_id))
    plan.updated_at = utcnow()
    await session.flush()


async def archive_plan(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> None:
    plan = await get_scoped(session, Plan, ctx, plan_id, for_update=True)
    if plan.archived_at is None:
        plan.archived_at = utcnow()
        await session.flush()


async def restore_plan(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> None:
    plan = await get_scoped(session, Plan, ctx, plan_id, for_update=True)
    if plan.archived_at is not None:
        plan.archived_at = None
        plan.updated_at = utcnow()
        await session.flush()


# --- milestones ------------------------------------------------------------------------------


async def _next_sort_index(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> int:
    stmt = scoped(
        select(func.max(PlanMilestone.sort_index)).where(
            PlanMilestone.plan_id == plan_id, PlanMilestone.archived_at.is_(None)
        ),
        ctx,
        PlanMilestone,
    )
    last = (await session.execute(stmt)).scalar_one_or_none()
    return 0 if last is None else int(last) + 1


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
) -> tuple[list[dict], PaginationMeta]:
    await find_plan(session, ctx, plan_id)
    conn = await session.connection()
    table = model.__table__
    stmt = scoped(
        select(*repo.COLUMNS[model]).where(table.c.plan_id == plan_id, *where), ctx, model
    )
    if not include_archived:
        stmt = stmt.where(table.c.archived_at.is_(None))
    if params.search:
        column = table.c.title if "title" in table.c else None
        if column is not None:
            stmt = stmt.where(contains_ci(column, params.search))
    rows, meta = await paginate(
        conn, stmt, params, sort_columns=sort_columns, id_column=table.c.id, codec=codec
    )
    if model is PlanTask:
        return [task_dict(r) for r in rows], meta
    tree = await repo.plan_tree(conn, ctx, plan_id)
    if model is PlanMilestone:
        return [tree.milestone(milestone_base(r)) for r in rows], meta
    return [tree.goal(goal_base(r)) for r in rows], meta


async def create_milestone(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: MilestoneCreate
) -> uuid.UUID:
    plan = await _live_plan(session, ctx, plan_id)
    await _check_owners(session, ctx, body.prospect_owner_ids, body.subscriber_owner_ids)
    index = await _next_sort_index(session, ctx, plan_id) if body.sort_index is None else 0
    row = _milestone_row(body, plan, index)
    session.add(row)
    await session.flush()
    return row.id


async def update_milestone(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    milestone_id: uuid.UUID,
    body: MilestoneUpdate,
) -> None:
    await _live_plan(session, ctx, plan_id, (PlanMilestone, milestone_id))
    row: PlanMilestone = await _child(session, ctx, PlanMilestone, plan_id, milestone_id)
    sent = body.sent()
    _no_nulls(sent, ("milestone", "status", "sort_index"))
    await _check_owners(
        session, ctx, sent.get("prospect_owner_ids"), sent.get("subscriber_owner_ids")
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
    await session.flush()


async def archive_child(
    session: AsyncSession, ctx: RequestContext, model: Any, plan_id: uuid.UUID, row_id: uuid.UUID
) -> None:
    await _live_plan(session, ctx, plan_id, (model, row_id))
    row = await _child(session, ctx, model, plan_id, row_id)
    if row.archived_at is not None:
        return
    now = utcnow()
    row.archived_at = now
    if model is PlanGoal:
        descendants = await _descendants(session, ctx, plan_id, row_id, archived_at=None)
        await _set_goals_archived(session, descendants, now)
    await session.flush()


async def restore_milestone(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, milestone_id: uuid.UUID
) -> None:
    await _live_plan(session, ctx, plan_id, (PlanMilestone, milestone_id))
    row: PlanMilestone = await _child(session, ctx, PlanMilestone, plan_id, milestone_id)
    if row.archived_at is not None:
        row.archived_at = None
        row.updated_at = utcnow()
        await session.flush()


async def reorder_milestones(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: MilestoneReorder
) -> list[dict]:
    await _live_plan(session, ctx, plan_id)
    stmt = scoped(
        select(PlanMilestone).where(
            PlanMilestone.plan_id == plan_id, PlanMilestone.archived_at.is_(None)
        ),
        ctx,
        PlanMilestone,
    )
    live = {m.id: m for m in (await session.execute(stmt)).scalars()}
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
    for index, milestone_id in enumerate(wanted):
        if live[milestone_id].sort_index != index:
            live[milestone_id].sort_index = index
            live[milestone_id].updated_at = now
    tree = await _tree(session, ctx, plan_id)
    return [tree.milestone(m) for m in tree.milestones]


# --- goals -----------------------------------------------------------------------------------


async def _goal_links(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, archived_at: Any = None
) -> dict[uuid.UUID, uuid.UUID | None]:
    """id → parent id of the plan's live goals (or of those archived at `archived_at`)."""
    cond = (
        PlanGoal.archived_at.is_(None) if archived_at is None else PlanGoal.archived_at.is_not(None)
    )
    stmt = scoped(
        select(PlanGoal.id, PlanGoal.parent_goal_id, PlanGoal.archived_at).where(
            PlanGoal.plan_id == plan_id, cond
        ),
        ctx,
        PlanGoal,
    )
    rows = (await session.execute(stmt)).all()
    return {
        r.id: r.parent_goal_id for r in rows if archived_at is None or r.archived_at == archived_at
    }


async def _set_goals_archived(
    session: AsyncSession, goal_ids: list[uuid.UUID], archived_at: datetime | None
) -> None:
    """One statement for a whole subtree (the ids come from the plan's scoped goal links)."""
    if goal_ids:
        await session.execute(
            update(PlanGoal).where(PlanGoal.id.in_(goal_ids)).values(archived_at=archived_at)
        )


async def _descendants(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    goal_id: uuid.UUID,
    *,
    archived_at: datetime | None,
) -> list[uuid.UUID]:
    links = await _goal_links(session, ctx, plan_id, archived_at)
    children: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
    for child, parent in links.items():
        if parent is not None:
            children[parent].append(child)
    out, stack = [], list(children.get(goal_id, []))
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(children.get(current, []))
    return out


async def _check_parent(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    goal_id: uuid.UUID | None,
    parent_id: uuid.UUID,
) -> None:
    links = await _goal_links(session, ctx, plan_id)
    if parent_id not in links:
        raise Unprocessable(
            "parentGoalId must be a live goal of this plan.",
            details={"field": "parentGoalId", "id": str(parent_id)},
        )
    chain: list[uuid.UUID] = []
    node: uuid.UUID | None = parent_id
    while node is not None and node not in chain:
        chain.append(node)
        node = links.get(node)
    if goal_id is not None and goal_id in chain:
        raise Unprocessable(
            "A goal cannot be nested under itself or one of its descendants.",
            details={"field": "parentGoalId", "reason": "cycle"},
        )
    level = len(chain)  # the parent's level; a root goal is level 1
    height = 1
    if goal_id is not None:
        children: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
        for child, parent in links.items():
            if parent is not None:
                children[parent].append(child)

        def tall(node_id: uuid.UUID) -> int:
            return 1 + max((tall(c) for c in children.get(node_id, [])), default=0)

        height = tall(goal_id)
    if level + height > MAX_GOAL_DEPTH:
        raise Unprocessable(
            f"Goals nest at most {MAX_GOAL_DEPTH} levels (a root goal is level 1).",
            details={"field": "parentGoalId", "reason": "too_deep"},
        )


async def create_goal(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: GoalCreate
) -> uuid.UUID:
    plan = await _live_plan(session, ctx, plan_id)
    await _check_milestone(session, ctx, plan_id, body.milestone_id)
    if body.parent_goal_id is not None:
        await _check_parent(session, ctx, plan_id, None, body.parent_goal_id)
    row = _goal_row(body, plan, milestone_id=body.milestone_id, parent_goal_id=body.parent_goal_id)
    session.add(row)
    await session.flush()
    return row.id


async def update_goal(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    goal_id: uuid.UUID,
    body: GoalUpdate,
) -> None:
    await _live_plan(session, ctx, plan_id, (PlanGoal, goal_id))
    row: PlanGoal = await _child(session, ctx, PlanGoal, plan_id, goal_id)
    sent = body.sent()
    _no_nulls(sent, ("title", "goal_type"))
    if sent.get("milestone_id") is not None:
        await _check_milestone(session, ctx, plan_id, sent["milestone_id"])
    if sent.get("parent_goal_id") is not None:
        await _check_parent(session, ctx, plan_id, goal_id, sent["parent_goal_id"])
    for key, value in sent.items():
        setattr(row, key, value)
    row.updated_at = utcnow()
    await session.flush()


async def restore_goal(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, goal_id: uuid.UUID
) -> None:
    await _live_plan(session, ctx, plan_id, (PlanGoal, goal_id))
    row: PlanGoal = await _child(session, ctx, PlanGoal, plan_id, goal_id)
    if row.archived_at is None:
        return
    if row.parent_goal_id is not None:
        parent: PlanGoal = await _child(session, ctx, PlanGoal, plan_id, row.parent_goal_id)
        if parent.archived_at is not None:
            raise Unprocessable(
                "The parent goal is archived; restore it first.",
                details={"field": "parentGoalId", "id": str(parent.id)},
            )
    # The descendants archived with it come back with it.
    descendants = await _descendants(session, ctx, plan_id, goal_id, archived_at=row.archived_at)
    await _set_goals_archived(session, descendants, None)
    row.archived_at = None
    row.updated_at = utcnow()
    await session.flush()


# --- tasks -----------------------------------------------------------------------------------


async def create_task(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: TaskCreate
) -> uuid.UUID:
    plan = await _live_plan(session, ctx, plan_id)
    await _check_milestone(session, ctx, plan_id, body.milestone_id)
    await _check_assignee(session, ctx, body.assigned_to_id)
    row = _task_row(body, plan, ctx, milestone_id=body.milestone_id)
    session.add(row)
    await session.flush()
    return row.id


async def update_task(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    task_id: uuid.UUID,
    body: TaskUpdate,
) -> None:
    await _live_plan(session, ctx, plan_id, (PlanTask, task_id))
    row: PlanTask = await _child(session, ctx, PlanTask, plan_id, task_id)
    sent = body.sent()
    _no_nulls(sent, ("title", "completed"))
    if sent.get("milestone_id") is not None:
        await _check_milestone(session, ctx, plan_id, sent["milestone_id"])
    if sent.get("assigned_to_id") is not None:
        await _check_assignee(session, ctx, sent["assigned_to_id"])
    was = row.completed
    for key, value in sent.items():
        setattr(row, key, value)
    if row.completed and not was:
        row.completed_at = utcnow()
    elif was and not row.completed:
        row.completed_at = None
    row.updated_at = utcnow()
    await session.flush()


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


TASK_SORT = {
    "createdAt": repo.T.c.created_at,
    "updatedAt": repo.T.c.updated_at,
    "title": repo.T.c.title,
}
GOAL_SORT = {
    "createdAt": repo.G.c.created_at,
    "updatedAt": repo.G.c.updated_at,
    "title": repo.G.c.title,
}
MILESTONE_SORT = {
    "sortIndex": repo.M.c.sort_index,
    "createdAt": repo.M.c.created_at,
    "updatedAt": repo.M.c.updated_at,
}
