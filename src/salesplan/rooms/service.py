"""The seller's side of a buyer room (contract §16): shares, the room's settings and the plan
task comments (`comments.py`). The buyer's side is `buyer.py` (actions) and `access.py`
(sign-in); what a room shows is `view.py`. Services never commit."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.contacts.schemas import ContactIn
from salesplan.contacts.service import create_contact
from salesplan.errors import Unprocessable
from salesplan.kit.clock import utcnow
from salesplan.kit.email import mailbox
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import TenantScope, get_scoped, not_found
from salesplan.models.crm import Contact
from salesplan.models.engage_delivery import EngageMessage
from salesplan.models.plans import Plan
from salesplan.models.rooms import PlanRoom, PlanShare
from salesplan.plans.checks import plan_archived
from salesplan.rooms import access, mail
from salesplan.rooms import repository as repo
from salesplan.rooms.comments import create_comment, list_comments
from salesplan.rooms.schemas import RoomIn, RoomOut, ShareCreated, ShareIn, ShareOut

__all__ = [
    "create_comment",
    "create_share",
    "get_room",
    "list_comments",
    "list_shares",
    "revoke_share",
    "send_share",
    "share_out",
    "update_room",
]


def share_out(share: PlanShare) -> ShareOut:
    return ShareOut.model_validate(
        {**{c: getattr(share, c) for c in _SHARE_FIELDS}, "status": access.share_status(share)}
    )


_SHARE_FIELDS = tuple(f for f in ShareOut.model_fields if f != "status")


async def _shareable_plan(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> Any:
    """The plan (404) and its account: an archived plan (422) or a USER plan (422, it has no
    buyer) cannot be shared."""
    plan = await get_scoped(session, Plan, ctx, plan_id)
    if plan.archived_at is not None:
        raise plan_archived(plan_id)
    account = await repo.account_of_plan(session, ctx, plan_id)
    if account is None:
        raise Unprocessable(
            "A personal (USER) plan has no buyer to share it with: attach the plan to an "
            "account, opportunity or buying group.",
            details={"planId": str(plan_id), "reason": "plan_not_shareable"},
        )
    return account


def on_domain(address: str, domain: str | None) -> bool:
    """Whether the address is on the account's domain (`acme.com`, as written on the account:
    case, a scheme, `www.` and a path are ignored)."""
    if not domain:
        return False
    wanted = domain.strip().lower()
    wanted = wanted.split("://", 1)[-1].split("/", 1)[0].removeprefix("www.").rstrip(".")
    return mailbox(address).rpartition("@")[2].rstrip(".") == wanted


async def contact_for(
    session: AsyncSession,
    ctx: RequestContext,
    account: Any,
    *,
    contact_id: uuid.UUID | None,
    email: str | None,
    field: str,
) -> Contact:
    """The share's person: a live contact of the account with an address, or, for an address
    on the account's domain, its contact (created when there is none)."""
    account_id, _name, domain = account
    if contact_id is not None:
        contact = await repo.account_contact(session, ctx, account_id, contact_id)
        if contact is None:
            raise Unprocessable(
                "contactId must be a contact of the plan's account.",
                details={"field": "contactId", "id": str(contact_id)},
            )
        if not contact.email:
            raise Unprocessable(
                "The contact has no e-mail address to sign in with.",
                details={"field": "contactId", "reason": "no_email"},
            )
        return contact
    assert email is not None
    if not on_domain(email, domain):
        raise Unprocessable(
            "The address must be on the account's domain"
            + (f" ({domain})." if domain else "; the account has none set."),
            details={"field": field, "reason": "domain_mismatch", "domain": domain},
        )
    found = await repo.account_contact_by_mailbox(session, ctx, account_id, mailbox(email))
    if found is not None:
        return found
    return await create_contact(session, ctx, account_id, ContactIn(email=email))


async def create_share(
    session: AsyncSession,
    ctx: RequestContext,
    settings: Settings,
    plan_id: uuid.UUID,
    body: ShareIn,
) -> ShareCreated:
    account = await _shareable_plan(session, ctx, plan_id)
    if body.expires_at is not None and body.expires_at <= utcnow():
        raise Unprocessable("expiresAt must be in the future.", details={"field": "expiresAt"})
    contact = await contact_for(
        session, ctx, account, contact_id=body.contact_id, email=body.email, field="email"
    )
    share = await add_share(
        session,
        ctx,
        plan_id,
        contact,
        role=body.role,
        allow_invites=body.allow_invites,
        expires_at=body.expires_at,
        created_by_id=ctx.user_id,
    )
    token, digest = access.new_token()
    repo.add_link(session, share, digest)
    await session.flush()
    out = share_out(share)
    return ShareCreated(**out.model_dump(), url=access.room_url(settings.public_url, token))


