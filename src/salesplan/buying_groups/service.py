"""Buying groups: the default one of every account, and the ones users add."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.buying_groups.schemas import BuyingGroupIn, BuyingGroupOut, BuyingGroupPatch
from salesplan.errors import Unprocessable
from salesplan.kit.pagination import CursorCodec, ListParams, contains_ci, paginate
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import apply, archive, referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped, insert_ignoring_duplicates, scoped
from salesplan.models.crm import Account, BuyingGroup, BuyingGroupMember, Contact, Opportunity

SORT = {
    "createdAt": BuyingGroup.created_at,
    "updatedAt": BuyingGroup.updated_at,
    "name": BuyingGroup.name,
}


async def _members(
    session: AsyncSession, ctx: RequestContext, group_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, list[uuid.UUID]]:
    ids = list(group_ids)
    out: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
    if not ids:
        return out
    stmt = scoped(
        select(BuyingGroupMember.buying_group_id, BuyingGroupMember.contact_id)
        .where(BuyingGroupMember.buying_group_id.in_(ids))
        .order_by(BuyingGroupMember.id),
        ctx,
        BuyingGroupMember,
    )
    for group_id, contact_id in (await session.execute(stmt)).all():
        out[group_id].append(contact_id)
    return out


async def render(
    session: AsyncSession, ctx: RequestContext, groups: list[BuyingGroup]
) -> list[BuyingGroupOut]:
    members = await _members(session, ctx, (g.id for g in groups))
    return [
        BuyingGroupOut.model_validate(
            {
                "id": g.id,
                "account_id": g.account_id,
                "name": g.name,
                "description": g.description,
                "is_default": g.is_default,
                "opportunity_id": g.opportunity_id,
                "member_contact_ids": members.get(g.id, []),
                "archived_at": g.archived_at,
                "created_at": g.created_at,
                "updated_at": g.updated_at,
            }
        )
        for g in groups
    ]


async def render_one(
    session: AsyncSession, ctx: RequestContext, group: BuyingGroup
) -> BuyingGroupOut:
    return (await render(session, ctx, [group]))[0]


async def list_buying_groups(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    account_id: uuid.UUID | None = None,
    include_archived: bool = False,
) -> tuple[list[BuyingGroupOut], PaginationMeta]:
    stmt = scoped(select(BuyingGroup), ctx)
    if account_id is not None:
        stmt = stmt.where(BuyingGroup.account_id == account_id)
    if not include_archived:
        stmt = stmt.where(BuyingGroup.archived_at.is_(None))
    if params.search:
        stmt = stmt.where(contains_ci(BuyingGroup.name, params.search))
    items, meta = await paginate(
        session,
        stmt,
        params,
        sort_columns=SORT,
        id_column=BuyingGroup.id,
        codec=codec,
        scalars=True,
    )
    return await render(session, ctx, items), meta


async def get_buying_group(
    session: AsyncSession, ctx: RequestContext, group_id: uuid.UUID
) -> BuyingGroup:
    return await get_scoped(session, BuyingGroup, ctx, group_id)


async def _check_opportunity(
    session: AsyncSession,
    ctx: RequestContext,
    opportunity_id: uuid.UUID | None,
    account_id: uuid.UUID,
) -> None:
    if opportunity_id is None:
        return
    opp = await referenced(session, Opportunity, ctx, opportunity_id, "opportunityId")
    if opp.account_id != account_id:
        raise Unprocessable(
            "The opportunity belongs to another account.",
            details={"field": "opportunityId", "id": str(opportunity_id)},
        )


async def _check_contacts(
    session: AsyncSession, ctx: RequestContext, contact_ids: list[uuid.UUID], account_id: uuid.UUID
) -> list[uuid.UUID]:
    wanted = list(dict.fromkeys(contact_ids))
    if not wanted:
        return []
    stmt = scoped(
        select(Contact.id).where(
            Contact.id.in_(wanted),
            Contact.account_id == account_id,
            Contact.archived_at.is_(None),
        ),
        ctx,
    )
    found = set((await session.execute(stmt)).scalars())
    missing = [str(c) for c in wanted if c not in found]
    if missing:
        raise Unprocessable(
            "Some contacts do not exist in the organization or belong to another account.",
            details={"field": "memberContactIds", "ids": missing},
        )
    return wanted


async def add_member(
    session: AsyncSession, ctx: RequestContext, group: BuyingGroup, contact_id: uuid.UUID
) -> None:
    # ON CONFLICT DO NOTHING: two requests adding the same member at once both succeed.
    await insert_ignoring_duplicates(
        session,
        BuyingGroupMember,
        {
            "organization_id": ctx.organization_id,
            "buying_group_id": group.id,
            "contact_id": contact_id,
        },
        ["buying_group_id", "contact_id"],
    )


async def _set_members(
    session: AsyncSession, ctx: RequestContext, group: BuyingGroup, contact_ids: list[uuid.UUID]
) -> None:
    await session.execute(
        # The group was loaded through the organization's scope.
        delete(BuyingGroupMember).where(BuyingGroupMember.buying_group_id == group.id)
    )
    session.add_all(
        BuyingGroupMember(
            organization_id=ctx.organization_id, buying_group_id=group.id, contact_id=c
        )
        for c in contact_ids
    )
    await session.flush()


async def create_buying_group(
    session: AsyncSession, ctx: RequestContext, data: BuyingGroupIn
) -> BuyingGroup:
    account = await referenced(session, Account, ctx, data.account_id, "accountId")
    await _check_opportunity(session, ctx, data.opportunity_id, account.id)
    members = await _check_contacts(session, ctx, data.member_contact_ids, account.id)
    group = BuyingGroup(
        organization_id=ctx.organization_id,
        account_id=account.id,
        name=data.name,
        description=data.description,
        opportunity_id=data.opportunity_id,
        is_default=False,
    )
    session.add(group)
    await session.flush()
    await _set_members(session, ctx, group, members)
    return group


async def update_buying_group(
    session: AsyncSession, ctx: RequestContext, group_id: uuid.UUID, data: BuyingGroupPatch
) -> BuyingGroup:
    sent = data.sent()
    reject_nulls(sent, ("name",))
    group = await get_buying_group(session, ctx, group_id)
    if sent.get("opportunity_id") is not None:
        await _check_opportunity(session, ctx, sent["opportunity_id"], group.account_id)
    members = sent.pop("member_contact_ids", None)
    if members is not None:
        await _set_members(
            session, ctx, group, await _check_contacts(session, ctx, members, group.account_id)
        )
    apply(group, sent)
    await session.flush()
    return group


async def delete_buying_group(
    session: AsyncSession, ctx: RequestContext, group_id: uuid.UUID
) -> None:
    group = await get_buying_group(session, ctx, group_id)
    if group.is_default:
        raise Unprocessable(
            "The default buying group of an account cannot be deleted.",
            details={"id": str(group.id), "reason": "default_buying_group"},
        )
    archive(group)
    await session.flush()
