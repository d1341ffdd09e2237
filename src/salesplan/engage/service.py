"""Engage content and audiences: templates, drafts, lists, campaigns, enrollment jobs.
Services take `session, ctx`, raise AppErrors, never commit."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Select, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.engage import render as merge
from salesplan.engage.audience import audience_of_ids, audience_of_list
from salesplan.engage.delivery import sequence
from salesplan.engage.schemas import (
    CampaignIn,
    CampaignOut,
    CampaignPatch,
    DraftIn,
    DraftPatch,
    EnrollIn,
    FlowIn,
    ListIn,
    ListPatch,
    TemplateIn,
    TemplatePatch,
)
from salesplan.errors import Unprocessable, ValidationFailed, validation_errors
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams, contains_ci, paginate
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import apply, archive
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped, scoped
from salesplan.models.crm import Account, Contact
from salesplan.models.engage import (
    SKIP_REASONS,
    EngageCampaign,
    EngageDraft,
    EngageEnrollment,
    EngageEnrollmentJob,
    EngageList,
    EngageListMember,
    EngageTemplate,
)
from salesplan.models.identity import Organization, User
from salesplan.worker.context import wake_worker

# --- templates -----------------------------------------------------------------------------

TEMPLATE_SORT = {
    "createdAt": EngageTemplate.created_at,
    "updatedAt": EngageTemplate.updated_at,
    "name": EngageTemplate.name,
}


async def _list_rows(
    session: AsyncSession,
    ctx: RequestContext,
    model: Any,
    params: ListParams,
    codec: CursorCodec,
    sort: dict[str, Any],
    *,
    equal: dict[str, str | None],
    include_archived: bool = True,
    search: tuple[Any, ...] = (),
) -> tuple[list[Any], PaginationMeta]:
    """One organization's rows of `model`: the filters sent (column name → value), live rows
    unless `include_archived`, `search` as a case-insensitive substring of any of `search`'s
    columns, paginated per contract §4."""
    stmt = scoped(select(model), ctx)
    for column, value in equal.items():
        if value:
            stmt = stmt.where(getattr(model, column) == value)
    if not include_archived:
        stmt = stmt.where(model.archived_at.is_(None))
    if params.search and search:
        condition = contains_ci(search[0], params.search)
        for column in search[1:]:
            condition = condition | contains_ci(column, params.search)
        stmt = stmt.where(condition)
    return await paginate(
        session, stmt, params, sort_columns=sort, id_column=model.id, codec=codec, scalars=True
    )


async def list_templates(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    channel: str | None,
    include_archived: bool,
) -> tuple[list[EngageTemplate], PaginationMeta]:
    return await _list_rows(
        session,
        ctx,
        EngageTemplate,
        params,
        codec,
        TEMPLATE_SORT,
        equal={"channel": channel},
        include_archived=include_archived,
        search=(EngageTemplate.name,),
    )


async def get_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID
) -> EngageTemplate:
    return await get_scoped(session, EngageTemplate, ctx, template_id)


def _check_template_sources(subject: str | None, body: str | None, body_html: str | None) -> None:
    merge.check_syntax(subject, "subject")
    merge.check_syntax(body, "body")
    merge.check_syntax(body_html, "bodyHtml")


async def create_template(
    session: AsyncSession, ctx: RequestContext, data: TemplateIn
) -> EngageTemplate:
    _check_template_sources(data.subject, data.body, data.body_html)
    template = EngageTemplate(organization_id=ctx.organization_id, **data.model_dump())
    session.add(template)
    await session.flush()
    return template


async def update_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID, data: TemplatePatch
) -> EngageTemplate:
    sent = data.sent()
    reject_nulls(sent, ("name", "channel", "body"))
    template = await get_template(session, ctx, template_id)
    apply(template, sent)
    if template.channel == "EMAIL" and not template.subject:
        raise ValidationFailed.at(["body", "subject"], "subject is required for an EMAIL template.")
    _check_template_sources(template.subject, template.body, template.body_html)
    await session.flush()
    return template


async def archive_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID
) -> None:
    archive(await get_template(session, ctx, template_id))
    await session.flush()


async def preview_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID, contact_id: uuid.UUID
) -> dict[str, Any]:
    template = await get_template(session, ctx, template_id)
    contact = await _referenced_contact(session, ctx, contact_id, "contactId")
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
    contact (a send to a bare address) the contact and account fields render empty."""
    account = await session.get(Account, contact.account_id) if contact is not None else None
    sender = await session.get(User, ctx.user_id) if ctx.user_id else None
    organization = await session.get(Organization, ctx.organization_id)
    context = merge.merge_context(contact or Contact(), account, sender, organization)
    return merge.render(subject, body, body_html, context)


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
        draft: EngageDraft = await _referenced(session, ctx, EngageDraft, draft_id, "draftId")
        _same_channel(draft.channel, channel, "draftId")
        subject, body, body_html = draft.subject, draft.body, draft.body_html
        if body is None and draft.template_id is not None:
            template = await _referenced_template(session, ctx, draft.template_id, "draftId")
            subject = subject if subject is not None else template.subject
            body, body_html = template.body, body_html or template.body_html
        if not body:
            raise Unprocessable("The draft has no body.", details={"field": "draftId"})
        return subject, body, body_html
    assert template_id is not None
    template = await _referenced_template(session, ctx, template_id, "templateId")
    _same_channel(template.channel, channel, "templateId")
    return template.subject, template.body, template.body_html


