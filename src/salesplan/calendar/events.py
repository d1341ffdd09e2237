"""What the calendar says happened to its events (`kit.events`): created, updated (a sync, an
update through the API, the demo) or deleted, each rendered as getCalendarEvent answers it
(`EventOut`) only for a subscriber. Who follows them is wired in `salesplan.events`: the
feed's meeting thread follows a created or updated event, in the same transaction, and the
webhooks record `calendar_event.*` (contract §13)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.calendar.schemas import EventOut
from salesplan.kit.events import Resource, RowEvent
from salesplan.models.calendar import CalendarEvent


class _CalendarEvent(RowEvent):
    schema = EventOut
    row: CalendarEvent

    async def resource(self, conn: AsyncConnection) -> Resource:
        return EventOut.of(self.row)


class CalendarEventCreated(_CalendarEvent):
    """A calendar event was stored for the first time."""


class CalendarEventUpdated(_CalendarEvent):
    """A stored calendar event changed."""


class CalendarEventDeleted(_CalendarEvent):
    """A calendar event is gone from its calendar (its row deleted)."""
