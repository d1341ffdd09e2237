"""Every job kind the worker loop runs, one line per domain (see `worker/context.py`)."""

from __future__ import annotations

from salesplan.worker.context import JobKind


def job_kinds() -> list[JobKind]:
    """Imported lazily so that the loop module does not import every domain at start-up."""
    from salesplan.calendar.sync import run_calendar_sync

    kinds: list[JobKind] = []
    kinds.append(run_calendar_sync)
    return kinds
