"""A plan's milestones, goals and tasks (contract §7 "plans"), under `/plans/{planId}`:
mounted after `router.py`'s routes under the same prefix (`salesplan.routers`).

Responses are rendered from rows as the spec's exact objects (see render.py); the declared
response models document them. Every route reaches the database through the request's unit
of work (`db.UoW`)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from salesplan.db_dependencies import UoW, unit_of_work
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.tools import as_tool
from salesplan.models.plans import PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import descriptions as text
from salesplan.plans import repository as repo
from salesplan.plans import service
from salesplan.plans.dependencies import (
    GOALS,
    MILESTONES,
    NO_CONTENT,
    TASKS,
    Completed,
    Delete,
    IncludeArchived,
    Read,
    Write,
    listed,
)
from salesplan.plans.schemas import (
    GoalCreate,
    GoalList,
    GoalUpdate,
    MilestoneCreate,
    MilestoneList,
    MilestoneOrder,
    MilestoneReorder,
    MilestoneUpdate,
    PlanGoalOut,
    PlanMilestoneOut,
    PlanTaskOut,
    TaskCreate,
    TaskList,
    TaskUpdate,
)

router = APIRouter()


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
    uow: UoW,
    codec: CursorCodecDep,
    params: Annotated[
        ListParams, list_params(("sortIndex", "createdAt", "updatedAt"), default="sortIndex")
    ],
    include_archived: IncludeArchived = False,
) -> Response:
    """List a plan's milestones."""
    session = await uow.session()
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
    return listed(items, meta)


@router.post(
    "/{planId}/milestones",
    operation_id="createPlanMilestone",
    tags=MILESTONES,
    status_code=201,
    response_model=PlanMilestoneOut,
)
async def create_milestone(
    planId: uuid.UUID, body: MilestoneCreate, ctx: Write, uow: UoW
) -> Response:
    """Add a milestone to a plan."""
    session = await uow.session()
    milestone_id = await service.create_milestone(session, ctx, planId, body)
    return json_response(await service.milestone_view(session, ctx, planId, milestone_id), 201)


@router.post(
    "/{planId}/milestones/reorder",
    operation_id="reorderPlanMilestones",
    tags=MILESTONES,
    response_model=MilestoneOrder,
)
async def reorder_milestones(
    planId: uuid.UUID, body: MilestoneReorder, ctx: Write, uow: UoW
) -> Response:
    """Reorder a plan's milestones."""
    session = await uow.session()
    return json_response({"data": await service.reorder_milestones(session, ctx, planId, body)})


@router.get(
    "/{planId}/milestones/{milestoneId}",
    operation_id="getPlanMilestone",
    tags=MILESTONES,
    response_model=PlanMilestoneOut,
)
async def get_milestone(planId: uuid.UUID, milestoneId: uuid.UUID, ctx: Read, uow: UoW) -> Response:
    """Read a milestone."""
    session = await uow.session()
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
    uow: UoW,
) -> Response:
    """Update a milestone."""
    session = await uow.session()
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
    planId: uuid.UUID, milestoneId: uuid.UUID, ctx: Delete, uow: UoW
) -> Response:
    """Archive a milestone."""
    session = await uow.session()
    await service.archive_child(session, ctx, PlanMilestone, planId, milestoneId)
    return Response(status_code=204)


@router.post(
    "/{planId}/milestones/{milestoneId}/restore",
    operation_id="restorePlanMilestone",
    tags=MILESTONES,
    response_model=PlanMilestoneOut,
)
async def restore_milestone(
    planId: uuid.UUID, milestoneId: uuid.UUID, ctx: Write, uow: UoW
) -> Response:
    """Restore an archived milestone."""
    session = await uow.session()
    await service.restore_milestone(session, ctx, planId, milestoneId)
    return json_response(await service.milestone_view(session, ctx, planId, milestoneId))


# --- goals -----------------------------------------------------------------------------------


@router.get("/{planId}/goals", operation_id="listPlanGoals", tags=GOALS, response_model=GoalList)
async def list_goals(
    planId: uuid.UUID,
    ctx: Read,
    uow: UoW,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "title"))],
    include_archived: IncludeArchived = False,
    milestone_id: Annotated[uuid.UUID | None, Query(alias="milestoneId")] = None,
) -> Response:
    """List a plan's goals (every goal, each with its childGoals)."""
    session = await uow.session()
    where = repo.child_filters(PlanGoal, milestone_id=milestone_id)
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
    return listed(items, meta)


