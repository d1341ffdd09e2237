"""Opportunities: deals of an account. The rules; the statements are
`OpportunityRepository`'s."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.kit.events import emit
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.models.crm import Account, Opportunity
from salesplan.opportunities.events import (
    OpportunityCreated,
    OpportunityDeleted,
    OpportunityUpdated,
)
from salesplan.opportunities.repository import OpportunityRepository
from salesplan.opportunities.schemas import OpportunityIn, OpportunityPatch
from salesplan.organizations.service import check_owner


async def list_opportunities(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    account_id: uuid.UUID | None = None,
    stage: str | None = None,
    include_archived: bool = False,
    updated_since: datetime | None = None,
) -> tuple[list[Opportunity], PaginationMeta]:
    where = []
    if account_id is not None:
        where.append(Opportunity.account_id == account_id)
    if stage is not None:
        where.append(Opportunity.stage == stage)
    return await OpportunityRepository(session, ctx).list(
        params, codec, where=where, include_archived=include_archived, updated_since=updated_since
    )


async def get_opportunity(
    session: AsyncSession, ctx: RequestContext, opportunity_id: uuid.UUID
) -> Opportunity:
    return await OpportunityRepository(session, ctx).get(opportunity_id)


def _normalize(fields: dict[str, object]) -> dict[str, object]:
    if isinstance(fields.get("currency"), str):
        fields["currency"] = str(fields["currency"]).upper()
    return fields


async def create_opportunity(
    session: AsyncSession, ctx: RequestContext, data: OpportunityIn
) -> Opportunity:
    await referenced(session, Account, ctx, data.account_id, "accountId")
    await check_owner(session, ctx, data.owner_id)
    opp = Opportunity(**_normalize(data.model_dump()))
    await OpportunityRepository(session, ctx).insert(opp)
    emit(session, OpportunityCreated(ctx.organization_id, opp))
    return opp


async def replace_opportunity(
    session: AsyncSession, ctx: RequestContext, opportunity_id: uuid.UUID, data: OpportunityIn
) -> Opportunity:
    opportunities = OpportunityRepository(session, ctx)
    opp = await opportunities.get(opportunity_id)
    if data.account_id != opp.account_id:
        await referenced(session, Account, ctx, data.account_id, "accountId")
    await check_owner(session, ctx, data.owner_id)
    await opportunities.update(opp, _normalize(data.model_dump()))
    emit(session, OpportunityUpdated(ctx.organization_id, opp))
    return opp


async def patch_opportunity(
    session: AsyncSession, ctx: RequestContext, opportunity_id: uuid.UUID, data: OpportunityPatch
) -> Opportunity:
    sent = data.sent()
    reject_nulls(sent, ("name", "account_id", "status"))
    opportunities = OpportunityRepository(session, ctx)
    opp = await opportunities.get(opportunity_id)
    if "account_id" in sent and sent["account_id"] != opp.account_id:
        await referenced(session, Account, ctx, sent["account_id"], "accountId")
    if sent.get("owner_id") is not None:
        await check_owner(session, ctx, sent["owner_id"])
    await opportunities.update(opp, _normalize(sent))
    emit(session, OpportunityUpdated(ctx.organization_id, opp))
    return opp


async def delete_opportunity(
    session: AsyncSession, ctx: RequestContext, opportunity_id: uuid.UUID
) -> None:
    opportunities = OpportunityRepository(session, ctx)
    opp = await opportunities.get(opportunity_id)
    if opp.archived_at is None:
        await opportunities.archive(opp)
        emit(session, OpportunityDeleted(ctx.organization_id, opp))