def _same_channel(found: str, wanted: str, field: str) -> None:
    if found != wanted:
        raise Unprocessable(
            f"The {field[:-2]} is for {found}, not {wanted}.",
            details={"field": field, "channel": found},
        )


# --- references ----------------------------------------------------------------------------


async def _referenced(
    session: AsyncSession, ctx: RequestContext, model: Any, object_id: uuid.UUID, field: str
) -> Any:
    """A live row of the organization named in a request body, or a 422 naming the field."""
    stmt = scoped(select(model).where(model.id == object_id), ctx)
    if hasattr(model, "archived_at"):
        stmt = stmt.where(model.archived_at.is_(None))
    row = (await session.execute(stmt)).scalar_one_or_none()
    if row is None:
        raise Unprocessable(
            f"{model.__display_name__} {object_id} does not exist in the organization.",
            details={"field": field, "id": str(object_id)},
        )
    return row


async def _referenced_contact(
    session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID, field: str
) -> Contact:
    contact: Contact = await _referenced(session, ctx, Contact, contact_id, field)
    return contact


async def _referenced_template(
    session: AsyncSession, ctx: RequestContext, template_id: uuid.UUID, field: str
) -> EngageTemplate:
    template: EngageTemplate = await _referenced(session, ctx, EngageTemplate, template_id, field)
    return template


async def _missing_contacts(
    session: AsyncSession, ctx: RequestContext, contact_ids: set[uuid.UUID]
) -> list[uuid.UUID]:
    """The ids that are not live contacts of the organization, in one query."""
    stmt = scoped(select(Contact.id).where(Contact.id.in_(contact_ids)), ctx).where(
        Contact.archived_at.is_(None)
    )
    found = set((await session.execute(stmt)).scalars())
    return sorted(contact_ids - found)


def _reject_missing_contacts(missing: list[uuid.UUID], field: str) -> None:
    if missing:
        raise Unprocessable(
            f"{len(missing)} contact(s) do not exist in the organization.",
            details={"field": field, "ids": [str(m) for m in missing[:100]]},
        )


# --- drafts --------------------------------------------------------------------------------

DRAFT_SORT = {"createdAt": EngageDraft.created_at, "updatedAt": EngageDraft.updated_at}


async def list_drafts(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    channel: str | None,
) -> tuple[list[EngageDraft], PaginationMeta]:
    return await _list_rows(
        session,
        ctx,
        EngageDraft,
        params,
        codec,
        DRAFT_SORT,
        equal={"channel": channel},
        search=(EngageDraft.name, EngageDraft.subject),
    )


async def get_draft(session: AsyncSession, ctx: RequestContext, draft_id: uuid.UUID) -> EngageDraft:
    return await get_scoped(session, EngageDraft, ctx, draft_id)


async def _check_draft_refs(
    session: AsyncSession, ctx: RequestContext, fields: dict[str, Any]
) -> None:
    if fields.get("contact_id") is not None:
        await _referenced_contact(session, ctx, fields["contact_id"], "contactId")
    if fields.get("template_id") is not None:
        await _referenced_template(session, ctx, fields["template_id"], "templateId")


