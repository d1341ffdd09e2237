"""Engage content and audiences (contract §7 "engage"; scopes `engage:read|write`, group
`engage`). Sends, start, queue, replies and analytics are the delivery side's."""

from __future__ import annotations

import uuid
from enum import Enum
from typing import Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.db import SessionDep
from salesplan.engage import campaigns, drafts, lists, templates
from salesplan.engage.schemas import (
    BulkCampaignsIn,
    BulkCampaignsOut,
    CampaignIn,
    CampaignOut,
    CampaignPatch,
    CampaignStatus,
    CampaignStatusOut,
    Channel,
    DraftIn,
    DraftOut,
    DraftPatch,
    EnrollIn,
    JobEnvelope,
    JobOut,
    ListIn,
    ListOut,
    ListPatch,
    ListType,
    MemberOut,
    MembersAdded,
    MembersIn,
    PreviewIn,
    PreviewOut,
    TemplateIn,
    TemplateOut,
    TemplatePatch,
)
from salesplan.kit.pagination import CursorCodecDep, ListParams, list_params
from salesplan.kit.responses import json_response, page_response
from salesplan.kit.schemas import ListResponse

router = APIRouter()

Read = Annotated[RequestContext, require("engage:read", "engage")]
Write = Annotated[RequestContext, require("engage:write", "engage")]
IncludeArchived = Annotated[bool, Query(alias="includeArchived")]

TEMPLATES: list[str | Enum] = ["engage-templates"]
DRAFTS: list[str | Enum] = ["engage-drafts"]
LISTS: list[str | Enum] = ["engage-lists"]
CAMPAIGNS: list[str | Enum] = ["engage-campaigns"]

# --- templates -----------------------------------------------------------------------------


@router.get(
    "/templates",
    operation_id="listEngageTemplates",
    tags=TEMPLATES,
    response_model=ListResponse[TemplateOut],
)
async def list_templates(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "name"))],
    channel: Annotated[Channel | None, Query()] = None,
    include_archived: IncludeArchived = False,
) -> Response:
    """List message templates."""
    items, meta = await templates.list_templates(
        session, ctx, params, codec, channel=channel, include_archived=include_archived
    )
    return page_response(TemplateOut, items, meta)


@router.post(
    "/templates",
    operation_id="createEngageTemplate",
    tags=TEMPLATES,
    status_code=201,
    response_model=TemplateOut,
)
async def create_template(body: TemplateIn, ctx: Write, session: SessionDep) -> Response:
    """Create a template (EMAIL needs a subject); merge fields like {{ contact.firstName }}."""
    return json_response(
        TemplateOut.model_validate(await templates.create_template(session, ctx, body)), 201
    )


