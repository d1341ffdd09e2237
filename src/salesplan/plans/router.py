"""Plans, milestones, goals and tasks (contract §7 "plans"), and `GET /tasks`.

Responses are rendered from rows as the spec's exact objects (see render.py); the declared
response models document them."""

from __future__ import annotations

import uuid
from enum import Enum
from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.db import SessionDep, read_connection, write_connection
from salesplan.kit.driver import transaction
from salesplan.kit.fields import Date
from salesplan.kit.pagination import CursorCodecDep, ListParams, UpdatedSince, list_params
from salesplan.kit.responses import json_response
from salesplan.kit.tools import as_tool
from salesplan.models.plans import PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import descriptions as text
from salesplan.plans import service, versioning
from salesplan.plans.schemas import (
    EntityType,
    GoalCreate,
    GoalList,
    GoalUpdate,
    MilestoneCreate,
    MilestoneList,
    MilestoneOrder,
    MilestoneReorder,
    MilestoneUpdate,
    PlanCreate,
    PlanGoalOut,
    PlanListResponse,
    PlanMilestoneOut,
    PlanOut,
    PlanTaskOut,
    PlanUpdate,
    TaskCreate,
    TaskList,
    TaskUpdate,
)

router = APIRouter()
my_tasks_router = APIRouter(tags=["plan-tasks"])

Read = Annotated[RequestContext, require("plans:read", "plans")]
Write = Annotated[RequestContext, require("plans:write", "plans")]
Delete = Annotated[RequestContext, require("plans:delete", "plans")]
UserRead = Annotated[RequestContext, require("plans:read", "plans", user_token=True)]
IncludeArchived = Annotated[bool, Query(alias="includeArchived")]

PLANS: list[str | Enum] = ["plans"]
MILESTONES: list[str | Enum] = ["plan-milestones"]
GOALS: list[str | Enum] = ["plan-goals"]
TASKS: list[str | Enum] = ["plan-tasks"]
NO_CONTENT: dict[int | str, dict[str, Any]] = {204: {"description": "Archived"}}


def _list(items: list[dict], meta: Any) -> Response:
    return json_response({"data": items, "pagination": meta.model_dump(by_alias=True)})


# --- plans -----------------------------------------------------------------------------------


@router.get(
    "",
    operation_id="listPlans",
    tags=PLANS,
    response_model=PlanListResponse,
    summary="List plans",
    description=text.LIST_PLANS,
)
@as_tool(docs=text.LIST_PLANS_ARGS)
async def list_plans(
    ctx: Read,
    codec: CursorCodecDep,
    request: Request,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "name"))],
    entity_type: Annotated[EntityType | None, Query(alias="entityType")] = None,
    entity_id: Annotated[uuid.UUID | None, Query(alias="entityId")] = None,
    account_id: Annotated[uuid.UUID | None, Query(alias="accountId")] = None,
    include_archived: IncludeArchived = False,
    archived_only: Annotated[bool, Query(alias="archivedOnly")] = False,
    updated_since: UpdatedSince = None,
    include: Annotated[
        str | None,
        Query(
            description="Comma-separated: milestones, goals, tasks.",
            json_schema_extra={"pattern": service.INCLUDE_PATTERN},
        ),
    ] = None,
) -> Response:
    """List plans, filtered by entity, account and archived state."""
    parts = service.parse_include(include)
    filters = service.PlanFilters(
        entity_type=entity_type,
        entity_id=entity_id,
        account_id=account_id,
        include_archived=include_archived,
        archived_only=archived_only,
        updated_since=updated_since,
    )
    # A pooled connection, no ORM session (autocommit on PostgreSQL): as listAccounts.
    async with read_connection(request) as conn:
        items, meta = await service.list_plans(conn, ctx, params, filters, parts, codec)
    return _list(items, meta)


@router.post(
    "",
    operation_id="createPlan",
    tags=PLANS,
    status_code=201,
    response_model=PlanOut,
    summary="Create a plan",
    description=text.CREATE_PLAN,
)
@as_tool(docs=text.CREATE_PLAN_ARGS)
async def create_plan(body: PlanCreate, ctx: Write, session: SessionDep) -> Response:
    """Create a plan, optionally with its milestones, goals and tasks, in one transaction."""
    plan_id = await service.create_plan(session, ctx, body)
    return json_response(await service.plan_view(session, ctx, plan_id), 201)