async def create_draft(session: AsyncSession, ctx: RequestContext, data: DraftIn) -> EngageDraft:
    fields = data.model_dump()
    await _check_draft_refs(session, ctx, fields)
    draft = EngageDraft(organization_id=ctx.organization_id, created_by_id=ctx.user_id, **fields)
    session.add(draft)
    await session.flush()
    return draft


async def update_draft(
    session: AsyncSession, ctx: RequestContext, draft_id: uuid.UUID, data: DraftPatch
) -> EngageDraft:
    sent = data.sent()
    reject_nulls(sent, ("channel",))
    draft = await get_draft(session, ctx, draft_id)
    await _check_draft_refs(session, ctx, sent)
    apply(draft, sent)
    await session.flush()
    return draft


async def delete_draft(session: AsyncSession, ctx: RequestContext, draft_id: uuid.UUID) -> None:
    """Permanent (spec "Archiving" 4): the row is gone."""
    await session.delete(await get_draft(session, ctx, draft_id))
    await session.flush()


# --- lists ---------------------------------------------------------------------------------

LIST_SORT = {
    "createdAt": EngageList.created_at,
    "updatedAt": EngageList.updated_at,
    "name": EngageList.name,
}


async def list_lists(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    list_type: str | None,
    include_archived: bool,
) -> tuple[list[EngageList], PaginationMeta]:
    return await _list_rows(
        session,
        ctx,
        EngageList,
        params,
        codec,
        LIST_SORT,
        equal={"type": list_type},
        include_archived=include_archived,
        search=(EngageList.name,),
    )


async def get_list(session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID) -> EngageList:
    return await get_scoped(session, EngageList, ctx, list_id)


async def _check_criteria_accounts(
    session: AsyncSession, ctx: RequestContext, criteria: dict[str, Any] | None
) -> None:
    ids = {uuid.UUID(str(a)) for a in (criteria or {}).get("accountIds") or []}
    if not ids:
        return
    stmt = scoped(select(Account.id).where(Account.id.in_(ids)), ctx)
    missing = ids - set((await session.execute(stmt)).scalars())
    if missing:
        raise Unprocessable(
            "criteria.accountIds names accounts that do not exist in the organization.",
            details={"field": "criteria.accountIds", "ids": sorted(str(m) for m in missing)},
        )


async def create_list(session: AsyncSession, ctx: RequestContext, data: ListIn) -> EngageList:
    criteria = data.criteria.wire() if data.criteria else None
    await _check_criteria_accounts(session, ctx, criteria)
    lst = EngageList(
        organization_id=ctx.organization_id,
        name=data.name,
        description=data.description,
        type=data.type,
        criteria=criteria,
    )
    session.add(lst)
    await session.flush()
    return lst


async def update_list(
    session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID, data: ListPatch
) -> EngageList:
    sent = data.sent()
    reject_nulls(sent, ("name",))
    lst = await get_list(session, ctx, list_id)
    if "criteria" in sent:
        if lst.type != "DYNAMIC":
            raise Unprocessable("Only a DYNAMIC list has criteria.", details={"field": "criteria"})
        if data.criteria is None:
            raise ValidationFailed.at(["body", "criteria"], "This field may not be null.")
        lst.criteria = data.criteria.wire()
        await _check_criteria_accounts(session, ctx, lst.criteria)
        del sent["criteria"]
    apply(lst, sent)
    await session.flush()
    return lst


async def archive_list(session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID) -> None:
    archive(await get_list(session, ctx, list_id))
    await session.flush()


MEMBER_SORT = {"contactId": Contact.id}


async def list_members(
    session: AsyncSession,
    ctx: RequestContext,
    list_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[dict[str, Any]], PaginationMeta]:
    """Keyset by contact id (cursor mode); a DYNAMIC list's criteria run as one SQL query."""
    lst = await get_list(session, ctx, list_id)
    if lst.type == "DYNAMIC":
        stmt: Select = audience_of_list(lst, Contact)  # type: ignore[type-arg]
        rows, meta = await paginate(
            session, stmt, params, sort_columns=MEMBER_SORT, id_column=Contact.id, codec=codec
        )
        return [{"contact_id": r[0].id, "contact": r[0], "added_at": None} for r in rows], meta
    stmt = audience_of_list(lst, Contact, EngageListMember.added_at)
    rows, meta = await paginate(
        session, stmt, params, sort_columns=MEMBER_SORT, id_column=Contact.id, codec=codec
    )
    return [{"contact_id": r[0].id, "contact": r[0], "added_at": r[1]} for r in rows], meta


