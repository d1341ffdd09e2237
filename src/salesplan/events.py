"""Which handler follows which domain event (`kit.events`): the whole wiring, in one place, the
composition root's.

A domain that emits an event defines it (a frozen dataclass beside the code that writes); a
domain that follows it provides the handler; this module connects the two. The unit of work
(`kit.uow`) runs the in-transaction handlers, in the order they are wired here, before COMMIT
and the after-commit ones after. A new webhook type is a `ResourceEvent` in its domain and one
`hooks.on(...)` line below.
"""

from __future__ import annotations

import functools

from salesplan.accounts.events import AccountCreated, AccountDeleted, AccountUpdated
from salesplan.calendar.events import (
    CalendarEventCreated,
    CalendarEventDeleted,
    CalendarEventUpdated,
)
from salesplan.contacts.events import ContactCreated, ContactDeleted, ContactUpdated
from salesplan.engage.delivery.events import (
    MessageBounced,
    MessageClicked,
    MessageDelivered,
    MessageFailed,
    MessageOpened,
    MessageReplied,
    MessageSent,
    ReplyReceived,
)
from salesplan.engage.events import CampaignCompleted, CampaignStarted
from salesplan.feed.events import FeedMessageReceived
from salesplan.feed.ingest import calendar_events_changed, messages_sent, replies_received
from salesplan.kit.events import EventHandlers
from salesplan.opportunities.events import (
    OpportunityCreated,
    OpportunityDeleted,
    OpportunityUpdated,
)
from salesplan.plans.changes import bump_versions
from salesplan.plans.events import (
    PlanChanged,
    PlanCreated,
    PlanDeleted,
    PlanUpdated,
    TaskCompleted,
    TaskCreated,
    TaskUpdated,
)
from salesplan.rooms import activity, notices
from salesplan.rooms.events import (
    RoomCommented,
    RoomInvited,
    RoomTaskCompleted,
    RoomTaskReopened,
    RoomViewed,
)
from salesplan.webhooks.events import Recorder
from salesplan.worker.context import JobDue, notify_workers, wake_in_process


def webhooks() -> Recorder:
    """Which domain event is which webhook type (contract §13)."""
    hooks = Recorder()
    hooks.on(AccountCreated, "account.created")
    hooks.on(AccountUpdated, "account.updated")
    hooks.on(AccountDeleted, "account.deleted")
    hooks.on(ContactCreated, "contact.created")
    hooks.on(ContactUpdated, "contact.updated")
    hooks.on(ContactDeleted, "contact.deleted")
    hooks.on(OpportunityCreated, "opportunity.created")
    hooks.on(OpportunityUpdated, "opportunity.updated")
    hooks.on(OpportunityDeleted, "opportunity.deleted")
    hooks.on(PlanCreated, "plan.created")
    hooks.on(PlanUpdated, "plan.updated")
    hooks.on(PlanDeleted, "plan.deleted")
    hooks.on(TaskCreated, "plan_task.created")
    hooks.on(TaskUpdated, "plan_task.updated")
    hooks.on(TaskCompleted, "plan_task.completed")
    hooks.on(MessageSent, "engage_message.sent")
    hooks.on(MessageDelivered, "engage_message.delivered")
    hooks.on(MessageBounced, "engage_message.bounced")
    hooks.on(MessageOpened, "engage_message.opened")
    hooks.on(MessageClicked, "engage_message.clicked")
    hooks.on(MessageReplied, "engage_message.replied")
    hooks.on(MessageFailed, "engage_message.failed")
    hooks.on(CampaignStarted, "engage_campaign.started")
    hooks.on(CampaignCompleted, "engage_campaign.completed")
    hooks.on(CalendarEventCreated, "calendar_event.created")
    hooks.on(CalendarEventUpdated, "calendar_event.updated")
    hooks.on(CalendarEventDeleted, "calendar_event.deleted")
    hooks.on(FeedMessageReceived, "feed_message.received")
    hooks.on(RoomViewed, "plan_room.viewed")
    hooks.on(RoomCommented, "plan_room.commented")
    hooks.on(RoomInvited, "plan_room.invited")
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
