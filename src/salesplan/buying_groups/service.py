"""Buying groups: the default one of every account, and the ones users add."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.buying_groups.repository import BuyingGroupRepository, add_member_statement
from salesplan.buying_groups.schemas import BuyingGroupIn, BuyingGroupOut, BuyingGroupPatch
from salesplan.errors import Unprocessable
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.models.crm import Account, BuyingGroup, Opportunity


async def render(
    session: AsyncSession, ctx: RequestContext, groups: list[BuyingGroup]
) -> list[BuyingGroupOut]:
    members = await BuyingGroupRepository(session, ctx).members(g.id for g in groups)
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
    where = [] if account_id is None else [BuyingGroup.account_id == account_id]
    items, meta = await BuyingGroupRepository(session, ctx).list(
        params, codec, where=where, include_archived=include_archived
    )
    return await render(session, ctx, items), meta


async def get_buying_group(
    session: AsyncSession, ctx: RequestContext, group_id: uuid.UUID
) -> BuyingGroup:
    return await BuyingGroupRepository(session, ctx).get(group_id)


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
    found = await BuyingGroupRepository(session, ctx).live_contacts_of_account(wanted, account_id)
    missing = [str(c) for c in wanted if c not in found]
    if missing:
        raise Unprocessable(
            "Some contacts do not exist in the organization or belong to another account.",
            details={"field": "memberContactIds", "ids": missing},
        )
    return wanted


async def add_member(
    conn: AsyncConnection, ctx: RequestContext, group_id: uuid.UUID, contact_id: uuid.UUID
) -> None:
    """The contact a member of the group (already one: nothing changes). The caller checked
    that both are the organization's and of one account."""
    params = {
        "organization_id": ctx.organization_id,
        "group_id": group_id,
        "contact_id": contact_id,
    }
    await add_member_statement(conn.dialect.name).fetchrow(conn, params)


async def create_buying_group(
    session: AsyncSession, ctx: RequestContext, data: BuyingGroupIn
) -> BuyingGroup:
    account = await referenced(session, Account, ctx, data.account_id, "accountId")
    await _check_opportunity(session, ctx, data.opportunity_id, account.id)
    members = await _check_contacts(session, ctx, data.member_contact_ids, account.id)
    groups = BuyingGroupRepository(session, ctx)
    group = BuyingGroup(
        account_id=account.id,
        name=data.name,
        description=data.description,
        opportunity_id=data.opportunity_id,
        is_default=False,
    )
    await groups.insert(group)
    await groups.set_members(group, members)
    return group


async def update_buying_group(
    session: AsyncSession, ctx: RequestContext, group_id: uuid.UUID, data: BuyingGroupPatch
) -> BuyingGroup:
    sent = data.sent()
    reject_nulls(sent, ("name",))
    groups = BuyingGroupRepository(session, ctx)
    group = await groups.get(group_id)
    if sent.get("opportunity_id") is not None:
        await _check_opportunity(session, ctx, sent["opportunity_id"], group.account_id)
    members = sent.pop("member_contact_ids", None)
    if members is not None:
        await groups.set_members(
            group, await _check_contacts(session, ctx, members, group.account_id)
        )
    return await groups.update(group, sent)


async def delete_buying_group(
    session: AsyncSession, ctx: RequestContext, group_id: uuid.UUID
) -> None:
    groups = BuyingGroupRepository(session, ctx)
    group = await groups.get(group_id)
    if group.is_default:
        raise Unprocessable(
            "The default buying group of an account cannot be deleted.",
            details={"id": str(group.id), "reason": "default_buying_group"},
        )
    await groups.archive(group)
