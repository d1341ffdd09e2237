"""Every job kind the worker loop runs, one line per domain (see `worker/context.py`)."""

from __future__ import annotations

from salesplan.calendar.sync import run_calendar_sync
from salesplan.engage.delivery.campaign_runs import run_campaign_steps
from salesplan.engage.delivery.worker import run_delivery
from salesplan.engage.enrollment import run_enrollment_jobs
from salesplan.jobs.pruning import Periodic, idempotency_pruning, room_pruning, room_reminders
from salesplan.rooms.notices import run_room_digests
from salesplan.webhooks.delivery import (
    PRUNE_EVERY_SECONDS,
    prune_webhook_events,
    run_webhook_delivery,
)
from salesplan.worker.context import JobKind


def job_kinds() -> list[JobKind]:
    """A fresh list each call: a `Periodic` keeps its clock per loop."""
    kinds: list[JobKind] = [
        run_enrollment_jobs,
        run_delivery,
        run_campaign_steps,
        run_calendar_sync,
        run_webhook_delivery,
        Periodic("run_webhook_prune", PRUNE_EVERY_SECONDS, prune_webhook_events),
        idempotency_pruning(),
        room_pruning(),
        run_room_digests,
        room_reminders(),
    ]
    return kinds
