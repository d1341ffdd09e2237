"""Goals: nesting (at most MAX_GOAL_DEPTH levels, no cycles), subtree archive and restore.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import Unprocessable
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import repository as repo
from salesplan.plans import write_repository as writes
from salesplan.plans.checks import (
    MAX_GOAL_DEPTH,
    check_milestone,
    child_row,
    close_patch,
    live_child,
    live_plan,
    new_id,
    open_patch,
    plan_written,
)
from salesplan.plans.events import (
    GoalCreated,
    GoalDeleted,
    GoalUpdated,
    MilestoneDeleted,
    TaskDeleted,
)
from salesplan.plans.schemas import (
    GoalCreate,
    GoalFields,
    GoalSeed,
    GoalUpdate,
)
from salesplan.plans.write_repository import Child

GOAL_SORT = repo.GOAL_SORT


def goal_row(fields: GoalFields, plan: Plan, **extra: uuid.UUID | None) -> PlanGoal:
    data = fields.model_dump(exclude={"child_goals", "milestone_id", "parent_goal_id"})
    return PlanGoal(organization_id=plan.organization_id, plan_id=plan.id, **data, **extra)


def seed_goals(
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
        goal = goal_row(
            seed,
            plan,
            id=new_id(),
            milestone_id=milestone_id,
            parent_goal_id=parent.id if parent else None,
        )
        session.add(goal)
        seed_goals(
            session,
            plan,
            seed.child_goals or [],
            milestone_id=milestone_id,
            parent=goal,
            level=level + 1,
            location=[*location, i, "childGoals"],
        )


async def goal_links(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    archived_at: datetime | None = None,
) -> dict[uuid.UUID, uuid.UUID | None]:
    """id → parent id of the plan's live goals (or of those archived at `archived_at`)."""
    rows = await writes.goal_link_rows(session, ctx, plan_id, archived=archived_at is not None)
    return {
        r.id: r.parent_goal_id for r in rows if archived_at is None or r.archived_at == archived_at
    }


async def goal_descendants(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    goal_id: uuid.UUID,
    *,
    archived_at: datetime | None,
) -> list[uuid.UUID]:
    links = await goal_links(session, ctx, plan_id, archived_at)
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


async def check_parent(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    goal_id: uuid.UUID | None,
    parent_id: uuid.UUID,
) -> None:
    links = await goal_links(session, ctx, plan_id)
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
    plan = await live_plan(session, ctx, plan_id)
    await check_milestone(session, ctx, plan_id, body.milestone_id)
    if body.parent_goal_id is not None:
        await check_parent(session, ctx, plan_id, None, body.parent_goal_id)
    row = goal_row(body, plan, milestone_id=body.milestone_id, parent_goal_id=body.parent_goal_id)
    session.add(row)
    await plan_written(session, ctx, plan_id)
    await session.flush()
    emit(session, GoalCreated(ctx.organization_id, plan_id, row.id))
    return row.id


async def update_goal(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    goal_id: uuid.UUID,
    body: GoalUpdate,
) -> None:
    row, sent = await open_patch(
        session, ctx, PlanGoal, plan_id, goal_id, body, ("title", "goal_type")
    )
    if sent.get("parent_goal_id") is not None:
        await check_parent(session, ctx, plan_id, goal_id, sent["parent_goal_id"])
    await plan_written(session, ctx, plan_id)
    await close_patch(session, row, sent)
    emit(session, GoalUpdated(ctx.organization_id, plan_id, goal_id))


async def restore_goal(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, goal_id: uuid.UUID
) -> None:
    row: PlanGoal = await live_child(session, ctx, PlanGoal, plan_id, goal_id)
    if row.archived_at is None:
        return
    if row.parent_goal_id is not None:
        parent: PlanGoal = await child_row(session, ctx, PlanGoal, plan_id, row.parent_goal_id)
        if parent.archived_at is not None:
            raise Unprocessable(
                "The parent goal is archived; restore it first.",
                details={"field": "parentGoalId", "id": str(parent.id)},
            )
    # The descendants archived with it come back with it.
    descendants = await goal_descendants(
        session, ctx, plan_id, goal_id, archived_at=row.archived_at
    )
    await writes.set_goals_archived(session, descendants, None)
    row.archived_at = None
    row.updated_at = utcnow()
    await plan_written(session, ctx, plan_id)
    await session.flush()
    for restored in (goal_id, *descendants):
        emit(session, GoalUpdated(ctx.organization_id, plan_id, restored))


async def archive_child(
    session: AsyncSession,
    ctx: RequestContext,
    model: type[Child],
    plan_id: uuid.UUID,
    row_id: uuid.UUID,
) -> None:
    row = await live_child(session, ctx, model, plan_id, row_id)
    if row.archived_at is not None:
        return
    now = utcnow()
    row.archived_at = now
    org = ctx.organization_id
    if model is PlanGoal:
        descendants: list[uuid.UUID] = await goal_descendants(
            session, ctx, plan_id, row_id, archived_at=None
        )
        await writes.set_goals_archived(session, descendants, now)
        for archived in (row_id, *descendants):
            emit(session, GoalDeleted(org, plan_id, archived))
    elif model is PlanMilestone:
        emit(session, MilestoneDeleted(org, plan_id, row_id))
    elif model is PlanTask:
        emit(session, TaskDeleted(org, plan_id, row_id))
    await plan_written(session, ctx, plan_id)
    await session.flush()