@router.get(
    "/{planId}",
    operation_id="getPlan",
    tags=PLANS,
    response_model=PlanOut,
    summary="Read a plan in full",
    description=text.GET_PLAN,
)
@as_tool(docs=text.GET_PLAN_ARGS)
async def get_plan(planId: uuid.UUID, ctx: Read, request: Request) -> Response:
    """Read a plan with its milestones, goals and tasks."""
    # ETag / If-None-Match (304) and the cached body: plans/versioning.py. A pooled
    # connection, no ORM session (autocommit on PostgreSQL): as getAccount.
    async with read_connection(request) as conn:
        return await versioning.get_plan(
            conn,
            ctx,
            planId,
            request.headers.get("if-none-match"),
            versioning.plan_bodies(request.app),
        )


@router.patch(
    "/{planId}",
    operation_id="updatePlan",
    tags=PLANS,
    response_model=PlanOut,
    summary="Update a plan",
    description=text.UPDATE_PLAN,
)
@as_tool(docs=text.UPDATE_PLAN_ARGS)
async def update_plan(
    planId: uuid.UUID, body: PlanUpdate, ctx: Write, session: SessionDep
) -> Response:
    """Update a plan's name, description or attachment."""
    await service.update_plan(session, ctx, planId, body)
    return json_response(await service.plan_view(session, ctx, planId))


@router.delete(
    "/{planId}", operation_id="archivePlan", tags=PLANS, status_code=204, responses=NO_CONTENT
)
async def archive_plan(planId: uuid.UUID, ctx: Delete, session: SessionDep) -> Response:
    """Archive a plan."""
    await service.archive_plan(session, ctx, planId)
    return Response(status_code=204)


@router.post("/{planId}/restore", operation_id="restorePlan", tags=PLANS, response_model=PlanOut)
async def restore_plan(planId: uuid.UUID, ctx: Write, session: SessionDep) -> Response:
    """Restore an archived plan."""
    await service.restore_plan(session, ctx, planId)
    return json_response(await service.plan_view(session, ctx, planId))


# --- milestones ------------------------------------------------------------------------------


@router.get(
    "/{planId}/milestones",
    operation_id="listPlanMilestones",
    tags=MILESTONES,
    response_model=MilestoneList,
)
async def list_milestones(
    planId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[
        ListParams, list_params(("sortIndex", "createdAt", "updatedAt"), default="sortIndex")
    ],
    include_archived: IncludeArchived = False,
) -> Response:
    """List a plan's milestones."""
    items, meta = await service.list_children(
        session,
        ctx,
        planId,
        PlanMilestone,
        params,
        codec,
        include_archived=include_archived,
        sort_columns=service.MILESTONE_SORT,
    )
    return _list(items, meta)


@router.post(
    "/{planId}/milestones",
    operation_id="createPlanMilestone",
    tags=MILESTONES,
    status_code=201,
    response_model=PlanMilestoneOut,
)
async def create_milestone(
    planId: uuid.UUID, body: MilestoneCreate, ctx: Write, session: SessionDep
) -> Response:
    """Add a milestone to a plan."""
    milestone_id = await service.create_milestone(session, ctx, planId, body)
    return json_response(await service.milestone_view(session, ctx, planId, milestone_id), 201)


@router.post(
    "/{planId}/milestones/reorder",
    operation_id="reorderPlanMilestones",
    tags=MILESTONES,
    response_model=MilestoneOrder,
)
async def reorder_milestones(
    planId: uuid.UUID, body: MilestoneReorder, ctx: Write, session: SessionDep
) -> Response:
    """Reorder a plan's milestones."""
    return json_response({"data": await service.reorder_milestones(session, ctx, planId, body)})


@router.get(
    "/{planId}/milestones/{milestoneId}",
    operation_id="getPlanMilestone",
    tags=MILESTONES,
    response_model=PlanMilestoneOut,
)
async def get_milestone(
    planId: uuid.UUID, milestoneId: uuid.UUID, ctx: Read, session: SessionDep
) -> Response:
    """Read a milestone."""
    await service.find_plan(session, ctx, planId)
    return json_response(await service.milestone_view(session, ctx, planId, milestoneId))


