"""The seller's side of buyer rooms (contract §16), under `/plans/{planId}`: shares, the room's
settings and task comments. Scopes `plans:read` / `plans:write`, rate-limit group `plans`. The
buyer's pages are `web/buyer_rooms.py`."""

from __future__ import annotations

import uuid
from enum import Enum
from typing import Annotated

from fastapi import APIRouter, Request
from starlette.responses import Response

from salesplan.config import Settings
from salesplan.db_dependencies import SessionDep
from salesplan.engage.delivery.schemas import QueueItemOut, SendMessageOut
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.schemas import ListResponse
from salesplan.kit.tools import as_tool
from salesplan.plans.dependencies import Read, Write, listed
from salesplan.rooms import activity, service
from salesplan.rooms import descriptions as text
from salesplan.rooms.schemas import (
    ActivityOut,
    CommentIn,
    CommentOut,
    EngagementList,
    RoomIn,
    RoomOut,
    ShareCreated,
    ShareIn,
    ShareOut,
)

router = APIRouter()

ROOMS: list[str | Enum] = ["plan-rooms"]
Params = Annotated[ListParams, list_params(("createdAt", "updatedAt"))]
CommentParams = Annotated[ListParams, list_params(("createdAt",))]
ActivityParams = CommentParams


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _dumped(
    items: list[ShareOut] | list[CommentOut] | list[ActivityOut],
) -> list[dict[str, object]]:
    return [i.model_dump(mode="json", by_alias=True) for i in items]


@router.post(
    "/{planId}/shares",
    operation_id="createPlanShare",
    tags=ROOMS,
    status_code=201,
    response_model=ShareCreated,
    summary="Share a plan with a buyer",
    description=text.CREATE_PLAN_SHARE,
)
async def create_share(
    planId: uuid.UUID, body: ShareIn, ctx: Write, session: SessionDep, request: Request
) -> Response:
    """Share a plan with a contact of its account; the link is answered this once."""
    created = await service.create_share(session, ctx, _settings(request), planId, body)
    return json_response(created, 201)


@router.get(
    "/{planId}/shares",
    operation_id="listPlanShares",
    tags=ROOMS,
    response_model=ListResponse[ShareOut],
    summary="List a plan's shares",
    description=text.LIST_PLAN_SHARES,
)
@as_tool(docs=text.PLAN_ARGS)
async def list_shares(
    planId: uuid.UUID, ctx: Read, session: SessionDep, codec: CursorCodecDep, params: Params
) -> Response:
    """List the plan's shares (never their links)."""
    items, meta = await service.list_shares(session, ctx, planId, params, codec)
    return listed(_dumped(items), meta)


@router.delete(
    "/{planId}/shares/{shareId}",
    operation_id="revokePlanShare",
    tags=ROOMS,
    status_code=204,
    responses={204: {"description": "Revoked"}},
    summary="Revoke a share",
    description=text.REVOKE_PLAN_SHARE,
)
async def revoke_share(
    planId: uuid.UUID, shareId: uuid.UUID, ctx: Write, session: SessionDep
) -> Response:
    """Revoke a share at once."""
    await service.revoke_share(session, ctx, planId, shareId)
    return Response(status_code=204)


@router.post(
    "/{planId}/shares/{shareId}/send",
    operation_id="sendPlanShare",
    tags=ROOMS,
    status_code=202,
    response_model=SendMessageOut,
    summary="E-mail a share its link",
    description=text.SEND_PLAN_SHARE,
)
async def send_share(
    planId: uuid.UUID, shareId: uuid.UUID, ctx: Write, session: SessionDep, request: Request
) -> Response:
    """E-mail the buyer a link to the room through the Engage outbox."""
    message = await service.send_share(session, ctx, _settings(request), planId, shareId)
    return json_response(SendMessageOut(message=QueueItemOut.model_validate(message)), 202)


@router.get(
    "/{planId}/room",
    operation_id="getPlanRoom",
    tags=ROOMS,
    response_model=RoomOut,
    summary="Read a plan's room settings",
    description=text.GET_PLAN_ROOM,
)
async def get_room(planId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read what the plan's room hides and its welcome message."""
    return json_response(await service.get_room(session, ctx, planId))


@router.put(
    "/{planId}/room",
    operation_id="updatePlanRoom",
    tags=ROOMS,
    response_model=RoomOut,
    summary="Replace a plan's room settings",
    description=text.UPDATE_PLAN_ROOM,
)
async def update_room(planId: uuid.UUID, body: RoomIn, ctx: Write, session: SessionDep) -> Response:
    """Replace what the plan's room hides and its welcome message."""
    return json_response(await service.update_room(session, ctx, planId, body))


@router.get(
    "/{planId}/tasks/{taskId}/comments",
    operation_id="listPlanTaskComments",
    tags=ROOMS,
    response_model=ListResponse[CommentOut],
    summary="List a task's comments",
    description=text.LIST_PLAN_TASK_COMMENTS,
)
@as_tool(docs=text.TASK_ARGS)
async def list_comments(
    planId: uuid.UUID,
    taskId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: CommentParams,
) -> Response:
    """List the task's comments, oldest first."""
    items, meta = await service.list_comments(session, ctx, planId, taskId, params, codec)
    return listed(_dumped(items), meta)


@router.post(
    "/{planId}/tasks/{taskId}/comments",
    operation_id="createPlanTaskComment",
    tags=ROOMS,
    status_code=201,
    response_model=CommentOut,
    summary="Comment on a task",
    description=text.CREATE_PLAN_TASK_COMMENT,
)
@as_tool(docs=text.CREATE_PLAN_TASK_COMMENT_ARGS)
async def create_comment(
    planId: uuid.UUID, taskId: uuid.UUID, body: CommentIn, ctx: Write, session: SessionDep
) -> Response:
    """Comment on a task; `internal` comments stay on the seller's side."""
    return json_response(await service.create_comment(session, ctx, planId, taskId, body), 201)


@router.get(
    "/{planId}/activity",
    operation_id="listPlanActivity",
    tags=ROOMS,
    response_model=ListResponse[ActivityOut],
    summary="List what buyers did in a plan's room",
    description=text.LIST_PLAN_ACTIVITY,
)
@as_tool(docs=text.PLAN_ARGS)
async def list_activity(
    planId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: ActivityParams,
) -> Response:
    """List the room's activity, oldest first."""
    items, meta = await activity.list_activity(session, ctx, planId, params, codec)
    return listed(_dumped(items), meta)


@router.get(
    "/{planId}/engagement",
    operation_id="getPlanEngagement",
    tags=ROOMS,
    response_model=EngagementList,
    summary="How engaged each buyer of a plan is",
    description=text.GET_PLAN_ENGAGEMENT,
)
@as_tool(docs=text.PLAN_ARGS)
async def get_engagement(planId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Each buyer's views, ticks, comments and score (0 to 5)."""
    return json_response(EngagementList(data=await activity.engagement(session, ctx, planId)))
