"""Plans and `GET /tasks` (contract §7 "plans"); a plan's milestones, goals and tasks are
in `children_router.py`, mounted under the same prefix (`salesplan.routers`).

Responses are rendered from rows as the spec's exact objects (see render.py); the declared
response models document them. Every route reaches the database through the request's unit
of work (`db.UoW`)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import Response

from salesplan.db_dependencies import UoW, unit_of_work
from salesplan.kit.fields import Date
from salesplan.kit.list_query import CursorCodecDep, UpdatedSince, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import CONDITIONAL_READ, IF_MATCH, json_response
from salesplan.kit.tools import as_tool
from salesplan.plans import descriptions as text
from salesplan.plans import service, versioning
from salesplan.plans.dependencies import (
    NO_CONTENT,
    PLANS,
    Completed,
    Delete,
    IncludeArchived,
    Read,
    UserRead,
    Write,
    listed,
)
from salesplan.plans.schemas import (
    EntityType,
    PlanCreate,
    PlanListResponse,
    PlanOut,
    PlanUpdate,
    TaskList,
)

Include = Annotated[
    str | None,
    Query(
        description="Comma-separated: milestones, goals, tasks.",
        json_schema_extra={"pattern": service.INCLUDE_PATTERN},
    ),
]
IncludeAll = Annotated[
    str | None,
    Query(
        description="Comma-separated: milestones, goals, tasks. getPlan always answers all "
        "three (the plan in full): the value is only checked, so that a call shaped for "
        "listPlans works here too.",
        json_schema_extra={"pattern": service.INCLUDE_PATTERN},
    ),
]

router = APIRouter()
my_tasks_router = APIRouter(tags=["plan-tasks"])


# --- plans -----------------------------------------------------------------------------------


@router.get(
    "",
    operation_id="listPlans",
    tags=PLANS,
    response_model=PlanListResponse,
    summary="List plans",
    description=text.LIST_PLANS,
)
@as_tool(docs=text.LIST_PLANS_ARGS, brief=text.LIST_PLANS_BRIEF)
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
    include: Include = None,
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
    # The unit of work's read connection, no ORM session (autocommit on PostgreSQL); as a
    # block, not the dependency (db.unit_of_work: an exit stack less per request).
    async with unit_of_work(request) as uow:
        items, meta = await service.list_plans(
            await uow.reader(), ctx, params, filters, parts, codec
        )
    return listed(items, meta)


@router.post(
    "",
    operation_id="createPlan",
    tags=PLANS,
    status_code=201,
    response_model=PlanOut,
    summary="Create a plan",
    description=text.CREATE_PLAN,
)
@as_tool(docs=text.CREATE_PLAN_ARGS, brief=text.CREATE_PLAN_BRIEF)
async def create_plan(body: PlanCreate, ctx: Write, uow: UoW) -> Response:
    """Create a plan, optionally with its milestones, goals and tasks, in one transaction."""
    session = await uow.session()
    plan_id = await service.create_plan(session, ctx, body)
    return json_response(await service.plan_view(session, ctx, plan_id), 201)


@router.get(
    "/{planId}",
    operation_id="getPlan",
    openapi_extra=CONDITIONAL_READ,
    tags=PLANS,
    response_model=PlanOut,
    summary="Read a plan in full",
    description=text.GET_PLAN,
)
@as_tool(docs=text.GET_PLAN_ARGS)
async def get_plan(
    planId: uuid.UUID, ctx: Read, request: Request, include: IncludeAll = None
) -> Response:
    """Read a plan with its milestones, goals and tasks."""
    service.parse_include(include)  # checked (400), though the plan is always answered whole
    # ETag / If-None-Match (304) and the cached body: plans/versioning.py. The unit of work's
    # read connection, no ORM session (autocommit on PostgreSQL); as a block, not the
    # dependency (db.unit_of_work: an exit stack less per request).
    async with unit_of_work(request) as uow:
        return await versioning.get_plan(
            await uow.reader(),
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
    responses=IF_MATCH,
    summary="Update a plan",
    description=text.UPDATE_PLAN,
)
@as_tool(docs=text.UPDATE_PLAN_ARGS)
async def update_plan(
    planId: uuid.UUID, body: PlanUpdate, ctx: Write, uow: UoW, request: Request
) -> Response:
    """Update a plan's name, description or attachment. An `If-Match` naming getPlan's ETag
    is honoured: no longer current → 412 `precondition_failed`, nothing changed."""
    session = await uow.session()
    await service.update_plan(session, ctx, planId, body, request.headers.get("if-match"))
    return json_response(await service.plan_view(session, ctx, planId))


@router.delete(
    "/{planId}",
    operation_id="archivePlan",
    tags=PLANS,
    status_code=204,
    responses=NO_CONTENT | IF_MATCH,
)
async def archive_plan(planId: uuid.UUID, ctx: Delete, uow: UoW, request: Request) -> Response:
    """Archive a plan (`If-Match` honoured as on updatePlan)."""
    session = await uow.session()
    await service.archive_plan(session, ctx, planId, request.headers.get("if-match"))
    return Response(status_code=204)


@router.post(
    "/{planId}/restore",
    operation_id="restorePlan",
    tags=PLANS,
    response_model=PlanOut,
    responses=IF_MATCH,
)
async def restore_plan(planId: uuid.UUID, ctx: Write, uow: UoW, request: Request) -> Response:
    """Restore an archived plan (`If-Match` honoured as on updatePlan)."""
    session = await uow.session()
    await service.restore_plan(session, ctx, planId, request.headers.get("if-match"))
    return json_response(await service.plan_view(session, ctx, planId))


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
    uow: UoW,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "title"))],
    completed: Completed = None,
    plan_id: Annotated[uuid.UUID | None, Query(alias="planId")] = None,
    due_before: Annotated[Date | None, Query(alias="dueBefore")] = None,
) -> Response:
    """List the tasks assigned to the caller across all plans."""
    session = await uow.session()
    items, meta = await service.list_my_tasks(
        session, ctx, params, codec, completed=completed, plan_id=plan_id, due_before=due_before
    )
    return listed(items, meta)