def _manual(lst: EngageList) -> None:
    if lst.type == "DYNAMIC":
        raise Unprocessable(
            "A DYNAMIC list's members come from its criteria; they cannot be changed.",
            details={"reason": "dynamic_list"},
        )


def _insert_ignoring_duplicates(session: AsyncSession, table: Any) -> Any:
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    return dialect.insert(table).on_conflict_do_nothing()


async def add_members(
    session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID, contact_ids: list[uuid.UUID]
) -> dict[str, int]:
    lst = await get_list(session, ctx, list_id)
    _manual(lst)
    wanted = set(contact_ids)
    _reject_missing_contacts(await _missing_contacts(session, ctx, wanted), "contactIds")
    now = utcnow()
    stmt = (
        _insert_ignoring_duplicates(session, EngageListMember)
        .values(
            [
                {
                    "organization_id": ctx.organization_id,
                    "list_id": lst.id,
                    "contact_id": cid,
                    "added_at": now,
                }
                for cid in sorted(wanted)
            ]
        )
        .returning(EngageListMember.contact_id)
    )
    added = len((await session.execute(stmt)).all())
    lst.updated_at = now
    await session.flush()
    return {"added": added, "skipped": len(contact_ids) - added}


async def remove_member(
    session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID, contact_id: uuid.UUID
) -> None:
    lst = await get_list(session, ctx, list_id)
    _manual(lst)
    member = await session.get(EngageListMember, (lst.id, contact_id))
    if member is not None:
        await session.delete(member)
        lst.updated_at = utcnow()
        await session.flush()


# --- campaigns -----------------------------------------------------------------------------

CAMPAIGN_SORT = {
    "createdAt": EngageCampaign.created_at,
    "updatedAt": EngageCampaign.updated_at,
    "name": EngageCampaign.name,
}

# PATCH may move a campaign only along these edges. Only startEngageCampaign schedules steps: a
# draft activated by PATCH sends nothing until it is started. Pausing a started campaign holds
# its scheduled messages, resuming releases them, completing it cancels them.
TRANSITIONS: dict[str, set[str]] = {
    "draft": {"active"},
    "active": {"paused", "completed"},
    "paused": {"active", "completed"},
    "completed": set(),
}


async def list_campaigns(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    status: str | None,
) -> tuple[list[EngageCampaign], PaginationMeta]:
    return await _list_rows(
        session,
        ctx,
        EngageCampaign,
        params,
        codec,
        CAMPAIGN_SORT,
        equal={"status": status},
        search=(EngageCampaign.name,),
    )


async def get_campaign(
    session: AsyncSession, ctx: RequestContext, campaign_id: uuid.UUID
) -> EngageCampaign:
    return await get_scoped(session, EngageCampaign, ctx, campaign_id)


def _flow_problems(
    flow: FlowIn, templates: dict[uuid.UUID, str]
) -> tuple[str, dict[str, Any]] | None:
    """The first step whose template is missing (or archived) or of another channel."""
    for index, step in enumerate(flow.steps):
        field = f"flow.steps[{index}].templateId"
        channel = templates.get(step.template_id)
        if channel is None:
            return (
                f"Template {step.template_id} does not exist in the organization.",
                {"field": field, "id": str(step.template_id)},
            )
        if channel != step.channel:
            return (
                f"Step {index} is {step.channel} but its template is {channel}.",
                {"field": field, "id": str(step.template_id), "reason": "channel_mismatch"},
            )
    return None


async def _template_channels(
    session: AsyncSession, ctx: RequestContext, ids: set[uuid.UUID]
) -> dict[uuid.UUID, str]:
    if not ids:
        return {}
    stmt = scoped(
        select(EngageTemplate.id, EngageTemplate.channel).where(
            EngageTemplate.id.in_(ids), EngageTemplate.archived_at.is_(None)
        ),
        ctx,
    )
    return {row.id: row.channel for row in (await session.execute(stmt)).all()}


