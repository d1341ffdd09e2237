"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

EVENT_ID = "Id of the calendar event (an `id` from listCalendarEvents)."
EVENT_SHAPE = (
    "`{id, connectionId, userId, uid, title, description, location, start, end, allDay, "
    "recurring, recurrenceId, attendees: [{email, name, status}], organizerEmail, accountId, "
    "createdAt, updatedAt, etag}`"
)

LIST_CALENDAR_EVENTS = f"""
List the calendar events synced from the user's connected CalDAV calendars: `{{"data": [event],
"pagination"}}`, an event being {EVENT_SHAPE}. Filter by time (`from`, `to`: events overlapping
that range), by account (`accountId`: events where an attendee is one of its contacts or of its
domain). Admin and consultant members may read a teammate's events with `userId`; members get
`forbidden`. Sorted by `start` by default.
"""

GET_CALENDAR_EVENT = f"""
Read one synced calendar event by id: {EVENT_SHAPE}.
"""

GET_CALENDAR_EVENT_SUMMARY = """
The summary of a meeting: `{eventId, summary, updatedAt}`; `not_found` when none was stored.
"""

GET_CALENDAR_EVENT_ACTION_ITEMS = """
The action items of a meeting, in their stored order: `{"data": [{id, text, assigneeEmail,
dueDate, completed}], "pagination"}`; `not_found` when none were stored.
"""

GET_CALENDAR_EVENT_TRANSCRIPT = """
The transcript of a meeting: `{eventId, segments: [{speaker, startSeconds, text}]}`;
`not_found` when none was stored.
"""

UPDATE_CALENDAR_EVENT = """
Change the user's own calendar event (only the fields sent: title, description, start, end,
location, attendees). The change is written to the connected calendar server first and stored
only when the server accepted it: `provider_error` when the server fails (nothing changed),
`conflict` when the event changed on the server since the last sync (sync, re-read and retry),
`forbidden` on a teammate's event. An event keeps its id when it changes on the server. For one
occurrence of a recurring event (`recurring: true`) only that occurrence changes: it is written
as an override of the series. Over REST, `If-Match: <etag>` makes the change conditional
(`precondition_failed`, 412, when the event is no longer that version). Answers the event as
stored.
"""

LIST_CALENDAR_EVENTS_ARGS = {
    "accountId": "Only the events linked to this account id.",
    "from": "Only events ending after this date-time (ISO 8601, e.g. 2026-11-23T00:00:00Z).",
    "search": "Case-insensitive substring of the event's title.",
    "to": "Only events starting before this date-time (ISO 8601).",
    "userId": (
        "A teammate's user id, to read their events (admin and consultant members only); "
        "default the caller's own events."
    ),
}
GET_CALENDAR_EVENT_ARGS = {"eventId": EVENT_ID}
GET_CALENDAR_EVENT_SUMMARY_ARGS = {"eventId": EVENT_ID}
GET_CALENDAR_EVENT_ACTION_ITEMS_ARGS = {"eventId": EVENT_ID}
GET_CALENDAR_EVENT_TRANSCRIPT_ARGS = {"eventId": EVENT_ID}
UPDATE_CALENDAR_EVENT_ARGS = {
    "attendees": "The full new attendee list, `[{email, name}]`.",
    "description": "New description (null clears it).",
    "end": "New end, ISO 8601 date-time (not before start).",
    "eventId": EVENT_ID,
    "location": "New location (null clears it).",
    "start": "New start, ISO 8601 date-time.",
    "title": "New title.",
}
