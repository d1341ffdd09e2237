"""Which handler follows which domain event (`kit.events`): the whole wiring, in one place, the
composition root's.

A domain that emits an event defines it (a frozen dataclass beside the code that writes); a
domain that follows it provides the handler; this module connects the two. The unit of work
(`kit.uow`) runs the in-transaction handlers, in the order they are wired here, before COMMIT
and the after-commit ones after. A new webhook type is a `ResourceEvent` in its domain and one
entry in `webhooks/catalog.py`.
"""

from __future__ import annotations

import functools

from salesplan.calendar.events import CalendarEventCreated, CalendarEventUpdated
from salesplan.engage.delivery.events import MessageSent, ReplyReceived
from salesplan.feed.ingest import calendar_events_changed, messages_sent, replies_received
from salesplan.kit.events import EventHandlers
from salesplan.plans.changes import bump_versions
from salesplan.plans.events import PlanChanged, PlanDeleted, PlanUpdated
from salesplan.rooms import activity, notices
from salesplan.rooms.events import (
    RoomCommented,
    RoomInvited,
    RoomTaskCompleted,
    RoomTaskReopened,
    RoomViewed,
)
from salesplan.webhooks.catalog import CATALOG
from salesplan.webhooks.events import Recorder
from salesplan.worker.context import JobDue, notify_workers, wake_in_process


def webhooks() -> Recorder:
    """Which domain event is which webhook type (contract §13): every entry of the catalog
    (`webhooks/catalog.py`, one entry per type) that reports a domain event."""
    hooks = Recorder()
    for entry in CATALOG:
        if entry.event is not None:
            hooks.on(entry.event, entry.name)
    return hooks


ROOM_ACTIVITY = (RoomViewed, RoomTaskCompleted, RoomTaskReopened, RoomCommented, RoomInvited)


@functools.cache
def handlers() -> EventHandlers:
    wiring = EventHandlers()
    # A plan written: its version (getPlan's ETag) bumped once, in the transaction.
    wiring.during((PlanChanged, PlanUpdated, PlanDeleted), bump_versions)
    # The feed follows replies, meetings and sent e-mails: their entries are written in the
    # transaction that stores the reply, the calendar event or the send.
    wiring.during(ReplyReceived, replies_received)
    wiring.during((CalendarEventCreated, CalendarEventUpdated), calendar_events_changed)
    wiring.during(MessageSent, messages_sent)
    # A buyer's action in a room (contract §16): its activity row, in the action's transaction.
    wiring.during(ROOM_ACTIVITY, activity.record)
    # A buyer's comment or tick: the plan's digest to its sellers is due (sent by the worker).
    wiring.during((RoomCommented, RoomTaskCompleted, RoomTaskReopened), notices.queue_digest)
    # Outbound webhooks (contract §13): each event's row in the transaction of its change.
    hooks = webhooks()
    wiring.during(hooks.kinds, hooks.record, interest=hooks.interested)
    # Work queued for the worker: NOTIFY in the transaction, the in-process loop after it.
    wiring.during(JobDue, notify_workers)
    wiring.after(JobDue, wake_in_process)
    return wiring
