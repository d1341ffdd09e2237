"""Leads: people not yet attached to an account."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.accounts.records import apply, archive, flush_or_conflict, reject_nulls
from salesplan.auth.principal import RequestContext
from salesplan.kit.pagination import CursorCodec, ListParams, contains_ci, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped, scoped
from salesplan.leads.schemas import LeadIn, LeadPatch
from salesplan.models.crm import Lead

SORT = {
    "createdAt": Lead.created_at,
    "updatedAt": Lead.updated_at,
    "lastName": Lead.last_name,
    "email": Lead.email,
}


async def list_leads(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    status: str | None = None,
    include_archived: bool = False,
) -> tuple[list[Lead], PaginationMeta]:
    stmt = scoped(select(Lead), ctx)
    if status is not None:
        stmt = stmt.where(Lead.status == status)
    if not include_archived:
        stmt = stmt.where(Lead.archived_at.is_(None))
    if params.search:
        term = params.search
        stmt = stmt.where(
            contains_ci(Lead.first_name, term)
            | contains_ci(Lead.last_name, term)
            | contains_ci(Lead.email, term)
            | contains_ci(Lead.company, term)
        )
    return await paginate(
        session, stmt, params, sort_columns=SORT, id_column=Lead.id, codec=codec, scalars=True
    )


async def get_lead(session: AsyncSession, ctx: RequestContext, lead_id: uuid.UUID) -> Lead:
    return await get_scoped(session, Lead, ctx, lead_id)


async def create_lead(session: AsyncSession, ctx: RequestContext, data: LeadIn) -> Lead:
    lead = Lead(organization_id=ctx.organization_id, **data.model_dump())
    session.add(lead)
    await flush_or_conflict(session, data.crm_id, "lead")
    return lead


async def update_lead(
    session: AsyncSession, ctx: RequestContext, lead_id: uuid.UUID, data: LeadPatch
) -> Lead:
    sent = data.sent()
    reject_nulls(sent, ("status",))
    lead = await get_lead(session, ctx, lead_id)
    apply(lead, sent)
    await flush_or_conflict(session, lead.crm_id, "lead")
    return lead


async def delete_lead(session: AsyncSession, ctx: RequestContext, lead_id: uuid.UUID) -> None:
    archive(await get_lead(session, ctx, lead_id))
    await session.flush()
