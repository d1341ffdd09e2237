"""A plan's milestones, goals and tasks (contract §7 "plans"), under `/plans/{planId}`:
mounted after `router.py`'s routes under the same prefix (`salesplan.routers`).

Responses are rendered from rows as the spec's exact objects (see render.py); the declared
response models document them. Every route reaches the database through the request's unit
of work (`db.UoW`). The three kinds share their create, read, update, archive and restore
routes: each is declared once below (`Child`, `*_route`) and named per kind."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, TypeVar, Unpack

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import UoW, unit_of_work
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.routes import Declared, Default, Flag, Run, endpoint, only_id
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

BY_TITLE = ("createdAt", "updatedAt", "title")
MilestoneId = Annotated[uuid.UUID | None, Query(alias="milestoneId")]

BodyT = TypeVar("BodyT", bound=BaseModel)
View = Callable[[AsyncSession, RequestContext, uuid.UUID, uuid.UUID], Awaitable[Obj]]
Change = Callable[[AsyncSession, RequestContext, uuid.UUID, uuid.UUID], Awaitable[None]]


@dataclass(frozen=True)
class Child:
    """One kind of a plan's children, at `/{planId}/<noun>s/{<id_name>}`, and its create,
    read, update, archive and restore routes: operations `<verb>Plan<noun>`, route functions
    `<verb>_<noun>`, answering `view` (archive: 204). Each route's parameters come in the
    hand-written order: planId, the child's id, body, ctx, uow."""

    noun: str
    id_name: str
    model: type[PlanMilestone] | type[PlanGoal] | type[PlanTask]
    tags: list[str | Enum]
    out: type[BaseModel]
    view: View

    def list_route(
        self,
        listing: type[BaseModel],
        doc: str,
        sortable: tuple[str, ...],
        sort_columns: Mapping[str, object],
        *,
        default_sort: str = "createdAt",
        **filters: Default,
    ) -> None:
        """`filters`: query parameters among `repo.child_filters`' (milestone_id, completed,
        assigned_to_id)."""

        async def run(
            planId: uuid.UUID,
            ctx: RequestContext,
            uow: UnitOfWork,
            codec: CursorCodec,
            params: ListParams,
            include_archived: bool,
            milestone_id: uuid.UUID | None = None,
            completed: bool | None = None,
            assigned_to_id: uuid.UUID | None = None,
        ) -> Response:
            session = await uow.session()
            where = repo.child_filters(
                self.model,
                milestone_id=milestone_id,
                completed=completed,
                assigned_to_id=assigned_to_id,
            )
            items, meta = await service.list_children(
                session,
                ctx,
                planId,
                self.model,
                params,
                codec,
                include_archived=include_archived,
                where=where,
                sort_columns=sort_columns,
            )
            return listed(items, meta)

        parameters = {
            "planId": uuid.UUID,
            "ctx": Read,
            "uow": UoW,
            "codec": CursorCodecDep,
            "params": Annotated[ListParams, list_params(sortable, default_sort)],
            "include_archived": Default(IncludeArchived, False),
            **filters,
        }
        self._add("GET", "", "list", doc, run, parameters, response_model=listing)

    def create_route(
        self,
        body: type[BodyT],
        create: Callable[[AsyncSession, RequestContext, uuid.UUID, BodyT], Awaitable[uuid.UUID]],
        doc: str,
        **declared: Unpack[Declared],
    ) -> None:
        async def run(
            planId: uuid.UUID, body: BodyT, ctx: RequestContext, uow: UnitOfWork
        ) -> Response:
            session = await uow.session()
            child_id = await create(session, ctx, planId, body)
            return json_response(await self.view(session, ctx, planId, child_id), 201)

        parameters = {"planId": uuid.UUID, "body": body, "ctx": Write, "uow": UoW}
        self._add("POST", "", "create", doc, run, parameters, 201, **declared)

    def read_route(self, doc: str) -> None:
        async def run(
            planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
        ) -> Response:
            session = await uow.session()
            await service.find_plan(session, ctx, planId)
            return json_response(await self.view(session, ctx, planId, only_id(ids)))

        parameters = {"planId": uuid.UUID, self.id_name: uuid.UUID, "ctx": Read, "uow": UoW}
        self._add("GET", self._one, "get", doc, run, parameters)

    def update_route(
        self,
        body: type[BodyT],
        update: Callable[
            [AsyncSession, RequestContext, uuid.UUID, uuid.UUID, BodyT], Awaitable[None]
        ],
        doc: str,
    ) -> None:
        async def run(
            planId: uuid.UUID, body: BodyT, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
        ) -> Response:
            session = await uow.session()
            await update(session, ctx, planId, only_id(ids), body)
            return json_response(await self.view(session, ctx, planId, only_id(ids)))

        parameters = {
            "planId": uuid.UUID,
            self.id_name: uuid.UUID,
            "body": body,
            "ctx": Write,
            "uow": UoW,
        }
        self._add("PATCH", self._one, "update", doc, run, parameters)

    def archive_route(self, doc: str) -> None:
        async def run(
            planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
        ) -> Response:
            session = await uow.session()
            await service.archive_child(session, ctx, self.model, planId, only_id(ids))
            return Response(status_code=204)

        parameters = {"planId": uuid.UUID, self.id_name: uuid.UUID, "ctx": Delete, "uow": UoW}
        self._add("DELETE", self._one, "archive", doc, run, parameters, 204)

    def restore_route(self, restore: Change, doc: str) -> None:
        async def run(
            planId: uuid.UUID, ctx: RequestContext, uow: UnitOfWork, **ids: uuid.UUID
        ) -> Response:
            session = await uow.session()
            await restore(session, ctx, planId, only_id(ids))
            return json_response(await self.view(session, ctx, planId, only_id(ids)))

        parameters = {"planId": uuid.UUID, self.id_name: uuid.UUID, "ctx": Write, "uow": UoW}
        self._add("POST", f"{self._one}/restore", "restore", doc, run, parameters)

    @property
    def _one(self) -> str:
        return f"/{{{self.id_name}}}"

    def _add(
        self,
        method: str,
        path: str,
        verb: str,
        doc: str,
        run: Run,
        parameters: Mapping[str, object],
        status_code: int | None = None,
        *,
        response_model: type[BaseModel] | None = None,
        summary: str | None = None,
        description: str | None = None,
        tool: Flag | None = None,
    ) -> None:
        plural = verb == "list"  # list_goals, listPlanGoals
        name = f"{verb}_{self.noun.lower()}{'s' if plural else ''}"
        route = endpoint(__name__, name, doc, run, **parameters)
        router.api_route(
            f"/{{planId}}/{self.noun.lower()}s{path}",
            methods=[method],
            operation_id=f"{verb}Plan{self.noun}{'s' if plural else ''}",
            tags=self.tags,
            status_code=status_code,
            response_model=None if status_code == 204 else response_model or self.out,
            responses=NO_CONTENT if status_code == 204 else None,
            summary=summary,
            description=description,
        )(tool(route) if tool is not None else route)


MILESTONE = Child(
    "Milestone", "milestoneId", PlanMilestone, MILESTONES, PlanMilestoneOut, service.milestone_view
)
GOAL = Child("Goal", "goalId", PlanGoal, GOALS, PlanGoalOut, service.goal_view)
TASK = Child("Task", "taskId", PlanTask, TASKS, PlanTaskOut, service.task_view)


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
