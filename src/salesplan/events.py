"""Which handler follows which domain event (`kit.events`): the whole wiring, in one place.

A domain that emits an event defines it (a frozen dataclass beside the code that writes); a
domain that follows it provides the handler; this module connects the two. The unit of work
(`kit.uow`) runs the in-transaction handlers before COMMIT and the after-commit ones after.
"""

from __future__ import annotations

import functools

from salesplan.kit.events import EventHandlers


@functools.cache
def handlers() -> EventHandlers:
    from salesplan.calendar.events import CalendarEventChanged
    from salesplan.engage.delivery.events import ReplyReceived
    from salesplan.feed.ingest import calendar_events_changed, replies_received
    from salesplan.plans.changes import PlanChanged, bump_versions
    from salesplan.worker.context import JobDue, notify_workers, wake_in_process

    wiring = EventHandlers()
    # The feed follows replies and meetings: their entries are written in the transaction
    # that stores the reply or the calendar event.
    wiring.during(ReplyReceived, replies_received)
    wiring.during(CalendarEventChanged, calendar_events_changed)
    # Work queued for the worker: NOTIFY in the transaction, the in-process loop after it.
    wiring.during(JobDue, notify_workers)
    wiring.after(JobDue, wake_in_process)
    # A plan written: its version (getPlan's ETag) bumped once, in the transaction.
    wiring.during(PlanChanged, bump_versions)
    return wiring
