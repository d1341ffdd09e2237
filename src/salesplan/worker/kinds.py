"""Every job kind the worker loop runs, one line per domain (see `worker/context.py`)."""

from __future__ import annotations

from salesplan.worker.context import JobKind


def job_kinds() -> list[JobKind]:
    """Imported lazily so that the loop module does not import every domain at start-up."""
    from salesplan.calendar.sync import run_calendar_sync
    from salesplan.engage.delivery.campaign_runs import run_campaign_steps
    from salesplan.engage.delivery.worker import run_delivery
    from salesplan.engage.enrollment import run_enrollment_jobs
    from salesplan.rooms.notices import run_room_digests
    from salesplan.webhooks.delivery import (
        PRUNE_EVERY_SECONDS,
        prune_webhook_events,
        run_webhook_delivery,
    )
    from salesplan.worker.pruning import (
        Periodic,
        idempotency_pruning,
        room_pruning,
        room_reminders,
    )

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