def _flow_wire(flow: FlowIn) -> dict[str, Any]:
    return flow.model_dump(mode="json", by_alias=True)


async def _check_flow(session: AsyncSession, ctx: RequestContext, flow: FlowIn) -> None:
    channels = await _template_channels(session, ctx, {s.template_id for s in flow.steps})
    problem = _flow_problems(flow, channels)
    if problem:
        raise Unprocessable(problem[0], details=problem[1])


async def create_campaign(
    session: AsyncSession, ctx: RequestContext, data: CampaignIn
) -> EngageCampaign:
    await _check_flow(session, ctx, data.flow)
    campaign = EngageCampaign(
        organization_id=ctx.organization_id,
        name=data.name,
        description=data.description,
        status="draft",
        flow=_flow_wire(data.flow),
    )
    session.add(campaign)
    await session.flush()
    return campaign


async def update_campaign(
    session: AsyncSession, ctx: RequestContext, campaign_id: uuid.UUID, data: CampaignPatch
) -> EngageCampaign:
    sent = data.sent()
    reject_nulls(sent, ("name", "flow", "status"))
    campaign = await get_campaign(session, ctx, campaign_id)
    if "flow" in sent:
        if campaign.status != "draft":
            raise Unprocessable(
                "The flow of a campaign can be changed only while it is a draft.",
                details={"field": "flow", "status": campaign.status},
            )
        assert data.flow is not None
        await _check_flow(session, ctx, data.flow)
        campaign.flow = _flow_wire(data.flow)
        del sent["flow"]
    new_status = sent.pop("status", None)
    if new_status is not None and new_status != campaign.status:
        if new_status not in TRANSITIONS[campaign.status]:
            raise Unprocessable(
                f"A {campaign.status} campaign cannot become {new_status}.",
                details={"field": "status", "from": campaign.status, "to": new_status},
            )
        campaign.status = new_status
    else:
        new_status = None
    apply(campaign, sent)
    campaign.updated_at = utcnow()
    # The campaign's row is written (and locked) first: the campaign job reads it FOR SHARE
    # while it schedules steps, so the messages below include any it was writing meanwhile.
    await session.flush()
    if new_status is not None and campaign.started_at is not None:
        # A started campaign's outbox rows follow it (issue 13, engage/delivery/sequence).
        if new_status == "paused":
            await sequence.hold(session, campaign.id)
        elif new_status == "active":
            await sequence.release(session, campaign.id)
        elif new_status == "completed":
            await sequence.stop_campaign(session, campaign.id)
    return campaign


def _row_error(code: str, message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details}


async def bulk_create_campaigns(
    session: AsyncSession, ctx: RequestContext, rows: list[Any]
) -> dict[str, Any]:
    """Create the valid rows, report every row: one query for every referenced template, one
    INSERT for every valid campaign."""
    results: list[dict[str, Any] | None] = [None] * len(rows)
    valid: list[tuple[int, CampaignIn]] = []
    for index, raw in enumerate(rows):
        try:
            if not isinstance(raw, dict):
                raise ValueError
            valid.append((index, CampaignIn.model_validate(raw)))
        except (ValidationError, ValueError) as exc:
            errors: list[dict[str, Any]] = (
                validation_errors(exc.errors())
                if isinstance(exc, ValidationError)
                else [{"location": [], "message": "Each campaign must be an object."}]
            )
            for err in errors:
                err["location"] = ["body", "campaigns", index, *err["location"]]
            results[index] = {
                "index": index,
                "status": 400,
                "error": _row_error(
                    "validation_error", "The campaign is not valid.", {"errors": errors}
                ),
            }
    ids = {s.template_id for _, c in valid for s in c.flow.steps}
    channels = await _template_channels(session, ctx, ids)
    now = utcnow()
    to_insert: list[tuple[int, EngageCampaign]] = []
    for index, data in valid:
        problem = _flow_problems(data.flow, channels)
        if problem:
            results[index] = {
                "index": index,
                "status": 422,
                "error": _row_error("unprocessable", problem[0], problem[1]),
            }
            continue
        to_insert.append(
            (
                index,
                EngageCampaign(
                    id=uuid.uuid4(),
                    organization_id=ctx.organization_id,
                    name=data.name,
                    description=data.description,
                    status="draft",
                    flow=_flow_wire(data.flow),
                    created_at=now,
                    updated_at=now,
                ),
            )
        )
    if to_insert:
        await session.execute(
            insert(EngageCampaign),
            [
                {
                    "id": c.id,
                    "organization_id": c.organization_id,
                    "name": c.name,
                    "description": c.description,
                    "status": c.status,
                    "flow": c.flow,
                    "created_at": now,
                    "updated_at": now,
                }
                for _, c in to_insert
            ],
        )
    for index, campaign in to_insert:
        results[index] = {
            "index": index,
            "status": 201,
            "data": CampaignOut.model_validate(campaign).model_dump(mode="json", by_alias=True),
        }
    created = len(to_insert)
    return {"results": results, "created": created, "failed": len(rows) - created}