@router.get(
    "/templates/{templateId}",
    operation_id="getEngageTemplate",
    tags=TEMPLATES,
    response_model=TemplateOut,
)
async def get_template(templateId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read one template (archived ones too)."""
    return json_response(
        TemplateOut.model_validate(await templates.get_template(session, ctx, templateId))
    )


@router.patch(
    "/templates/{templateId}",
    operation_id="updateEngageTemplate",
    tags=TEMPLATES,
    response_model=TemplateOut,
)
async def update_template(
    templateId: uuid.UUID, body: TemplatePatch, ctx: Write, session: SessionDep
) -> Response:
    """Change the fields sent."""
    return json_response(
        TemplateOut.model_validate(await templates.update_template(session, ctx, templateId, body))
    )


@router.delete(
    "/templates/{templateId}", operation_id="archiveEngageTemplate", tags=TEMPLATES, status_code=204
)
async def archive_template(templateId: uuid.UUID, ctx: Write, session: SessionDep) -> Response:
    """Archive a template."""
    await templates.archive_template(session, ctx, templateId)
    return Response(status_code=204)


@router.post(
    "/templates/{templateId}/preview",
    operation_id="previewEngageTemplate",
    tags=TEMPLATES,
    response_model=PreviewOut,
)
async def preview_template(
    templateId: uuid.UUID, body: PreviewIn, ctx: Read, session: SessionDep
) -> Response:
    """Render a template for a contact; lists the merge fields that had no value."""
    preview = await templates.preview_template(session, ctx, templateId, body.contact_id)
    return json_response(PreviewOut.model_validate(preview))


# --- drafts --------------------------------------------------------------------------------


@router.get(
    "/drafts", operation_id="listEngageDrafts", tags=DRAFTS, response_model=ListResponse[DraftOut]
)
async def list_drafts(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt"))],
    channel: Annotated[Channel | None, Query()] = None,
) -> Response:
    """List drafts."""
    items, meta = await drafts.list_drafts(session, ctx, params, codec, channel=channel)
    return page_response(DraftOut, items, meta)


@router.post(
    "/drafts",
    operation_id="createEngageDraft",
    tags=DRAFTS,
    status_code=201,
    response_model=DraftOut,
)
async def create_draft(body: DraftIn, ctx: Write, session: SessionDep) -> Response:
    """Create a draft."""
    return json_response(
        DraftOut.model_validate(await drafts.create_draft(session, ctx, body)), 201
    )


@router.get(
    "/drafts/{draftId}", operation_id="getEngageDraft", tags=DRAFTS, response_model=DraftOut
)
async def get_draft(draftId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read one draft."""
    return json_response(DraftOut.model_validate(await drafts.get_draft(session, ctx, draftId)))


@router.patch(
    "/drafts/{draftId}", operation_id="updateEngageDraft", tags=DRAFTS, response_model=DraftOut
)
async def update_draft(
    draftId: uuid.UUID, body: DraftPatch, ctx: Write, session: SessionDep
) -> Response:
    """Change the fields sent."""
    return json_response(
        DraftOut.model_validate(await drafts.update_draft(session, ctx, draftId, body))
    )


@router.delete("/drafts/{draftId}", operation_id="deleteEngageDraft", tags=DRAFTS, status_code=204)
async def delete_draft(draftId: uuid.UUID, ctx: Write, session: SessionDep) -> Response:
    """Delete a draft for good."""
    await drafts.delete_draft(session, ctx, draftId)
    return Response(status_code=204)


# --- lists ---------------------------------------------------------------------------------


@router.get(
    "/lists", operation_id="listEngageLists", tags=LISTS, response_model=ListResponse[ListOut]
)
async def list_lists(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "name"))],
    type: Annotated[ListType | None, Query()] = None,
    include_archived: IncludeArchived = False,
) -> Response:
    """List audience lists."""
    items, meta = await lists.list_lists(
        session, ctx, params, codec, list_type=type, include_archived=include_archived
    )
    return page_response(ListOut, items, meta)


@router.post(
    "/lists", operation_id="createEngageList", tags=LISTS, status_code=201, response_model=ListOut
)
async def create_list(body: ListIn, ctx: Write, session: SessionDep) -> Response:
    """Create a MANUAL list, or a DYNAMIC list with criteria."""
    return json_response(ListOut.model_validate(await lists.create_list(session, ctx, body)), 201)


