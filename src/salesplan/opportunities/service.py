"""Opportunities: deals of an account."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.kit.pagination import CursorCodec, ListParams, contains_ci, paginate
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import apply, archive, flush_or_conflict, referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped, scoped
from salesplan.models.crm import Account, Opportunity
from salesplan.opportunities.schemas import OpportunityIn, OpportunityPatch
from salesplan.organizations.service import check_owner

SORT = {
    "createdAt": Opportunity.created_at,
    "updatedAt": Opportunity.updated_at,
    "name": Opportunity.name,
    "closeDate": Opportunity.close_date,
}


async def list_opportunities(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    account_id: uuid.UUID | None = None,
    stage: str | None = None,
    include_archived: bool = False,
) -> tuple[list[Opportunity], PaginationMeta]:
    stmt = scoped(select(Opportunity), ctx)
    if account_id is not None:
        stmt = stmt.where(Opportunity.account_id == account_id)
    if stage is not None:
        stmt = stmt.where(Opportunity.stage == stage)
    if not include_archived:
        stmt = stmt.where(Opportunity.archived_at.is_(None))
    if params.search:
        stmt = stmt.where(contains_ci(Opportunity.name, params.search))
    return await paginate(
        session,
        stmt,
        params,
        sort_columns=SORT,
        id_column=Opportunity.id,
        codec=codec,
        scalars=True,
    )


async def get_opportunity(
    session: AsyncSession, ctx: RequestContext, opportunity_id: uuid.UUID
) -> Opportunity:
    return await get_scoped(session, Opportunity, ctx, opportunity_id)


def _normalize(fields: dict[str, object]) -> dict[str, object]:
    if isinstance(fields.get("currency"), str):
        fields["currency"] = str(fields["currency"]).upper()
    return fields


async def create_opportunity(
    session: AsyncSession, ctx: RequestContext, data: OpportunityIn
) -> Opportunity:
    await referenced(session, Account, ctx, data.account_id, "accountId")
    await check_owner(session, ctx, data.owner_id)
    opp = Opportunity(organization_id=ctx.organization_id, **_normalize(data.model_dump()))
    session.add(opp)
    await flush_or_conflict(session, data.crm_id, "opportunity")
    return opp


async def replace_opportunity(
    session: AsyncSession, ctx: RequestContext, opportunity_id: uuid.UUID, data: OpportunityIn
) -> Opportunity:
    opp = await get_opportunity(session, ctx, opportunity_id)
    if data.account_id != opp.account_id:
        await referenced(session, Account, ctx, data.account_id, "accountId")
    await check_owner(session, ctx, data.owner_id)
    apply(opp, _normalize(data.model_dump()))
    await flush_or_conflict(session, data.crm_id, "opportunity")
    return opp


async def patch_opportunity(
    session: AsyncSession, ctx: RequestContext, opportunity_id: uuid.UUID, data: OpportunityPatch
) -> Opportunity:
    sent = data.sent()
    reject_nulls(sent, ("name", "account_id", "status"))
    opp = await get_opportunity(session, ctx, opportunity_id)
    if "account_id" in sent and sent["account_id"] != opp.account_id:
        await referenced(session, Account, ctx, sent["account_id"], "accountId")
    if sent.get("owner_id") is not None:
        await check_owner(session, ctx, sent["owner_id"])
    apply(opp, _normalize(sent))
    await flush_or_conflict(session, opp.crm_id, "opportunity")
    return opp


async def delete_opportunity(
    session: AsyncSession, ctx: RequestContext, opportunity_id: uuid.UUID
) -> None:
    archive(await get_opportunity(session, ctx, opportunity_id))
    await session.flush()
