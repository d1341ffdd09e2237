"""Leads (contract §7; scopes `accounts:*`)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import SessionDep
from salesplan.kit.list_query import CursorCodecDep, UpdatedSince, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.schemas import ListResponse
from salesplan.kit.tools import as_tool
from salesplan.leads import service
from salesplan.leads.schemas import LeadIn, LeadOut, LeadPatch, LeadStatus

router = APIRouter(tags=["leads"])

Read = Annotated[RequestContext, require("accounts:read", "accounts")]
Write = Annotated[RequestContext, require("accounts:write", "accounts")]
Delete = Annotated[RequestContext, require("accounts:delete", "accounts")]
Params = Annotated[ListParams, list_params(("createdAt", "updatedAt", "lastName", "email"))]


LIST_LEADS = """
List the organization's leads (people not yet tied to an account) as `{"data": [lead],
"pagination"}`. Filter by `status`; `search` matches names, e-mail and company. Archived leads
only with `includeArchived`. For incremental sync use `updatedSince` with `limit`/`cursor`.
"""
LIST_LEADS_ARGS = {
    "status": "Only the leads in this status.",
    "includeArchived": "true to list archived (deleted) leads too.",
    "search": "Case-insensitive substring of the name, e-mail or company.",
}


@router.get(
    "",
    operation_id="listLeads",
    response_model=ListResponse[LeadOut],
    summary="List leads",
    description=LIST_LEADS,
)
@as_tool(docs=LIST_LEADS_ARGS)
async def list_leads(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Params,
    status: Annotated[LeadStatus | None, Query()] = None,
    include_archived: Annotated[bool, Query(alias="includeArchived")] = False,
    updated_since: UpdatedSince = None,
) -> Response:
    """List leads."""
    items, meta = await service.list_leads(
        session,
        ctx,
        params,
        codec,
        status=status,
        include_archived=include_archived,
        updated_since=updated_since,
    )
    return json_response(
        ListResponse[LeadOut](data=[LeadOut.model_validate(x) for x in items], pagination=meta)
    )


@router.post("", operation_id="createLead", status_code=201, response_model=LeadOut)
async def create_lead(body: LeadIn, ctx: Write, session: SessionDep) -> Response:
    """Create a lead."""
    return json_response(LeadOut.model_validate(await service.create_lead(session, ctx, body)), 201)


@router.get("/{leadId}", operation_id="getLead", response_model=LeadOut)
async def get_lead(leadId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read one lead."""
    return json_response(LeadOut.model_validate(await service.get_lead(session, ctx, leadId)))


@router.patch("/{leadId}", operation_id="updateLead", response_model=LeadOut)
async def update_lead(
    leadId: uuid.UUID, body: LeadPatch, ctx: Write, session: SessionDep
) -> Response:
    """Change the fields sent."""
    return json_response(
        LeadOut.model_validate(await service.update_lead(session, ctx, leadId, body))
    )


@router.delete("/{leadId}", operation_id="deleteLead", status_code=204)
async def delete_lead(leadId: uuid.UUID, ctx: Delete, session: SessionDep) -> Response:
    """Archive a lead."""
    await service.delete_lead(session, ctx, leadId)
    return Response(status_code=204)
