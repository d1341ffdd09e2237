"""Calendar routes (contract §7 "calendar"; scopes `calendar:*`, user-backed tokens only)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.calendar import descriptions as text
from salesplan.calendar import service
from salesplan.calendar.schemas import (
    ActionItemOut,
    ArtifactsIn,
    ArtifactsOut,
    ConnectionIn,
    ConnectionOut,
    EventOut,
    EventPatch,
    SegmentOut,
    SummaryOut,
    TranscriptOut,
)
from salesplan.db_dependencies import SessionDep, UoW
from salesplan.kit import outbound
from salesplan.kit.fields import Instant
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response, page_response, tag_matches
from salesplan.kit.schemas import ListResponse
from salesplan.kit.tools import as_tool
from salesplan.models.calendar import CalendarArtifact

router = APIRouter(tags=["calendar"])

Read = Annotated[RequestContext, require("calendar:read", "calendar", user_token=True)]
Write = Annotated[RequestContext, require("calendar:write", "calendar", user_token=True)]
EventParams = Annotated[
    ListParams, list_params(("start", "createdAt", "updatedAt"), default="start")
]
ConnectionParams = Annotated[ListParams, list_params(("createdAt",))]
ItemParams = Annotated[ListParams, list_params(("position",), default="position")]


def _secret(request: Request) -> bytes:
    key: bytes = request.app.state.settings.signing_key
    return key


def artifacts_out(event: object, artifact: CalendarArtifact, items: list[object]) -> ArtifactsOut:
    a = artifact
    return ArtifactsOut(
        event_id=a.event_id,
        summary=a.summary,
        action_items=[ActionItemOut.model_validate(i) for i in items],
        transcript=None
        if a.transcript is None
        else TranscriptOut(
            event_id=a.event_id,
            segments=[SegmentOut(**s) for s in a.transcript],
        ),
        updated_at=a.updated_at,
    )


# -- connections ---------------------------------------------------------------------------


@router.get(
    "/connections",
    operation_id="listCalendarConnections",
    response_model=ListResponse[ConnectionOut],
)
async def list_connections(
    ctx: Read, session: SessionDep, codec: CursorCodecDep, params: ConnectionParams
) -> Response:
    """The caller's CalDAV connections (never their passwords)."""
    items, meta = await service.list_connections(session, ctx, params, codec)
    return page_response(ConnectionOut, items, meta)


@router.post(
    "/connections",
    operation_id="createCalendarConnection",
    status_code=201,
    response_model=ConnectionOut,
)
async def create_connection(
    body: ConnectionIn, ctx: Write, session: SessionDep, request: Request
) -> Response:
    """Connect a CalDAV calendar collection; checked against the server first (422 when it
    refuses). The first sync is queued."""
    conn = await service.create_connection(
        session, ctx, body, _secret(request), outbound.policy(request.app.state.settings)
    )
    return json_response(ConnectionOut.model_validate(conn), 201)


@router.delete(
    "/connections/{connectionId}", operation_id="deleteCalendarConnection", status_code=204
)
async def delete_connection(connectionId: uuid.UUID, ctx: Write, session: SessionDep) -> Response:
    """Disconnect (permanent): the stored password and the synced events are removed."""
    await service.delete_connection(session, ctx, connectionId)
    return Response(status_code=204)


@router.post(
    "/connections/{connectionId}/sync",
    operation_id="syncCalendarConnection",
    status_code=202,
    response_model=ConnectionOut,
)
async def sync_connection(connectionId: uuid.UUID, ctx: Write, session: SessionDep) -> Response:
    """Ask the worker to sync this connection now."""
    conn = await service.request_sync(session, ctx, connectionId)
    return json_response(ConnectionOut.model_validate(conn), 202)


# -- events --------------------------------------------------------------------------------


@router.get(
    "/events",
    operation_id="listCalendarEvents",
    response_model=ListResponse[EventOut],
    summary="List calendar events",
    description=text.LIST_CALENDAR_EVENTS,
)
@as_tool(docs=text.LIST_CALENDAR_EVENTS_ARGS)
async def list_events(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: EventParams,
    from_: Annotated[Instant | None, Query(alias="from")] = None,
    to: Annotated[Instant | None, Query(description="Not before `from` (else 400).")] = None,
    account_id: Annotated[uuid.UUID | None, Query(alias="accountId")] = None,
    user_id: Annotated[uuid.UUID | None, Query(alias="userId")] = None,
) -> Response:
    """Events overlapping [`from`, `to`), the caller's own unless `userId` names a teammate
    (admin and consultant members only)."""
    items, meta = await service.list_events(
        session, ctx, params, codec, start=from_, end=to, account_id=account_id, user_id=user_id
    )
    return json_response({"data": [EventOut.of(e) for e in items], "pagination": meta})