async def add_share(
    session: AsyncSession,
    scope: TenantScope,
    plan_id: uuid.UUID,
    contact: Contact,
    **fields: Any,
) -> PlanShare:
    share = PlanShare(
        organization_id=scope.organization_id,
        plan_id=plan_id,
        contact_id=contact.id,
        email=mailbox(contact.email or ""),
        **fields,
    )
    session.add(share)
    await session.flush()
    return share


async def list_shares(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[ShareOut], PaginationMeta]:
    await get_scoped(session, Plan, ctx, plan_id)
    rows, meta = await repo.ShareRepository(session, ctx).list(
        params, codec, where=[PlanShare.plan_id == plan_id]
    )
    return [share_out(r) for r in rows], meta


async def _share(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, share_id: uuid.UUID
) -> PlanShare:
    await get_scoped(session, Plan, ctx, plan_id)
    share = await repo.ShareRepository(session, ctx).get(share_id, for_update=True)
    if share.plan_id != plan_id:
        raise not_found(PlanShare, share_id)
    return share


async def revoke_share(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, share_id: uuid.UUID
) -> None:
    """Revoked at once: the next request of any of its room sessions finds it revoked.
    Revoking a revoked share changes nothing (a second DELETE is a 204)."""
    share = await _share(session, ctx, plan_id, share_id)
    if share.revoked_at is None:
        share.revoked_at = utcnow()
        await session.flush()


async def send_share(
    session: AsyncSession,
    ctx: RequestContext,
    settings: Settings,
    plan_id: uuid.UUID,
    share_id: uuid.UUID,
) -> EngageMessage:
    """E-mail the share a link of its own (a new token: the first is shown once and stored
    only as a hash) through the Engage outbox."""
    share = await _share(session, ctx, plan_id, share_id)
    status = access.share_status(share)
    if status != "active":
        raise Unprocessable(
            f"The share is {status}; make a new one.",
            details={"shareId": str(share_id), "reason": f"share_{status}"},
        )
    if await mail.suppressed(session, share):
        raise Unprocessable(
            "The address is on the organization's suppression list.",
            details={"field": "email", "reason": "suppressed"},
        )
    plan = await get_scoped(session, Plan, ctx, plan_id)
    token, digest = access.new_token()
    repo.add_link(session, share, digest)
    sender = await repo.user_name(session, ctx.user_id)
    organization = await repo.organization_name(session, ctx)
    return await mail.queue(
        session,
        settings,
        share,
        mail.link_mail(plan.name, organization, sender),
        {mail.LINK: access.room_url(settings.public_url, token)},
    )


# --- the room's settings -------------------------------------------------------------------------


def _room_out(row: Any) -> RoomOut:
    if row is None:
        return RoomOut(
            hidden_milestone_ids=[], hidden_goal_ids=[], hidden_task_ids=[], welcome_message=None
        )
    return RoomOut(
        hidden_milestone_ids=row[0] or [],
        hidden_goal_ids=row[1] or [],
        hidden_task_ids=row[2] or [],
        welcome_message=row[3],
    )


async def get_room(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> RoomOut:
    await get_scoped(session, Plan, ctx, plan_id)
    return _room_out(await repo.room_settings(session, ctx, plan_id))


async def update_room(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: RoomIn
) -> RoomOut:
    """Replace the room's settings. Every hidden id must be the plan's (an archived item may
    stay hidden: restoring it does not show it)."""
    await get_scoped(session, Plan, ctx, plan_id, for_update=True)
    values: dict[str, Any] = {}
    for kind, field, ids in (
        ("milestones", "hiddenMilestoneIds", body.hidden_milestone_ids),
        ("goals", "hiddenGoalIds", body.hidden_goal_ids),
        ("tasks", "hiddenTaskIds", body.hidden_task_ids),
    ):
        unique = list(dict.fromkeys(ids))
        if unique:
            found = await repo.ids_of_plan(session, ctx, plan_id, kind, unique)
            if absent := [i for i in unique if i not in found]:
                raise Unprocessable(
                    f"{field} names {absent[0]}, which is not one of this plan's {kind}.",
                    details={"field": field, "id": str(absent[0])},
                )
        values[f"hidden_{kind[:-1]}_ids"] = [str(i) for i in unique]
    values["welcome_message"] = body.welcome_message or None
    row = await repo.room_row(session, ctx, plan_id)
    if row is None:
        session.add(PlanRoom(organization_id=ctx.organization_id, plan_id=plan_id, **values))
    else:
        for key, value in values.items():
            setattr(row, key, value)
        row.updated_at = utcnow()
    await session.flush()
    return _room_out(await repo.room_settings(session, ctx, plan_id))
