"""A room's activity and each buyer's engagement (contract §16 "Activity and engagement").

Every buyer action is a domain event (`rooms.events`) emitted by the code that does it; the
subscriber `record`, wired in `salesplan.events`, writes its `plan_activity` row on the
transaction's connection, so that a rolled-back action leaves no row (and no webhook).

A view counts once per share per 30 minutes (`VIEW_EVERY`): the share's `view_counted_at`
says when the last one counted, moved in the statement that stamps `lastViewedAt` (kept to the
minute, `STAMP_EVERY`).

Engagement, per contact, is a score of 0 to 5 (`score`): one point each for a view in the
last 14 days, a second such view on another (UTC) day, a task completed, a comment, an
invitation sent, those three in the last 30 days. The counts beside it are of all time."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.kit import clock
from salesplan.kit.events import emit
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped
from salesplan.models.plans import Plan
from salesplan.models.rooms import PlanActivity, PlanShare
from salesplan.rooms import activity_repository as repo
from salesplan.rooms.access import DoorShare
from salesplan.rooms.events import RoomActivity, RoomViewed
from salesplan.rooms.schemas import ActivityOut, EngagementOut

VIEW_EVERY = timedelta(minutes=30)
# `lastViewedAt` is kept to the minute: a view within a minute of the last stamp (and within
# the counted half hour) writes nothing, so that a reloading buyer never queues on the row.
STAMP_EVERY = timedelta(minutes=1)
VIEWS_WITHIN = timedelta(days=14)
ACTIONS_WITHIN = timedelta(days=30)


async def record(conn: AsyncConnection, events: Sequence[RoomActivity]) -> None:
    """In the transaction of the actions: their activity rows (one statement)."""
    await repo.insert_activity(conn, [e.row() for e in events])


def view_due(share: PlanShare | DoorShare, now: datetime) -> bool:
    """Whether a view now writes anything: not when the share was stamped a moment ago and
    counted in this half hour."""
    last, counted_at = share.last_viewed_at, share.view_counted_at
    return not (last and counted_at and now - last < STAMP_EVERY and now - counted_at < VIEW_EVERY)


async def view(session: AsyncSession, share: PlanShare | DoorShare) -> bool:
    """A signed-in buyer opened the room: `lastViewedAt` now, and a `viewed` activity when
    none was counted for the share in the last 30 minutes. Whether it counted."""
    now = clock.utcnow()
    if not view_due(share, now):
        return False
    counted = await repo.viewed(session, share.id, now, now - VIEW_EVERY)
    if counted:
        emit(
            session,
            RoomViewed(share.organization_id, share.plan_id, share.id, share.contact_id, at=now),
        )
    return counted


# --- the seller's reads ----------------------------------------------------------------------------


def activity_out(row: PlanActivity) -> ActivityOut:
    return ActivityOut(
        id=row.id,
        type=row.type,
        share_id=row.share_id,
        contact_id=row.contact_id,
        task_id=row.task_id,
        created_at=row.created_at,
    )


async def list_activity(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[ActivityOut], PaginationMeta]:
    await get_scoped(session, Plan, ctx, plan_id)
    rows, meta = await repo.ActivityRepository(session, ctx).list(
        params, codec, where=[PlanActivity.plan_id == plan_id]
    )
    return [activity_out(r) for r in rows], meta


def score(timeline: Iterable[tuple[str, datetime]], now: datetime) -> int:
    """0 to 5 from one contact's activity (type, when): a view in the last 14 days, a second
    such view on another day, a task completed, a comment, an invitation sent (30 days)."""
    view_days: set[object] = set()
    acted: set[str] = set()
    for kind, at in timeline:
        if at > now:
            continue
        if kind == "viewed" and now - at <= VIEWS_WITHIN:
            view_days.add(at.date())
        elif kind in ("task_completed", "commented", "invited") and now - at <= ACTIONS_WITHIN:
            acted.add(kind)
    return min(len(view_days), 2) + len(acted)


@dataclass
class _Contact:
    name: str
    views: int = 0
    last_viewed_at: datetime | None = None
    tasks_completed: int = 0
    comments: int = 0
    timeline: list[tuple[str, datetime]] = field(default_factory=list)


async def engagement(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID
) -> list[EngagementOut]:
    """Every contact the plan was shared with (or who acted on it), most engaged first."""
    await get_scoped(session, Plan, ctx, plan_id)
    now = clock.utcnow()
    people = {
        row[0]: _Contact(" ".join(p for p in (row[1], row[2]) if p))
        for row in await repo.shared_contacts(session, ctx, plan_id)
    }
    for contact_id, kind, count, latest in await repo.totals(session, ctx, plan_id):
        person = people.get(contact_id) if contact_id is not None else None
        if person is None:  # a contact deleted meanwhile
            continue
        if kind == "viewed":
            person.views, person.last_viewed_at = int(count), latest
        elif kind == "task_completed":
            person.tasks_completed = int(count)
        elif kind == "commented":
            person.comments = int(count)
    for acted_by, kind, at in await repo.timeline(session, ctx, plan_id, now - ACTIONS_WITHIN):
        if acted_by is not None and acted_by in people:
            people[acted_by].timeline.append((kind, at))
    out = [
        EngagementOut(
            contact_id=contact_id,
            name=person.name,
            views=person.views,
            last_viewed_at=person.last_viewed_at,
            tasks_completed=person.tasks_completed,
            comments=person.comments,
            score=score(person.timeline, now),
        )
        for contact_id, person in people.items()
    ]
    out.sort(key=lambda e: (-e.score, e.name.lower(), str(e.contact_id)))
    return out
