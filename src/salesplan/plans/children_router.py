"""A plan's milestones, goals and tasks (contract §7 "plans"), under `/plans/{planId}`:
mounted after `router.py`'s routes under the same prefix (`salesplan.routers`).

Responses are rendered from rows as the spec's exact objects (see render.py); the declared
response models document them. Every route reaches the database through the request's unit
of work (`db.UoW`). The three kinds share their create, read, update, archive and restore
routes: each is declared once below (`Child`, `*_route`) and named per kind."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, TypeVar

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import UoW, unit_of_work
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.routes import Run, endpoint, only_id
from salesplan.kit.tools import as_tool
from salesplan.kit.uow import UnitOfWork
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
from salesplan.plans.render import Obj
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

BodyT = TypeVar("BodyT", bound=BaseModel)
View = Callable[[AsyncSession, RequestContext, uuid.UUID, uuid.UUID], Awaitable[Obj]]
Change = Callable[[AsyncSession, RequestContext, uuid.UUID, uuid.UUID], Awaitable[None]]


@dataclass(frozen=True)
class Child:
    """One kind of a plan's children, at `/{planId}/<noun>s/{<id_name>}`: its operations are
    `<verb>Plan<noun>`, its route functions `<verb>_<noun>`, and it answers `view`."""

    noun: str
    id_name: str
    model: type[PlanMilestone] | type[PlanGoal] | type[PlanTask]
    tags: list[str | Enum]
    out: type[BaseModel]
    view: View

    @property
    def path(self) -> str:
        return f"/{{planId}}/{self.noun.lower()}s"

    @property
    def one(self) -> str:
        return f"{self.path}/{{{self.id_name}}}"

    def endpoint(self, verb: str, doc: str, run: Run, **parameters: object) -> Run:
        return endpoint(__name__, f"{verb}_{self.noun.lower()}", doc, run, **parameters)

    def operation(self, verb: str) -> str:
        return f"{verb}Plan{self.noun}"


def create_route(
    kind: Child,
    body: type[BodyT],
    create: Callable[[AsyncSession, RequestContext, uuid.UUID, BodyT], Awaitable[uuid.UUID]],
    doc: str,
    *,
    summary: str | None = None,
    description: str | None = None,
    tool: Callable[[Run], Run] | None = None,
) -> None:
    """`POST /{planId}/<noun>s`: 201 with the new child's view."""

    async def run(planId: uuid.UUID, body: BodyT, ctx: RequestContext, uow: UnitOfWork) -> Response:
        session = await uow.session()
        child_id = await create(session, ctx, planId, body)
        return json_response(await kind.view(session, ctx, planId, child_id), 201)

    route = kind.endpoint("create", doc, run, planId=uuid.UUID, body=body, ctx=Write, uow=UoW)
    router.post(
        kind.path,
        operation_id=kind.operation("create"),
        tags=kind.tags,
        status_code=201,
        response_model=kind.out,
        summary=summary,
        description=description,
    )(tool(route) if tool is not None else route)


def read_route(kind: Child, doc: str) -> None:
    """`GET /{planId}/<noun>s/{id}`: the child's view (404 without the plan)."""

    async def run(
        planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
    ) -> Response:
        session = await uow.session()
        await service.find_plan(session, ctx, planId)
        return json_response(await kind.view(session, ctx, planId, only_id(ids)))

    path_id = {kind.id_name: uuid.UUID}
    router.get(
        kind.one, operation_id=kind.operation("get"), tags=kind.tags, response_model=kind.out
    )(kind.endpoint("get", doc, run, planId=uuid.UUID, **path_id, ctx=Read, uow=UoW))


def update_route(
    kind: Child,
    body: type[BodyT],
    update: Callable[[AsyncSession, RequestContext, uuid.UUID, uuid.UUID, BodyT], Awaitable[None]],
    doc: str,
) -> None:
    """`PATCH /{planId}/<noun>s/{id}`: the fields sent; answers the child's view."""

    async def run(
        planId: uuid.UUID, body: BodyT, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
    ) -> Response:
        session = await uow.session()
        await update(session, ctx, planId, only_id(ids), body)
        return json_response(await kind.view(session, ctx, planId, only_id(ids)))

    path_id = {kind.id_name: uuid.UUID}
    router.patch(
        kind.one, operation_id=kind.operation("update"), tags=kind.tags, response_model=kind.out
    )(kind.endpoint("update", doc, run, planId=uuid.UUID, **path_id, body=body, ctx=Write, uow=UoW))


def archive_route(kind: Child, doc: str) -> None:
    """`DELETE /{planId}/<noun>s/{id}`: 204, archived (`service.archive_child`)."""

    async def run(
        planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
    ) -> Response:
        session = await uow.session()
        await service.archive_child(session, ctx, kind.model, planId, only_id(ids))
        return Response(status_code=204)

    path_id = {kind.id_name: uuid.UUID}
    router.delete(
        kind.one,
        operation_id=kind.operation("archive"),
        tags=kind.tags,
        status_code=204,
        responses=NO_CONTENT,
    )(kind.endpoint("archive", doc, run, planId=uuid.UUID, **path_id, ctx=Delete, uow=UoW))


def restore_route(kind: Child, restore: Change, doc: str) -> None:
    """`POST /{planId}/<noun>s/{id}/restore`: answers the restored child's view."""

    async def run(
        planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
    ) -> Response:
        session = await uow.session()
        await restore(session, ctx, planId, only_id(ids))
        return json_response(await kind.view(session, ctx, planId, only_id(ids)))

    path_id = {kind.id_name: uuid.UUID}
    router.post(
        f"{kind.one}/restore",
        operation_id=kind.operation("restore"),
        tags=kind.tags,
        response_model=kind.out,
    )(kind.endpoint("restore", doc, run, planId=uuid.UUID, **path_id, ctx=Write, uow=UoW))


MILESTONE = Child(
    "Milestone", "milestoneId", PlanMilestone, MILESTONES, PlanMilestoneOut, service.milestone_view
)
GOAL = Child("Goal", "goalId", PlanGoal, GOALS, PlanGoalOut, service.goal_view)
TASK = Child("Task", "taskId", PlanTask, TASKS, PlanTaskOut, service.task_view)


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


create_route(MILESTONE, MilestoneCreate, service.create_milestone, "Add a milestone to a plan.")


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


read_route(MILESTONE, "Read a milestone.")
update_route(MILESTONE, MilestoneUpdate, service.update_milestone, "Update a milestone.")
archive_route(MILESTONE, "Archive a milestone.")
restore_route(MILESTONE, service.restore_milestone, "Restore an archived milestone.")


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


create_route(GOAL, GoalCreate, service.create_goal, "Add a goal to a plan.")
read_route(GOAL, "Read a goal with its childGoals.")
update_route(GOAL, GoalUpdate, service.update_goal, "Update a goal.")
archive_route(GOAL, "Archive a goal and its descendants.")
restore_route(
    GOAL, service.restore_goal, "Restore an archived goal with the descendants archived with it."
)


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


create_route(
    TASK,
    TaskCreate,
    service.create_task,
    "Add a task to a plan.",
    summary="Add a task to a plan",
    description=text.CREATE_PLAN_TASK,
    tool=as_tool(docs=text.CREATE_PLAN_TASK_ARGS),
)
read_route(TASK, "Read a task.")


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


archive_route(TASK, "Archive a task.")
