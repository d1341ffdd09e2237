"""Engage content and audiences (contract §7 "engage"; scopes `engage:read|write`, group
`engage`). Sends, start, queue, replies and analytics are the delivery side's."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import SessionDep
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
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.responses import json_response, page_response
from salesplan.kit.routes import Default, endpoint
from salesplan.kit.schemas import ListResponse
from salesplan.kit.tools import as_tool

router = APIRouter()

Read = Annotated[RequestContext, require("engage:read", "engage")]
Write = Annotated[RequestContext, require("engage:write", "engage")]
IncludeArchived = Annotated[bool, Query(alias="includeArchived")]
BY_NAME = ("createdAt", "updatedAt", "name")

TEMPLATES: list[str | Enum] = ["engage-templates"]
DRAFTS: list[str | Enum] = ["engage-drafts"]
LISTS: list[str | Enum] = ["engage-lists"]
CAMPAIGNS: list[str | Enum] = ["engage-campaigns"]


@dataclass(frozen=True)
class Record:
    """One kind of Engage record (template, draft, list, campaign) served at `path` and
    `path/{id_name}` by its service's create, get, update and (when it has one) remove."""

    path: str
    id_name: str
    noun: str  # the operationIds' noun: createEngage<noun>, getEngage<noun>, …
    tags: list[str | Enum]
    out: type[BaseModel]
    create: Callable[..., Awaitable[object]]
    get: Callable[..., Awaitable[object]]
    update: Callable[..., Awaitable[object]]
    remove: Callable[..., Awaitable[None]] | None = None
    remove_verb: str = "archive"  # archive (DELETE archives) or delete (DELETE is permanent)


def list_route(
    record: Record,
    run: Callable[..., Awaitable[tuple[Sequence[object], BaseModel]]],
    doc: str,
    sortable: tuple[str, ...],
    **filters: Default,
) -> None:
    """`GET path`: a page of records. `filters` are its query parameters beside the shared
    list parameters, passed to `run` by the same names."""

    async def page(
        ctx: RequestContext,
        session: AsyncSession,
        codec: CursorCodec,
        params: ListParams,
        **query: object,
    ) -> Response:
        items, meta = await run(session, ctx, params, codec, **query)
        return page_response(record.out, items, meta)

    router.get(
        record.path,
        operation_id=f"listEngage{record.noun}s",
        name=f"list_{record.noun.lower()}s",
        tags=record.tags,
        response_model=ListResponse[record.out],  # type: ignore[name-defined]
    )(
        as_tool()(  # Engage reads are MCP tools; sends and campaign start stay REST (§9)
            endpoint(
                __name__,
                f"list_{record.noun.lower()}s",
                doc,
                page,
                ctx=Read,
                session=SessionDep,
                codec=CursorCodecDep,
                params=Annotated[ListParams, list_params(sortable)],
                **filters,
            )
        )
    )


def create_route(record: Record, body: type[BaseModel], doc: str) -> None:
    """`POST path`: 201 with the created record."""

    async def run(body: BaseModel, ctx: RequestContext, session: AsyncSession) -> Response:
        return json_response(
            record.out.model_validate(await record.create(session, ctx, body)), 201
        )

    router.post(
        record.path,
        operation_id=f"createEngage{record.noun}",
        name=f"create_{record.noun.lower()}",
        tags=record.tags,
        status_code=201,
        response_model=record.out,
    )(
        endpoint(
            __name__,
            f"create_{record.noun.lower()}",
            doc,
            run,
            body=body,
            ctx=Write,
            session=SessionDep,
        )
    )


def record_routes(
    record: Record, patch: type[BaseModel], docs: tuple[str, str, str | None]
) -> None:
    """`GET`, `PATCH` (and, with `remove`, `DELETE`) `path/{id_name}`; `docs` are their
    descriptions."""
    one, name = f"{record.path}/{{{record.id_name}}}", record.noun.lower()

    async def get(ctx: RequestContext, session: AsyncSession, **path: uuid.UUID) -> Response:
        row = await record.get(session, ctx, path[record.id_name])
        return json_response(record.out.model_validate(row))

    async def update(
        body: BaseModel, ctx: RequestContext, session: AsyncSession, **path: uuid.UUID
    ) -> Response:
        row = await record.update(session, ctx, path[record.id_name], body)
        return json_response(record.out.model_validate(row))

    async def remove(ctx: RequestContext, session: AsyncSession, **path: uuid.UUID) -> Response:
        assert record.remove is not None
        await record.remove(session, ctx, path[record.id_name])
        return Response(status_code=204)

    path_id = {record.id_name: uuid.UUID}
    common: dict[str, Any] = {"tags": record.tags}
    router.get(
        one,
        operation_id=f"getEngage{record.noun}",
        name=f"get_{name}",
        response_model=record.out,
        **common,
    )(
        as_tool()(
            endpoint(__name__, f"get_{name}", docs[0], get, **path_id, ctx=Read, session=SessionDep)
        )
    )
    router.patch(
        one,
        operation_id=f"updateEngage{record.noun}",
        name=f"update_{name}",
        response_model=record.out,
        **common,
    )(
        endpoint(
            __name__,
            f"update_{name}",
            docs[1],
            update,
            **path_id,
            body=patch,
            ctx=Write,
            session=SessionDep,
        )
    )
    if record.remove is not None and docs[2] is not None:
        verb = record.remove_verb
        router.delete(
            one,
            operation_id=f"{verb}Engage{record.noun}",
            name=f"{verb}_{name}",
            status_code=204,
            **common,
        )(
            endpoint(
                __name__,
                f"{verb}_{name}",
                docs[2],
                remove,
                **path_id,
                ctx=Write,
                session=SessionDep,
            )
        )


