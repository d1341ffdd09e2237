"""A plan's milestones, goals and tasks (contract §7 "plans"), under `/plans/{planId}`:
mounted after `router.py`'s routes under the same prefix (`salesplan.routers`).

Responses are rendered from rows as the spec's exact objects (see render.py); the declared
response models document them. Every route reaches the database through the request's unit
of work (`db.UoW`). The three kinds share their list, create, read, update, archive and
restore routes, each declared in a line through `Child` (child_routes.py)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from salesplan.db_dependencies import UoW, unit_of_work
from salesplan.kit.responses import json_response
from salesplan.kit.routes import Default
from salesplan.kit.tools import as_tool
from salesplan.models.plans import PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import descriptions as text
from salesplan.plans import service
from salesplan.plans.child_routes import Child
from salesplan.plans.dependencies import (
    GOALS,
    MILESTONES,
    TASKS,
    Completed,
    Write,
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

BY_TITLE = ("createdAt", "updatedAt", "title")
MilestoneId = Annotated[uuid.UUID | None, Query(alias="milestoneId")]

MILESTONE = Child(
    router,
    __name__,
    "Milestone",
    "milestoneId",
    PlanMilestone,
    MILESTONES,
    PlanMilestoneOut,
    service.milestone_view,
)
GOAL = Child(router, __name__, "Goal", "goalId", PlanGoal, GOALS, PlanGoalOut, service.goal_view)
TASK = Child(router, __name__, "Task", "taskId", PlanTask, TASKS, PlanTaskOut, service.task_view)


# --- milestones ------------------------------------------------------------------------------


MILESTONE.list_route(
    MilestoneList,
    "List a plan's milestones.",
    ("sortIndex", "createdAt", "updatedAt"),
    service.MILESTONE_SORT,
    default_sort="sortIndex",
)
MILESTONE.create_route(MilestoneCreate, service.create_milestone, "Add a milestone to a plan.")


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


MILESTONE.read_route("Read a milestone.")
MILESTONE.update_route(MilestoneUpdate, service.update_milestone, "Update a milestone.")
MILESTONE.archive_route("Archive a milestone.")
MILESTONE.restore_route(service.restore_milestone, "Restore an archived milestone.")


# --- goals -----------------------------------------------------------------------------------


GOAL.list_route(
    GoalList,
    "List a plan's goals (every goal, each with its childGoals).",
    BY_TITLE,
    service.GOAL_SORT,
    milestone_id=Default(MilestoneId, None),
)
GOAL.create_route(GoalCreate, service.create_goal, "Add a goal to a plan.")
GOAL.read_route("Read a goal with its childGoals.")
GOAL.update_route(GoalUpdate, service.update_goal, "Update a goal.")
GOAL.archive_route("Archive a goal and its descendants.")
GOAL.restore_route(
    service.restore_goal, "Restore an archived goal with the descendants archived with it."
)


# --- tasks -----------------------------------------------------------------------------------


TASK.list_route(
    TaskList,
    "List a plan's tasks.",
    BY_TITLE,
    service.TASK_SORT,
    completed=Default(Completed, None),
    milestone_id=Default(MilestoneId, None),
    assigned_to_id=Default(Annotated[uuid.UUID | None, Query(alias="assignedToId")], None),
)
TASK.create_route(
    TaskCreate,
    service.create_task,
    "Add a task to a plan.",
    summary="Add a task to a plan",
    description=text.CREATE_PLAN_TASK,
    tool=as_tool(docs=text.CREATE_PLAN_TASK_ARGS),
)
TASK.read_route("Read a task.")


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


TASK.archive_route("Archive a task.")
