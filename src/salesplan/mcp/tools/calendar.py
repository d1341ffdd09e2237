"""listCalendarEvents, getCalendarEvent, getCalendarEventSummary, getCalendarEventActionItems,
getCalendarEventTranscript, updateCalendarEvent: the spec's calendar tools, over the same
services as the REST routes (user-backed tokens only)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import Field

from salesplan.calendar import service
from salesplan.calendar.schemas import (
    ActionItemOut,
    EventOut,
    EventPatch,
    SegmentOut,
    SummaryOut,
    TranscriptOut,
)
from salesplan.kit.schemas import ListResponse
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ListArgs, ToolArgs, mcp_tool

EVENT_ID = "Id of the calendar event (an `id` from listCalendarEvents)."
EVENT_SHAPE = (
    "`{id, connectionId, userId, uid, title, description, location, start, end, allDay, "
    "recurring, recurrenceId, attendees: [{email, name, status}], organizerEmail, accountId, "
    "createdAt, updatedAt}`"
)


class ListCalendarEventsArgs(ListArgs):
    sortable = ("start", "createdAt", "updatedAt")
    default_sort = "start"
    docs = {"search": "Case-insensitive substring of the event's title."}

    from_: datetime | None = Field(
        default=None,
        alias="from",
        description="Only events ending after this date-time (ISO 8601, e.g. 2026-11-23T00:00:00Z).",
    )
    to: datetime | None = Field(
        default=None, description="Only events starting before this date-time (ISO 8601)."
    )
    account_id: uuid.UUID | None = Field(
        default=None, description="Only the events linked to this account id."
    )
    user_id: uuid.UUID | None = Field(
        default=None,
        description="A teammate's user id, to read their events (admin and consultant members "
        "only); default the caller's own events.",
    )


class EventArgs(ToolArgs):
    event_id: uuid.UUID = Field(description=EVENT_ID)


class ActionItemsArgs(ListArgs):
    sortable = ("position",)
    default_sort = "position"

    event_id: uuid.UUID = Field(description=EVENT_ID)


class UpdateCalendarEventArgs(ToolArgs, EventPatch):
    docs = {
        "eventId": EVENT_ID,
        "title": "New title.",
        "description": "New description (null clears it).",
        "start": "New start, ISO 8601 date-time.",
        "end": "New end, ISO 8601 date-time (not before start).",
        "location": "New location (null clears it).",
        "attendees": "The full new attendee list, `[{email, name}]`.",
    }

    event_id: uuid.UUID


@mcp_tool(
    "listCalendarEvents",
    scope="calendar:read",
    group="calendar",
    args=ListCalendarEventsArgs,
    user_token=True,
    title="List calendar events",
    description=f"""
List the calendar events synced from the user's connected CalDAV calendars: `{{"data": [event],
"pagination"}}`, an event being {EVENT_SHAPE}. Filter by time (`from`, `to`: events overlapping
that range), by account (`accountId`: events where an attendee is one of its contacts or of its
domain). Admin and consultant members may read a teammate's events with `userId`; members get
`forbidden`. Sorted by `start` by default.
""",
)
async def list_calendar_events(call: ToolCall, args: ListCalendarEventsArgs) -> Any:
    items, meta = await service.list_events(
        call.session,
        call.ctx,
        args.list_params(),
        call.codec,
        start=args.from_,
        end=args.to,
        account_id=args.account_id,
        user_id=args.user_id,
    )
    return ListResponse(data=[EventOut.of(e) for e in items], pagination=meta)


@mcp_tool(
    "getCalendarEvent",
    scope="calendar:read",
    group="calendar",
    args=EventArgs,
    user_token=True,
    title="Read a calendar event",
    description=f"Read one synced calendar event by id: {EVENT_SHAPE}.",
)
async def get_calendar_event(call: ToolCall, args: EventArgs) -> Any:
    return EventOut.of(await service.get_event(call.session, call.ctx, args.event_id))


@mcp_tool(
    "getCalendarEventSummary",
    scope="calendar:read",
    group="calendar",
    args=EventArgs,
    user_token=True,
    title="Read a meeting summary",
    description="""
The summary of a meeting: `{eventId, summary, updatedAt}`; `not_found` when none was stored.
""",
)
async def get_calendar_event_summary(call: ToolCall, args: EventArgs) -> Any:
    a = await service.get_summary(call.session, call.ctx, args.event_id)
    return SummaryOut(
        event_id=a.event_id,
        summary=a.summary or "",
        updated_at=a.summary_updated_at or a.updated_at,
    )


@mcp_tool(
    "getCalendarEventActionItems",
    scope="calendar:read",
    group="calendar",
    args=ActionItemsArgs,
    user_token=True,
    title="List a meeting's action items",
    description="""
The action items of a meeting, in their stored order: `{"data": [{id, text, assigneeEmail,
dueDate, completed}], "pagination"}`; `not_found` when none were stored.
""",
)
async def get_calendar_event_action_items(call: ToolCall, args: ActionItemsArgs) -> Any:
    items, meta = await service.list_action_items(
        call.session, call.ctx, args.event_id, args.list_params(), call.codec
    )
    return ListResponse(data=[ActionItemOut.model_validate(i) for i in items], pagination=meta)


@mcp_tool(
    "getCalendarEventTranscript",
    scope="calendar:read",
    group="calendar",
    args=EventArgs,
    user_token=True,
    title="Read a meeting transcript",
    description="""
The transcript of a meeting: `{eventId, segments: [{speaker, startSeconds, text}]}`;
`not_found` when none was stored.
""",
)
async def get_calendar_event_transcript(call: ToolCall, args: EventArgs) -> Any:
    a = await service.get_transcript(call.session, call.ctx, args.event_id)
    return TranscriptOut(
        event_id=a.event_id, segments=[SegmentOut(**s) for s in a.transcript or []]
    )


@mcp_tool(
    "updateCalendarEvent",
    scope="calendar:write",
    group="calendar",
    args=UpdateCalendarEventArgs,
    user_token=True,
    read_only=False,
    title="Update a calendar event",
    description="""
Change the user's own calendar event (only the fields sent: title, description, start, end,
location, attendees). The change is written to the connected calendar server first and stored
only when the server accepted it: `provider_error` when the server fails (nothing changed),
`conflict` when the event changed on the server since the last sync (sync, re-read and retry),
`forbidden` on a teammate's event. Answers the event as stored.
""",
)
async def update_calendar_event(call: ToolCall, args: UpdateCalendarEventArgs) -> Any:
    event = await service.update_event(
        call.session, call.ctx, args.event_id, args.body(EventPatch), call.settings.signing_key
    )
    return EventOut.of(event)
