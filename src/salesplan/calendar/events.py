"""Events of the calendar (`kit.events`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from salesplan.kit.events import DomainEvent


@dataclass(frozen=True)
class CalendarEventChanged(DomainEvent):
    """A calendar event was created or changed (a sync, an update, the demo): the feed's
    meeting thread follows it, in the same transaction."""

    event_id: uuid.UUID
