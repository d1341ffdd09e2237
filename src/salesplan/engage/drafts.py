"""Engage drafts: a message being written, for a contact, from a template or from scratch. The
statements are `engage.repository`'s."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.engage import render as merge
from salesplan.engage.repository import DraftRepository
from salesplan.engage.schemas import DraftIn, DraftPatch
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.models.crm import Contact
from salesplan.models.engage import EngageDraft, EngageTemplate


async def list_drafts(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    channel: str | None,
) -> tuple[list[EngageDraft], PaginationMeta]:
    return await DraftRepository(session, ctx).page(params, codec, channel=channel)


async def get_draft(session: AsyncSession, ctx: RequestContext, draft_id: uuid.UUID) -> EngageDraft:
    return await DraftRepository(session, ctx).get(draft_id)


async def _check_draft_refs(
    session: AsyncSession, ctx: RequestContext, fields: dict[str, Any]
) -> None:
    if fields.get("contact_id") is not None:
        await referenced(session, Contact, ctx, fields["contact_id"], "contactId")
    if fields.get("template_id") is not None:
        await referenced(session, EngageTemplate, ctx, fields["template_id"], "templateId")


async def create_draft(session: AsyncSession, ctx: RequestContext, data: DraftIn) -> EngageDraft:
    fields = data.model_dump()
    await _check_draft_refs(session, ctx, fields)
    await merge.check_renders(
        fields.get("subject"), fields.get("body"), fields.get("body_html"), unparsed_passes=True
    )
    draft = EngageDraft(created_by_id=ctx.user_id, **fields)
    return await DraftRepository(session, ctx).insert(draft)


async def update_draft(
    session: AsyncSession, ctx: RequestContext, draft_id: uuid.UUID, data: DraftPatch
) -> EngageDraft:
    sent = data.sent()
    reject_nulls(sent, ("channel",))
    drafts = DraftRepository(session, ctx)
    draft = await drafts.get(draft_id)
    await _check_draft_refs(session, ctx, sent)
    after = {
        name: sent.get(name, getattr(draft, name)) for name in ("subject", "body", "body_html")
    }
    await merge.check_renders(
        after["subject"], after["body"], after["body_html"], unparsed_passes=True
    )
    return await drafts.update(draft, sent)


async def delete_draft(session: AsyncSession, ctx: RequestContext, draft_id: uuid.UUID) -> None:
    """Permanent (spec "Archiving" 4): the row is gone."""
    drafts = DraftRepository(session, ctx)
    await drafts.delete(await drafts.get(draft_id))
