"""A plan's version (getPlan's ETag, `versioning.py`) follows every write to the plan or to its
milestones, goals and tasks: the writes say so with a domain event (`PlanUpdated`,
`PlanDeleted`, or `PlanChanged` for a bulk write, `plans/events.py`), and `bump_versions`,
wired to them in `salesplan.events`, bumps each plan once per transaction, just before COMMIT,
on the transaction's connection: the ORM path's and the driver path's alike. A plan created in
the transaction is not announced: it starts at version 1.

The one exception is updatePlanTask's one statement (`write_repository.task_update_at_once`),
which commits on its own: it runs `bump` (the same statement) as one of its CTEs, and only when
no other handler follows its events (`kit.events.interested(..., besides=[bump_versions])`).

Other readers see the transaction atomically: the bump and the writes it accounts for become
visible together, whatever their order inside it (see `versioning.PlanBodies`)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.kit.events import Db, emit
from salesplan.plans import repository as repo
from salesplan.plans.events import PlanChanged, PlanDeleted, PlanUpdated

VersionEvent = PlanChanged | PlanUpdated | PlanDeleted


def changed(db: Db, plan_id: uuid.UUID) -> None:
    """Announce a bulk write to the plan `plan_id` in `db`'s transaction."""
    emit(db, PlanChanged(plan_id))


async def bump_versions(conn: AsyncConnection, events: Sequence[VersionEvent]) -> None:
    """In the transaction, just before COMMIT: each plan of the batch bumped once, however
    many writes announced it (in id order: the order every plan write takes its locks)."""
    ids = sorted({event.plan_id for event in events}, key=str)
    if ids:
        await repo.bump_versions(conn, ids)