@router.get(
    "/events/{eventId}",
    operation_id="getCalendarEvent",
    response_model=EventOut,
    summary="Read a calendar event",
    description=text.GET_CALENDAR_EVENT,
)
@as_tool(docs=text.GET_CALENDAR_EVENT_ARGS)
async def get_event(
    eventId: uuid.UUID, ctx: Read, session: SessionDep, request: Request
) -> Response:
    """Read one event. Answers its `ETag` (the event's `etag`); `If-None-Match` naming it →
    304."""
    return _tagged(
        EventOut.of(await service.get_event(session, ctx, eventId)),
        request.headers.get("if-none-match"),
    )


def _tagged(out: EventOut, if_none_match: str | None = None) -> Response:
    """The event with its ETag header (304 without a body when `If-None-Match` names it)."""
    if tag_matches(if_none_match, out.etag):
        return Response(status_code=304, headers={"ETag": out.etag})
    return json_response(out, headers={"ETag": out.etag})


@router.patch(
    "/events/{eventId}",
    operation_id="updateCalendarEvent",
    response_model=EventOut,
    responses={
        409: {"description": "The event changed on the calendar server since the last sync."},
        412: {"description": "`If-Match` names a version of the event that is no longer current."},
        502: {"description": "The calendar server failed; nothing changed."},
    },
    summary="Update a calendar event",
    description=text.UPDATE_CALENDAR_EVENT,
)
@as_tool(docs=text.UPDATE_CALENDAR_EVENT_ARGS)
async def update_event(
    eventId: uuid.UUID, body: EventPatch, ctx: Write, uow: UoW, request: Request
) -> Response:
    """Change the caller's own event: pushed to the CalDAV server first (If-Match on its ETag);
    502 `provider_error` when the server fails, 409 `conflict` when it changed there. The
    client's `If-Match` (the event's `etag`) is honoured: no longer current → 412
    `precondition_failed`, nothing changed. Answers the event with its new `ETag`."""
    event = await service.update_event(
        uow,
        ctx,
        eventId,
        body,
        _secret(request),
        outbound.policy(request.app.state.settings),
        request.headers.get("if-match"),
    )
    return _tagged(EventOut.of(event))


@router.put(
    "/events/{eventId}/artifacts",
    operation_id="putCalendarEventArtifacts",
    response_model=ArtifactsOut,
)
async def put_artifacts(
    eventId: uuid.UUID, body: ArtifactsIn, ctx: Write, session: SessionDep
) -> Response:
    """Store a meeting's summary, action items and transcript (each part optional)."""
    event, artifact, items = await service.put_artifacts(session, ctx, eventId, body)
    return json_response(artifacts_out(event, artifact, list(items)))


@router.get(
    "/events/{eventId}/summary",
    operation_id="getCalendarEventSummary",
    response_model=SummaryOut,
    summary="Read a meeting summary",
    description=text.GET_CALENDAR_EVENT_SUMMARY,
)
@as_tool(docs=text.GET_CALENDAR_EVENT_SUMMARY_ARGS)
async def get_summary(eventId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """The meeting summary; 404 when none is stored."""
    a = await service.get_summary(session, ctx, eventId)
    summary = a.summary or ""
    return json_response(
        SummaryOut(
            event_id=a.event_id, summary=summary, updated_at=a.summary_updated_at or a.updated_at
        )
    )


@router.get(
    "/events/{eventId}/action-items",
    operation_id="getCalendarEventActionItems",
    response_model=ListResponse[ActionItemOut],
    summary="List a meeting's action items",
    description=text.GET_CALENDAR_EVENT_ACTION_ITEMS,
)
@as_tool(docs=text.GET_CALENDAR_EVENT_ACTION_ITEMS_ARGS)
async def get_action_items(
    eventId: uuid.UUID, ctx: Read, session: SessionDep, codec: CursorCodecDep, params: ItemParams
) -> Response:
    """The meeting's action items, in the order stored; 404 when none were stored."""
    items, meta = await service.list_action_items(session, ctx, eventId, params, codec)
    return page_response(ActionItemOut, items, meta)


@router.get(
    "/events/{eventId}/transcript",
    operation_id="getCalendarEventTranscript",
    response_model=TranscriptOut,
    summary="Read a meeting transcript",
    description=text.GET_CALENDAR_EVENT_TRANSCRIPT,
)
@as_tool(docs=text.GET_CALENDAR_EVENT_TRANSCRIPT_ARGS)
async def get_transcript(eventId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """The meeting transcript; 404 when none is stored."""
    a = await service.get_transcript(session, ctx, eventId)
    segments = [SegmentOut(**s) for s in a.transcript or []]
    return json_response(TranscriptOut(event_id=a.event_id, segments=segments))