@router.patch(
    "/{planId}/milestones/{milestoneId}",
    operation_id="updatePlanMilestone",
    tags=MILESTONES,
    response_model=PlanMilestoneOut,
)
async def update_milestone(
    planId: uuid.UUID,
    milestoneId: uuid.UUID,
    body: MilestoneUpdate,
    ctx: Write,
    session: SessionDep,
) -> Response:
    """Update a milestone."""
    await service.update_milestone(session, ctx, planId, milestoneId, body)
    return json_response(await service.milestone_view(session, ctx, planId, milestoneId))


@router.delete(
    "/{planId}/milestones/{milestoneId}",
    operation_id="archivePlanMilestone",
    tags=MILESTONES,
    status_code=204,
    responses=NO_CONTENT,
)
async def archive_milestone(
    planId: uuid.UUID, milestoneId: uuid.UUID, ctx: Delete, session: SessionDep
) -> Response:
    """Archive a milestone."""
    await service.archive_child(session, ctx, PlanMilestone, planId, milestoneId)
    return Response(status_code=204)


@router.post(
    "/{planId}/milestones/{milestoneId}/restore",
    operation_id="restorePlanMilestone",
    tags=MILESTONES,
    response_model=PlanMilestoneOut,
)
async def restore_milestone(
    planId: uuid.UUID, milestoneId: uuid.UUID, ctx: Write, session: SessionDep
) -> Response:
    """Restore an archived milestone."""
    await service.restore_milestone(session, ctx, planId, milestoneId)
    return json_response(await service.milestone_view(session, ctx, planId, milestoneId))


# --- goals -----------------------------------------------------------------------------------


@router.get("/{planId}/goals", operation_id="listPlanGoals", tags=GOALS, response_model=GoalList)
async def list_goals(
    planId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "title"))],
    include_archived: IncludeArchived = False,
    milestone_id: Annotated[uuid.UUID | None, Query(alias="milestoneId")] = None,
) -> Response:
    """List a plan's goals (every goal, each with its childGoals)."""
    where = [] if milestone_id is None else [PlanGoal.milestone_id == milestone_id]
    items, meta = await service.list_children(
        session,
        ctx,
        planId,
        PlanGoal,
        params,
        codec,
        include_archived=include_archived,
        where=where,
        sort_columns=service.GOAL_SORT,
    )
    return _list(items, meta)


@router.post(
    "/{planId}/goals",
    operation_id="createPlanGoal",
    tags=GOALS,
    status_code=201,
    response_model=PlanGoalOut,
)
async def create_goal(
    planId: uuid.UUID, body: GoalCreate, ctx: Write, session: SessionDep
) -> Response:
    """Add a goal to a plan."""
    goal_id = await service.create_goal(session, ctx, planId, body)
    return json_response(await service.goal_view(session, ctx, planId, goal_id), 201)


@router.get(
    "/{planId}/goals/{goalId}",
    operation_id="getPlanGoal",
    tags=GOALS,
    response_model=PlanGoalOut,
)
async def get_goal(
    planId: uuid.UUID, goalId: uuid.UUID, ctx: Read, session: SessionDep
) -> Response:
    """Read a goal with its childGoals."""
    await service.find_plan(session, ctx, planId)
    return json_response(await service.goal_view(session, ctx, planId, goalId))


@router.patch(
    "/{planId}/goals/{goalId}",
    operation_id="updatePlanGoal",
    tags=GOALS,
    response_model=PlanGoalOut,
)
async def update_goal(
    planId: uuid.UUID, goalId: uuid.UUID, body: GoalUpdate, ctx: Write, session: SessionDep
) -> Response:
    """Update a goal."""
    await service.update_goal(session, ctx, planId, goalId, body)
    return json_response(await service.goal_view(session, ctx, planId, goalId))


@router.delete(
    "/{planId}/goals/{goalId}",
    operation_id="archivePlanGoal",
    tags=GOALS,
    status_code=204,
    responses=NO_CONTENT,
)
async def archive_goal(
    planId: uuid.UUID, goalId: uuid.UUID, ctx: Delete, session: SessionDep
) -> Response:
    """Archive a goal and its descendants."""
    await service.archive_child(session, ctx, PlanGoal, planId, goalId)
    return Response(status_code=204)


@router.post(
    "/{planId}/goals/{goalId}/restore",
    operation_id="restorePlanGoal",
    tags=GOALS,
    response_model=PlanGoalOut,
)
async def restore_goal(
    planId: uuid.UUID, goalId: uuid.UUID, ctx: Write, session: SessionDep
) -> Response:
    """Restore an archived goal with the descendants archived with it."""
    await service.restore_goal(session, ctx, planId, goalId)
    return json_response(await service.goal_view(session, ctx, planId, goalId))