# --- templates -----------------------------------------------------------------------------


TEMPLATE = Record(
    "/templates",
    "templateId",
    "Template",
    TEMPLATES,
    TemplateOut,
    templates.create_template,
    templates.get_template,
    templates.update_template,
    templates.archive_template,
)
list_route(
    TEMPLATE,
    templates.list_templates,
    "List message templates.",
    BY_NAME,
    channel=Default(Annotated[Channel | None, Query()], None),
    include_archived=Default(IncludeArchived, False),
)
create_route(
    TEMPLATE,
    TemplateIn,
    "Create a template (EMAIL needs a subject); merge fields like {{ contact.firstName }}.",
)
record_routes(
    TEMPLATE,
    TemplatePatch,
    ("Read one template (archived ones too).", "Change the fields sent.", "Archive a template."),
)


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


DRAFT = Record(
    "/drafts",
    "draftId",
    "Draft",
    DRAFTS,
    DraftOut,
    drafts.create_draft,
    drafts.get_draft,
    drafts.update_draft,
    drafts.delete_draft,
    remove_verb="delete",
)
list_route(
    DRAFT,
    drafts.list_drafts,
    "List drafts.",
    ("createdAt", "updatedAt"),
    channel=Default(Annotated[Channel | None, Query()], None),
)
create_route(DRAFT, DraftIn, "Create a draft.")
record_routes(
    DRAFT, DraftPatch, ("Read one draft.", "Change the fields sent.", "Delete a draft for good.")
)


# --- lists ---------------------------------------------------------------------------------


LIST = Record(
    "/lists",
    "listId",
    "List",
    LISTS,
    ListOut,
    lists.create_list,
    lists.get_list,
    lists.update_list,
    lists.archive_list,
)
list_route(
    LIST,
    lists.list_lists,
    "List audience lists.",
    BY_NAME,
    type=Default(Annotated[ListType | None, Query()], None),
    include_archived=Default(IncludeArchived, False),
)
create_route(LIST, ListIn, "Create a MANUAL list, or a DYNAMIC list with criteria.")
record_routes(
    LIST,
    ListPatch,
    (
        "Read one list.",
        "Change the name, description or (DYNAMIC) criteria.",
        "Archive a list.",
    ),
)


@router.get(
    "/lists/{listId}/members",
    operation_id="listEngageListMembers",
    tags=LISTS,
    response_model=ListResponse[MemberOut],
)
@as_tool()
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


CAMPAIGN = Record(
    "/campaigns",
    "campaignId",
    "Campaign",
    CAMPAIGNS,
    CampaignOut,
    campaigns.create_campaign,
    campaigns.get_campaign,
    campaigns.update_campaign,
)
list_route(
    CAMPAIGN,
    campaigns.list_campaigns,
    "List campaigns.",
    BY_NAME,
    status=Default(Annotated[CampaignStatus | None, Query()], None),
)
create_route(CAMPAIGN, CampaignIn, "Create a draft campaign with its flow of steps.")


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


record_routes(
    CAMPAIGN,
    CampaignPatch,
    (
        "Read one campaign.",
        "Change the fields sent; the flow only of a draft; status along allowed transitions.",
        None,
    ),
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
@as_tool()
async def get_job(jobId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """An enrollment job's status and counts."""
    return json_response(JobOut.model_validate(await campaigns.get_job(session, ctx, jobId)))


@router.get(
    "/campaigns/{campaignId}/status",
    operation_id="getEngageCampaignStatus",
    tags=CAMPAIGNS,
    response_model=CampaignStatusOut,
)
@as_tool()
async def campaign_status(campaignId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Enrollment counts per step and state."""
    return json_response(
        CampaignStatusOut.model_validate(await campaigns.campaign_status(session, ctx, campaignId))
    )
