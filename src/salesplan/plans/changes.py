"""`PlanChanged`: the domain event of every write to a plan or to its milestones, goals and
tasks, and its handler, which bumps the plans' versions (getPlan's ETag, `versioning.py`).

The code that writes says so (`changed(session, plan_id)`, or the repository's bulk writes for
every plan owning a row they match); the unit of work (`kit.uow.commit`) runs `bump_versions`
in the same transaction, just before COMMIT, once for the whole batch. A plan created in the
transaction is not announced: it starts at version 1. The driver's write paths
(updatePlanTask) bump inside their own statements and emit nothing.

Other readers see the transaction atomically: the bump and the writes it accounts for become
visible together, whatever their order inside it (see `versioning.PlanBodies`)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.engine import Connection

from salesplan.kit.events import Db, DomainEvent, emit
from salesplan.plans import repository as repo


@dataclass(frozen=True)
class PlanChanged(DomainEvent):
    """The plan, or one of its milestones, goals or tasks, was written."""

    plan_id: uuid.UUID


def changed(db: Db, plan_id: uuid.UUID) -> None:
    """Announce a write to the plan `plan_id` in `db`'s transaction."""
    emit(db, PlanChanged(plan_id))


def bump_versions(conn: Connection, events: Sequence[PlanChanged]) -> None:
    """In the transaction, just before COMMIT: one UPDATE bumping each plan of the batch
    once, however many writes announced it."""
    ids = sorted({event.plan_id for event in events}, key=str)
    if ids:
        conn.execute(repo.bump(ids))