# --- tasks -----------------------------------------------------------------------------------

Completed = Annotated[bool | None, Query()]


@router.get("/{planId}/tasks", operation_id="listPlanTasks", tags=TASKS, response_model=TaskList)
async def list_tasks(
    planId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "title"))],
    include_archived: IncludeArchived = False,
    completed: Completed = None,
    milestone_id: Annotated[uuid.UUID | None, Query(alias="milestoneId")] = None,
    assigned_to_id: Annotated[uuid.UUID | None, Query(alias="assignedToId")] = None,
) -> Response:
    """List a plan's tasks."""
    where: list[Any] = []
    if completed is not None:
        where.append(PlanTask.completed.is_(completed))
    if milestone_id is not None:
        where.append(PlanTask.milestone_id == milestone_id)
    if assigned_to_id is not None:
        where.append(PlanTask.assigned_to_id == assigned_to_id)
    items, meta = await service.list_children(
        session,
        ctx,
        planId,
        PlanTask,
        params,
        codec,
        include_archived=include_archived,
        where=where,
        sort_columns=service.TASK_SORT,
    )
    return _list(items, meta)


@router.post(
    "/{planId}/tasks",
    operation_id="createPlanTask",
    tags=TASKS,
    status_code=201,
    response_model=PlanTaskOut,
    summary="Add a task to a plan",
    description=text.CREATE_PLAN_TASK,
)
@as_tool(docs=text.CREATE_PLAN_TASK_ARGS)
async def create_task(
    planId: uuid.UUID, body: TaskCreate, ctx: Write, session: SessionDep
) -> Response:
    """Add a task to a plan."""
    task_id = await service.create_task(session, ctx, planId, body)
    return json_response(await service.task_view(session, ctx, planId, task_id), 201)


@router.get(
    "/{planId}/tasks/{taskId}",
    operation_id="getPlanTask",
    tags=TASKS,
    response_model=PlanTaskOut,
)
async def get_task(
    planId: uuid.UUID, taskId: uuid.UUID, ctx: Read, session: SessionDep
) -> Response:
    """Read a task."""
    await service.find_plan(session, ctx, planId)
    return json_response(await service.task_view(session, ctx, planId, taskId))


@router.patch(
    "/{planId}/tasks/{taskId}",
    operation_id="updatePlanTask",
    tags=TASKS,
    response_model=PlanTaskOut,
    summary="Update a plan task",
    description=text.UPDATE_PLAN_TASK,
)
@as_tool(docs=text.UPDATE_PLAN_TASK_ARGS)
async def update_task(
    planId: uuid.UUID, taskId: uuid.UUID, body: TaskUpdate, ctx: Write, request: Request
) -> Response:
    """Update a task; completing it sets completedAt, reopening it clears it."""
    # A hot write, in Core on the driver and committed before the response: one statement
    # when it applies, else the checks and the write in one transaction.
    async with write_connection(request) as conn:
        task = await service.update_task_at_once(conn, ctx, planId, taskId, body)
        if task is None:
            async with transaction(conn):
                task = await service.update_task(conn, ctx, planId, taskId, body)
    return json_response(task)


@router.delete(
    "/{planId}/tasks/{taskId}",
    operation_id="archivePlanTask",
    tags=TASKS,
    status_code=204,
    responses=NO_CONTENT,
)
async def archive_task(
    planId: uuid.UUID, taskId: uuid.UUID, ctx: Delete, session: SessionDep
) -> Response:
    """Archive a task."""
    await service.archive_child(session, ctx, PlanTask, planId, taskId)
    return Response(status_code=204)


@my_tasks_router.get(
    "",
    operation_id="listMyTasks",
    response_model=TaskList,
    summary="List my tasks",
    description=text.LIST_MY_TASKS,
)
@as_tool(docs=text.LIST_MY_TASKS_ARGS)
async def list_my_tasks(
    ctx: UserRead,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "title"))],
    completed: Completed = None,
    plan_id: Annotated[uuid.UUID | None, Query(alias="planId")] = None,
    due_before: Annotated[Date | None, Query(alias="dueBefore")] = None,
) -> Response:
    """List the tasks assigned to the caller across all plans."""
    items, meta = await service.list_my_tasks(
        session, ctx, params, codec, completed=completed, plan_id=plan_id, due_before=due_before
    )
    return _list(items, meta)
