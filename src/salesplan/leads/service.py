"""Leads: people not yet attached to an account. The rules; the statements are
`LeadRepository`'s."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.schemas import PaginationMeta
from salesplan.leads.repository import LeadRepository
from salesplan.leads.schemas import LeadIn, LeadPatch
from salesplan.models.crm import Lead


async def list_leads(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    status: str | None = None,
    include_archived: bool = False,
    updated_since: datetime | None = None,
) -> tuple[list[Lead], PaginationMeta]:
    where = [] if status is None else [Lead.status == status]
    return await LeadRepository(session, ctx).list(
        params, codec, where=where, include_archived=include_archived, updated_since=updated_since
    )


async def get_lead(session: AsyncSession, ctx: RequestContext, lead_id: uuid.UUID) -> Lead:
    return await LeadRepository(session, ctx).get(lead_id)


async def create_lead(session: AsyncSession, ctx: RequestContext, data: LeadIn) -> Lead:
    return await LeadRepository(session, ctx).insert(Lead(**data.model_dump()))


async def update_lead(
    session: AsyncSession, ctx: RequestContext, lead_id: uuid.UUID, data: LeadPatch
) -> Lead:
    sent = data.sent()
    reject_nulls(sent, ("status",))
    leads = LeadRepository(session, ctx)
    return await leads.update(await leads.get(lead_id), sent)


async def delete_lead(session: AsyncSession, ctx: RequestContext, lead_id: uuid.UUID) -> None:
    leads = LeadRepository(session, ctx)
    await leads.archive(await leads.get(lead_id))
