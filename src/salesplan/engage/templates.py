"""Engage templates, and what a send renders from: merge fields for a contact, the sources of a
send that names a template or a draft. The statements are `engage.repository`'s."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.engage import render as merge
from salesplan.engage.repository import TemplateRepository
from salesplan.engage.schemas import TemplateIn, TemplatePatch
from salesplan.errors import Unprocessable, ValidationFailed
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.models.crm import Account, Contact
from salesplan.models.engage import EngageDraft, EngageTemplate
from salesplan.models.identity import Organization, User


async def list_templates(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    channel: str | None,
    include_archived: bool,
) -> tuple[list[EngageTemplate], PaginationMeta]:
    return await TemplateRepository(session, ctx).page(
        params, codec, channel=channel, include_archived=include_archived
    )


async def get_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID
) -> EngageTemplate:
    return await TemplateRepository(session, ctx).get(template_id)


async def _check_template_sources(
    subject: str | None, body: str | None, body_html: str | None
) -> None:
    """A 400 naming the field that does not parse, then a 422 when it does not render within
    its budget (contract §12)."""
    merge.check_syntax(subject, "subject")
    merge.check_syntax(body, "body")
    merge.check_syntax(body_html, "bodyHtml")
    await merge.check_renders(subject, body, body_html)


async def create_template(
    session: AsyncSession, ctx: RequestContext, data: TemplateIn
) -> EngageTemplate:
    await _check_template_sources(data.subject, data.body, data.body_html)
    return await TemplateRepository(session, ctx).insert(EngageTemplate(**data.model_dump()))


async def update_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID, data: TemplatePatch
) -> EngageTemplate:
    sent = data.sent()
    reject_nulls(sent, ("name", "channel", "body"))
    templates = TemplateRepository(session, ctx)
    template = await templates.get(template_id)
    after = {
        name: sent.get(name, getattr(template, name))
        for name in ("channel", "subject", "body", "body_html")
    }
    if after["channel"] == "EMAIL" and not after["subject"]:
        raise ValidationFailed.at(["body", "subject"], "subject is required for an EMAIL template.")
    await _check_template_sources(after["subject"], after["body"], after["body_html"])
    return await templates.update(template, sent)


async def archive_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID
) -> None:
    templates = TemplateRepository(session, ctx)
    await templates.archive(await templates.get(template_id))


async def preview_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID, contact_id: uuid.UUID
) -> dict[str, Any]:
    template = await get_template(session, ctx, template_id)
    contact = await referenced(session, Contact, ctx, contact_id, "contactId")
    result = await render_for_contact(
        session, ctx, contact, template.subject, template.body, template.body_html
    )
    return {
        "template_id": template.id,
        "contact_id": contact.id,
        "channel": template.channel,
        "subject": result.subject,
        "body": result.body,
        "body_html": result.body_html,
        "unknown_fields": result.unknown_fields,
    }


async def render_for_contact(
    session: AsyncSession,
    ctx: RequestContext,
    contact: Contact | None,
    subject: str | None,
    body: str,
    body_html: str | None,
) -> merge.Rendered:
    """Merge fields for `contact` (its account, the caller as sender, the organization); with no
    contact (a send to a bare address) the contact and account fields render empty. A render
    that stops is a 422 (`merge.RenderFailure.error`)."""
    result = await try_render_for_contact(session, ctx, contact, subject, body, body_html)
    if isinstance(result, merge.RenderFailure):
        raise result.error()
    return result


async def try_render_for_contact(
    session: AsyncSession,
    ctx: RequestContext,
    contact: Contact | None,
    subject: str | None,
    body: str,
    body_html: str | None,
) -> merge.Rendered | merge.RenderFailure:
    """`render_for_contact`, answering why a render stopped instead of raising it."""
    account = await session.get(Account, contact.account_id) if contact is not None else None
    sender = await session.get(User, ctx.user_id) if ctx.user_id else None
    organization = await session.get(Organization, ctx.organization_id)
    context = merge.merge_context(contact or Contact(), account, sender, organization)
    (result,) = await merge.render_many([merge.Job(subject, body, body_html, context)])
    return result


async def sendable_content(
    session: AsyncSession,
    ctx: RequestContext,
    *,
    channel: str,
    template_id: uuid.UUID | None,
    draft_id: uuid.UUID | None,
) -> tuple[str | None, str, str | None]:
    """(subject, body, bodyHtml) sources of a send that names a template or a draft: a live
    template of the send's channel, or a draft of that channel (its own text, else its
    template's). A reference to something missing or of another channel is a 422."""
    if draft_id is not None:
        draft: EngageDraft = await referenced(session, EngageDraft, ctx, draft_id, "draftId")
        _same_channel(draft.channel, channel, "draftId")
        subject, body, body_html = draft.subject, draft.body, draft.body_html
        if body is None and draft.template_id is not None:
            template = await referenced(session, EngageTemplate, ctx, draft.template_id, "draftId")
            subject = subject if subject is not None else template.subject
            body, body_html = template.body, body_html or template.body_html
        if not body:
            raise Unprocessable("The draft has no body.", details={"field": "draftId"})
        return subject, body, body_html
    assert template_id is not None
    template = await referenced(session, EngageTemplate, ctx, template_id, "templateId")
    _same_channel(template.channel, channel, "templateId")
    return template.subject, template.body, template.body_html


def _same_channel(found: str, wanted: str, field: str) -> None:
    if found != wanted:
        raise Unprocessable(
            f"The {field[:-2]} is for {found}, not {wanted}.",
            details={"field": field, "channel": found},
        )