@router.post(
    "/{planId}/goals",
    operation_id="createPlanGoal",
    tags=GOALS,
    status_code=201,
    response_model=PlanGoalOut,
)
async def create_goal(planId: uuid.UUID, body: GoalCreate, ctx: Write, uow: UoW) -> Response:
    """Add a goal to a plan."""
    session = await uow.session()
    goal_id = await service.create_goal(session, ctx, planId, body)
    return json_response(await service.goal_view(session, ctx, planId, goal_id), 201)


@router.get(
    "/{planId}/goals/{goalId}",
    operation_id="getPlanGoal",
    tags=GOALS,
    response_model=PlanGoalOut,
)
async def get_goal(planId: uuid.UUID, goalId: uuid.UUID, ctx: Read, uow: UoW) -> Response:
    """Read a goal with its childGoals."""
    session = await uow.session()
    await service.find_plan(session, ctx, planId)
    return json_response(await service.goal_view(session, ctx, planId, goalId))


@router.patch(
    "/{planId}/goals/{goalId}",
    operation_id="updatePlanGoal",
    tags=GOALS,
    response_model=PlanGoalOut,
)
async def update_goal(
    planId: uuid.UUID, goalId: uuid.UUID, body: GoalUpdate, ctx: Write, uow: UoW
) -> Response:
    """Update a goal."""
    session = await uow.session()
    await service.update_goal(session, ctx, planId, goalId, body)
    return json_response(await service.goal_view(session, ctx, planId, goalId))


@router.delete(
    "/{planId}/goals/{goalId}",
    operation_id="archivePlanGoal",
    tags=GOALS,
    status_code=204,
    responses=NO_CONTENT,
)
async def archive_goal(planId: uuid.UUID, goalId: uuid.UUID, ctx: Delete, uow: UoW) -> Response:
    """Archive a goal and its descendants."""
    session = await uow.session()
    await service.archive_child(session, ctx, PlanGoal, planId, goalId)
    return Response(status_code=204)


@router.post(
    "/{planId}/goals/{goalId}/restore",
    operation_id="restorePlanGoal",
    tags=GOALS,
    response_model=PlanGoalOut,
)
async def restore_goal(planId: uuid.UUID, goalId: uuid.UUID, ctx: Write, uow: UoW) -> Response:
    """Restore an archived goal with the descendants archived with it."""
    session = await uow.session()
    await service.restore_goal(session, ctx, planId, goalId)
    return json_response(await service.goal_view(session, ctx, planId, goalId))


# --- tasks -----------------------------------------------------------------------------------


@router.get("/{planId}/tasks", operation_id="listPlanTasks", tags=TASKS, response_model=TaskList)
async def list_tasks(
    planId: uuid.UUID,
    ctx: Read,
    uow: UoW,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "title"))],
    include_archived: IncludeArchived = False,
    completed: Completed = None,
    milestone_id: Annotated[uuid.UUID | None, Query(alias="milestoneId")] = None,
    assigned_to_id: Annotated[uuid.UUID | None, Query(alias="assignedToId")] = None,
) -> Response:
    """List a plan's tasks."""
    session = await uow.session()
    where = repo.child_filters(
        PlanTask, milestone_id=milestone_id, completed=completed, assigned_to_id=assigned_to_id
    )
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
    return listed(items, meta)


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
async def create_task(planId: uuid.UUID, body: TaskCreate, ctx: Write, uow: UoW) -> Response:
    """Add a task to a plan."""
    session = await uow.session()
    task_id = await service.create_task(session, ctx, planId, body)
    return json_response(await service.task_view(session, ctx, planId, task_id), 201)


@router.get(
    "/{planId}/tasks/{taskId}",
    operation_id="getPlanTask",
    tags=TASKS,
    response_model=PlanTaskOut,
)
async def get_task(planId: uuid.UUID, taskId: uuid.UUID, ctx: Read, uow: UoW) -> Response:
    """Read a task."""
    session = await uow.session()
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
    # A hot write, in Core on the driver and committed before the response. The unit of
    # work as a block, not the dependency (db.unit_of_work: an exit stack less per request).
    async with unit_of_work(request) as uow:
        task = await service.save_task(uow, ctx, planId, taskId, body)
    return json_response(task)


@router.delete(
    "/{planId}/tasks/{taskId}",
    operation_id="archivePlanTask",
    tags=TASKS,
    status_code=204,
    responses=NO_CONTENT,
)
async def archive_task(planId: uuid.UUID, taskId: uuid.UUID, ctx: Delete, uow: UoW) -> Response:
    """Archive a task."""
    session = await uow.session()
    await service.archive_child(session, ctx, PlanTask, planId, taskId)
    return Response(status_code=204)