@router.get("/lists/{listId}", operation_id="getEngageList", tags=LISTS, response_model=ListOut)
async def get_list(listId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read one list."""
    return json_response(ListOut.model_validate(await lists.get_list(session, ctx, listId)))


@router.patch(
    "/lists/{listId}", operation_id="updateEngageList", tags=LISTS, response_model=ListOut
)
async def update_list(
    listId: uuid.UUID, body: ListPatch, ctx: Write, session: SessionDep
) -> Response:
    """Change the name, description or (DYNAMIC) criteria."""
    return json_response(
        ListOut.model_validate(await lists.update_list(session, ctx, listId, body))
    )


@router.delete("/lists/{listId}", operation_id="archiveEngageList", tags=LISTS, status_code=204)
async def archive_list(listId: uuid.UUID, ctx: Write, session: SessionDep) -> Response:
    """Archive a list."""
    await lists.archive_list(session, ctx, listId)
    return Response(status_code=204)


@router.get(
    "/lists/{listId}/members",
    operation_id="listEngageListMembers",
    tags=LISTS,
    response_model=ListResponse[MemberOut],
)
async def list_members(
    listId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("contactId",), default="contactId")],
) -> Response:
    """A list's contacts; a DYNAMIC list's are evaluated now. Use `limit`/`cursor` for big lists."""
    items, meta = await lists.list_members(session, ctx, listId, params, codec)
    return page_response(MemberOut, items, meta)


@router.post(
    "/lists/{listId}/members",
    operation_id="addEngageListMembers",
    tags=LISTS,
    response_model=MembersAdded,
)
async def add_members(
    listId: uuid.UUID, body: MembersIn, ctx: Write, session: SessionDep
) -> Response:
    """Add contacts to a MANUAL list; those already in it are skipped."""
    return json_response(await lists.add_members(session, ctx, listId, body.contact_ids))


@router.delete(
    "/lists/{listId}/members/{contactId}",
    operation_id="removeEngageListMember",
    tags=LISTS,
    status_code=204,
)
async def remove_member(
    listId: uuid.UUID, contactId: uuid.UUID, ctx: Write, session: SessionDep
) -> Response:
    """Remove a contact from a MANUAL list."""
    await lists.remove_member(session, ctx, listId, contactId)
    return Response(status_code=204)


# --- campaigns -----------------------------------------------------------------------------


@router.get(
    "/campaigns",
    operation_id="listEngageCampaigns",
    tags=CAMPAIGNS,
    response_model=ListResponse[CampaignOut],
)
async def list_campaigns(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Annotated[ListParams, list_params(("createdAt", "updatedAt", "name"))],
    status: Annotated[CampaignStatus | None, Query()] = None,
) -> Response:
    """List campaigns."""
    items, meta = await campaigns.list_campaigns(session, ctx, params, codec, status=status)
    return page_response(CampaignOut, items, meta)


@router.post(
    "/campaigns",
    operation_id="createEngageCampaign",
    tags=CAMPAIGNS,
    status_code=201,
    response_model=CampaignOut,
)
async def create_campaign(body: CampaignIn, ctx: Write, session: SessionDep) -> Response:
    """Create a draft campaign with its flow of steps."""
    return json_response(
        CampaignOut.model_validate(await campaigns.create_campaign(session, ctx, body)), 201
    )


@router.post(
    "/campaigns/bulk",
    operation_id="bulkCreateEngageCampaigns",
    tags=CAMPAIGNS,
    status_code=207,
    response_model=BulkCampaignsOut,
)
async def bulk_create_campaigns(body: BulkCampaignsIn, ctx: Write, session: SessionDep) -> Response:
    """Create up to 100 campaigns; one result per row."""
    result = await campaigns.bulk_create_campaigns(session, ctx, body.campaigns)
    return json_response(result, 207)


@router.get(
    "/campaigns/{campaignId}",
    operation_id="getEngageCampaign",
    tags=CAMPAIGNS,
    response_model=CampaignOut,
)
async def get_campaign(campaignId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read one campaign."""
    return json_response(
        CampaignOut.model_validate(await campaigns.get_campaign(session, ctx, campaignId))
    )


@router.patch(
    "/campaigns/{campaignId}",
    operation_id="updateEngageCampaign",
    tags=CAMPAIGNS,
    response_model=CampaignOut,
)
async def update_campaign(
    campaignId: uuid.UUID, body: CampaignPatch, ctx: Write, session: SessionDep
) -> Response:
    """Change the fields sent; the flow only of a draft; status along allowed transitions."""
    return json_response(
        CampaignOut.model_validate(await campaigns.update_campaign(session, ctx, campaignId, body))
    )


@router.post(
    "/campaigns/{campaignId}/enrollments",
    operation_id="enrollEngageCampaign",
    tags=CAMPAIGNS,
    status_code=202,
    response_model=JobEnvelope,
)
async def enroll(
    campaignId: uuid.UUID, body: EnrollIn, ctx: Write, session: SessionDep
) -> Response:
    """Enroll a list or contacts; answers 202 with the job the worker runs."""
    job = await campaigns.enroll(session, ctx, campaignId, body)
    return json_response(JobEnvelope(job=JobOut.model_validate(job)), 202)


@router.get(
    "/enrollment-jobs/{jobId}",
    operation_id="getEngageEnrollmentJob",
    tags=CAMPAIGNS,
    response_model=JobOut,
)
async def get_job(jobId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """An enrollment job's status and counts."""
    return json_response(JobOut.model_validate(await campaigns.get_job(session, ctx, jobId)))


@router.get(
    "/campaigns/{campaignId}/status",
    operation_id="getEngageCampaignStatus",
    tags=CAMPAIGNS,
    response_model=CampaignStatusOut,
)
async def campaign_status(campaignId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Enrollment counts per step and state."""
    return json_response(
        CampaignStatusOut.model_validate(await campaigns.campaign_status(session, ctx, campaignId))
    )