# --- enrollments ---------------------------------------------------------------------------


async def enroll(
    session: AsyncSession, ctx: RequestContext, campaign_id: uuid.UUID, data: EnrollIn
) -> EngageEnrollmentJob:
    """Queue an enrollment job (the worker runs it in batches); answer at once."""
    campaign = await get_campaign(session, ctx, campaign_id)
    if campaign.status == "completed":
        raise Unprocessable(
            "A completed campaign takes no enrollments.", details={"status": campaign.status}
        )
    if data.list_id is not None:
        stmt = scoped(select(EngageList).where(EngageList.id == data.list_id), ctx).where(
            EngageList.archived_at.is_(None)
        )
        lst = (await session.execute(stmt)).scalar_one_or_none()
        if lst is None:
            raise Unprocessable(
                f"List {data.list_id} does not exist in the organization.",
                details={"field": "listId", "id": str(data.list_id)},
            )
        count_stmt = audience_of_list(lst, func.count(Contact.id))
        ids: list[str] | None = None
    else:
        wanted = set(data.contact_ids or [])
        _reject_missing_contacts(await _missing_contacts(session, ctx, wanted), "contactIds")
        ids = sorted(str(c) for c in wanted)
        count_stmt = audience_of_ids(ctx.organization_id, sorted(wanted), func.count(Contact.id))
    total = int((await session.execute(count_stmt)).scalar_one())
    job = EngageEnrollmentJob(
        organization_id=ctx.organization_id,
        campaign_id=campaign.id,
        list_id=data.list_id,
        contact_ids=ids,
        status="queued",
        total=total,
        skipped_reasons={reason: 0 for reason in SKIP_REASONS},
        errors=[],
    )
    session.add(job)
    await session.flush()
    await wake_worker(session)
    return job


async def get_job(
    session: AsyncSession, ctx: RequestContext, job_id: uuid.UUID
) -> EngageEnrollmentJob:
    return await get_scoped(session, EngageEnrollmentJob, ctx, job_id)


async def campaign_status(
    session: AsyncSession, ctx: RequestContext, campaign_id: uuid.UUID
) -> dict[str, Any]:
    """Counts per step and state, in one GROUP BY."""
    campaign = await get_campaign(session, ctx, campaign_id)
    stmt = (
        select(EngageEnrollment.current_step, EngageEnrollment.state, func.count())
        .where(EngageEnrollment.campaign_id == campaign.id)
        .group_by(EngageEnrollment.current_step, EngageEnrollment.state)
    )
    stmt = scoped(stmt, ctx, EngageEnrollment)
    by_step: dict[int, dict[str, int]] = {}
    states: dict[str, int] = {}
    for step, state, count in (await session.execute(stmt)).all():
        by_step.setdefault(step, {})[state] = count
        states[state] = states.get(state, 0) + count
    steps = [
        {
            "index": index,
            "channel": step["channel"],
            "template_id": step["templateId"],
            "delay_minutes": step["delayMinutes"],
            "states": by_step.get(index, {}),
        }
        for index, step in enumerate(campaign.flow.get("steps", []))
    ]
    return {
        "campaign_id": campaign.id,
        "status": campaign.status,
        "enrolled": sum(states.values()),
        "states": states,
        "steps": steps,
    }
