"""What the room tells by e-mail (contract §16 "Events and notices"), through the Engage outbox
(its transport, DKIM, sender caps, the suppression list, the one-click unsubscribe of §14):

- **The sellers' digest.** A buyer's comment or tick (`queue_digest`, a subscriber of their
  domain events, in the action's transaction) makes the plan's digest due; the worker
  (`run_room_digests`) claims due digests through `worker.claims` and e-mails the plan's
  creator and the seller assignees of the tasks concerned what happened since the last one:
  at most one digest per plan per 15 minutes (`DIGEST_EVERY`).
- **The buyers' reminders.** An open buyer task due tomorrow or overdue e-mails its contact
  (through one of the contact's live shares of the plan: the mail carries a link of its own),
  at most once a day per task (`send_reminders`, claimed through `worker.claims`). Nothing
  for a task the room hides, nothing to a suppressed address."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.config import Settings
from salesplan.engage.delivery.queue import outbox_message
from salesplan.kit import clock
from salesplan.kit.ids import uuid7
from salesplan.kit.scoping import OrgScope, TenantScope
from salesplan.rooms import access, mail
from salesplan.rooms import notices_repository as repo
from salesplan.rooms import repository as rooms_repo
from salesplan.rooms.events import RoomActivity
from salesplan.rooms.view import RoomPlan, room_plan
from salesplan.worker.context import WorkerContext, wake_worker

DIGEST_EVERY = timedelta(minutes=15)
LEASE = timedelta(minutes=5)
BATCH = 50
REMINDERS_EVERY_SECONDS = 600.0

_VERBS = {
    "task_completed": "completed",
    "task_reopened": "reopened",
    "commented": "commented on",
}


async def queue_digest(conn: AsyncConnection, events: Sequence[RoomActivity]) -> None:
    """In the transaction of a buyer's comment or tick: the plan's digest is due."""
    done: set[uuid.UUID] = set()
    for event in events:
        if event.plan_id not in done:
            done.add(event.plan_id)
            await repo.digest_due(conn, event.organization_id, event.plan_id, event.at)
    await wake_worker(conn)


async def run_room_digests(ctx: WorkerContext) -> int:
    """The due digests (whose plan had none in the last 15 minutes), one transaction."""
    now = clock.utcnow()
    lease = now + LEASE
    async with ctx.unit_of_work() as uow:
        session = await uow.session()
        claimed = await repo.claim_digests(session, now, now - DIGEST_EVERY, lease, BATCH)
        for plan_id, organization_id, since in claimed:
            scope = OrgScope(organization_id)
            await _digest(session, ctx.settings, scope, plan_id, since or now, now)
            await repo.digest_sent(session, plan_id, lease, now)
    return len(claimed)


async def _digest(
    session: AsyncSession,
    settings: Settings,
    scope: TenantScope,
    plan_id: uuid.UUID,
    since: datetime,
    now: datetime,
) -> None:
    acts = await repo.digested_activity(session, scope, plan_id, since, now)
    plan = await repo.plan_and_creator(session, scope, plan_id)
    if not acts or plan is None:
        return
    name, creator = plan
    tasks = {
        row[0]: (row[1], row[2])
        for row in await repo.tasks_of(session, scope, [a[2] for a in acts if a[2] is not None])
    }
    users = {creator} | {assignee for _, assignee in tasks.values()}
    recipients = await repo.members(session, scope, [u for u in users if u is not None])
    if not recipients:
        return
    contacts = {a[1] for a in acts if a[1] is not None}
    _, names = await rooms_repo.people(await session.connection(), scope, contacts)
    lines = []
    for kind, contact_id, task_id, _at in acts:
        who = names.get(contact_id, "") or "A buyer"
        title = tasks.get(task_id, ("a task", None))[0] if task_id else "a task"
        lines.append(f"{who} {_VERBS.get(kind, kind)} “{title}”.")
    body = mail.digest_mail(name, lines, f"{settings.public_url}/plan-rooms/{plan_id}")
    for _user_id, address in recipients:
        if await mail.address_suppressed(session, scope, address):
            continue
        message = outbox_message(
            settings,
            organization_id=scope.organization_id,
            channel="EMAIL",
            contact_id=None,
            to=address,
            subject=body.subject,
            body=body.text(),
            body_html=body.markup(),
        )
        session.add(message)
    await session.flush()
    await wake_worker(session)


async def send_reminders(ctx: WorkerContext) -> int:
    """Today's reminders of open buyer tasks due tomorrow or earlier, one transaction: each
    (task, contact) claimed at most once a day."""
    now = clock.utcnow()
    today = now.date()
    async with ctx.unit_of_work() as uow:
        session = await uow.session()
        found = [
            (org, task, contact)
            for org, task, contact in await repo.reminder_candidates(session, today, now, BATCH)
            if contact is not None
        ]
        if not found:
            return 0
        wanted = {(task_id, contact_id) for _, task_id, contact_id in found}
        await repo.add_reminders(
            session,
            [
                {"id": uuid7(), "organization_id": org, "task_id": task, "contact_id": contact}
                for org, task, contact in found
            ],
        )
        claimed = await repo.claim_reminders(session, [t for t, _ in wanted], today, BATCH)
        sent = 0
        rooms: dict[uuid.UUID, RoomPlan | None] = {}  # a plan's room read once a batch
        for organization_id, task_id, contact_id in claimed:
            if (task_id, contact_id) in wanted:  # (not a former assignee's reminder)
                scope = OrgScope(organization_id)
                sent += await _remind(session, ctx.settings, scope, task_id, contact_id, now, rooms)
    return sent


async def _remind(
    session: AsyncSession,
    settings: Settings,
    scope: TenantScope,
    task_id: uuid.UUID,
    contact_id: uuid.UUID,
    now: datetime,
    rooms: dict[uuid.UUID, RoomPlan | None],
) -> int:
    share = await repo.share_of(session, scope, task_id, contact_id, now)
    if share is None or await mail.suppressed(session, share):
        return 0
    if share.plan_id not in rooms:
        rooms[share.plan_id] = await room_plan(await session.connection(), share, share.plan_id)
    room = rooms[share.plan_id]
    task = room.tasks.get(task_id) if room is not None else None
    if room is None or task is None or task.target_date is None:  # hidden from the room
        return 0
    overdue = task.target_date < now.date()
    due = "tomorrow" if not overdue and task.target_date > now.date() else "today"
    if overdue:
        due = f"on {task.target_date.isoformat()}"
    token, digest = access.new_token()
    rooms_repo.add_link(session, share, digest)
    await mail.queue(
        session,
        settings,
        share,
        mail.reminder_mail(room.name, task.title, overdue, due),
        {mail.LINK: access.room_url(settings.public_url, token)},
    )
    return 1
