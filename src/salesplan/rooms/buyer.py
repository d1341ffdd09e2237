"""What a buyer may do in a room (contract §16): a viewer reads; a collaborator ticks and
unticks the tasks that are unassigned or assigned to a contact, comments on a visible task and,
where the share allows it, invites a colleague on the account's domain.

Every action is checked against the room's read model (`view.py`): a task the room does not
show does not exist for the buyer. A tick is `updatePlanTask` itself (the plans service), so it
moves what that moves (completion fields, the plan's ETag and version, the webhook events)."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.errors import AppError
from salesplan.kit.clock import utcnow
from salesplan.kit.email import is_email, mailbox
from salesplan.kit.events import emit
from salesplan.kit.uow import UnitOfWork
from salesplan.models.crm import Contact
from salesplan.models.rooms import PlanShare
from salesplan.plans import service as plans
from salesplan.plans.schemas import TaskUpdate
from salesplan.rooms import access, mail
from salesplan.rooms import repository as repo
from salesplan.rooms.comments import contact_comment
from salesplan.rooms.events import (
    RoomCommented,
    RoomInvited,
    RoomTaskCompleted,
    RoomTaskReopened,
)
from salesplan.rooms.schemas import MAX_COMMENT
from salesplan.rooms.service import add_share, contact_for
from salesplan.rooms.view import RoomPlan, RoomTask, room_plan

INVITES_PER_DAY = 10


class Refused(Exception):
    """An action the buyer may not take, in words for the page."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def context(share: PlanShare) -> RequestContext:
    """The plans service's context of a buyer's write: the share's organization, no user."""
    return RequestContext.internal(share.organization_id)


async def room(session: AsyncSession, share: PlanShare) -> RoomPlan:
    found = await room_plan(await session.connection(), share, share.plan_id)
    if found is None:
        raise Refused("This plan is no longer available.", 410)
    return found


def _collaborator(share: PlanShare) -> None:
    if share.role != "collaborator":
        raise Refused("You can read this plan; only collaborators can change it.", 403)


async def _visible_task(session: AsyncSession, share: PlanShare, task_id: uuid.UUID) -> RoomTask:
    task = (await room(session, share)).tasks.get(task_id)
    if task is None:
        raise Refused("That task is not in this plan.", 404)
    return task


async def set_completed(
    uow: UnitOfWork, share: PlanShare, task_id: uuid.UUID, completed: bool
) -> RoomTask:
    """Tick or untick a buyer task: the same write as updatePlanTask."""
    _collaborator(share)
    task = await _visible_task(await uow.session(), share, task_id)
    if not task.buyer_task:
        raise Refused("This task belongs to the seller's team; they will tick it.", 403)
    body = TaskUpdate.model_validate({"completed": completed})
    actor = {"type": "contact", "id": str(share.contact_id)}
    try:
        # One transaction: the task's write, its events and the room's activity.
        async with uow.atomic() as conn:
            await plans.update_task(conn, context(share), share.plan_id, task_id, body, actor=actor)
            if completed != task.completed:
                kind = RoomTaskCompleted if completed else RoomTaskReopened
                emit(conn, kind(*_who(share), task_id=task_id))
    except AppError as exc:  # archived meanwhile: the room's words, not the API's
        raise Refused("This task can no longer be changed.", 409) from exc
    return task


def _who(share: PlanShare) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID, uuid.UUID]:
    """An activity event's organization, plan, share and contact."""
    return share.organization_id, share.plan_id, share.id, share.contact_id


async def _contact_name(session: AsyncSession, share: PlanShare) -> str:
    contact = await session.get(Contact, share.contact_id)
    return (contact.full_name if contact is not None else "") or "A colleague"


async def comment(
    session: AsyncSession, share: PlanShare, task_id: uuid.UUID, text: object
) -> None:
    _collaborator(share)
    body = text.strip() if isinstance(text, str) else ""
    if not body or "\x00" in body:
        raise Refused("Write something first.")
    if len(body) > MAX_COMMENT:
        raise Refused(f"A comment is at most {MAX_COMMENT:,} characters.")
    await _visible_task(session, share, task_id)
    contact_comment(session, share, task_id, body, await _contact_name(session, share))
    emit(session, RoomCommented(*_who(share), task_id=task_id))
    await session.flush()


async def invite(
    session: AsyncSession, settings: Settings, share: PlanShare, email: object
) -> PlanShare:
    """A viewer share for a colleague on the account's domain, e-mailed its link."""
    _collaborator(share)
    if not share.allow_invites:
        raise Refused("This link does not allow inviting others.", 403)
    address = email.strip() if isinstance(email, str) else ""
    if not address or len(address) > 320 or not is_email(address):
        raise Refused("Enter your colleague's e-mail address.")
    ctx = context(share)
    account = await repo.account_of_plan(session, ctx, share.plan_id)
    if account is None:
        raise Refused("This plan is no longer available.", 410)
    if await repo.shares_sent_since(session, ctx, share.id, utcnow() - timedelta(days=1)) >= (
        INVITES_PER_DAY
    ):
        raise Refused("You sent the most invitations a day allows; try again tomorrow.", 429)
    if await mail.address_suppressed(session, ctx, address):
        raise Refused(f"We cannot e-mail {mailbox(address)}: the address opted out.", 422)
    try:
        contact = await contact_for(
            session, ctx, account, contact_id=None, email=address, field="email"
        )
    except AppError as exc:
        domain = account[2]
        raise Refused(f"Invite colleagues with an address at {domain}.") from exc
    invited = await add_share(
        session,
        ctx,
        share.plan_id,
        contact,
        role="viewer",
        allow_invites=False,
        invited_by_share_id=share.id,
        expires_at=share.expires_at,
        created_by_id=None,
    )
    token, digest = access.new_token()
    repo.add_link(session, invited, digest)
    emit(session, RoomInvited(*_who(share)))
    plan = await room(session, share)
    organization = await repo.organization_name(session, ctx)
    await mail.queue(
        session,
        settings,
        invited,
        mail.invite_mail(plan.name, organization, await _contact_name(session, share)),
        {mail.LINK: access.room_url(settings.public_url, token)},
    )
    return invited
