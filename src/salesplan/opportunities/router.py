"""Opportunities (contract §7)."""

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
from salesplan.kit.schemas import ListResponse, QueryText
from salesplan.kit.tools import DELETE_NOTE, as_tool, deleted
from salesplan.opportunities import descriptions as text
from salesplan.opportunities import service
from salesplan.opportunities.schemas import OpportunityIn, OpportunityOut, OpportunityPatch

router = APIRouter(tags=["opportunities"])

Read = Annotated[RequestContext, require("opportunities:read", "opportunities")]
Write = Annotated[RequestContext, require("opportunities:write", "opportunities")]
Delete = Annotated[RequestContext, require("opportunities:delete", "opportunities")]
Params = Annotated[ListParams, list_params(("createdAt", "updatedAt", "name", "closeDate"))]


@router.get(
    "",
    operation_id="listOpportunities",
    response_model=ListResponse[OpportunityOut],
    summary="List opportunities",
    description=text.LIST_OPPORTUNITIES,
)
@as_tool(docs=text.LIST_OPPORTUNITIES_ARGS)
async def list_opportunities(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Params,
    account_id: Annotated[uuid.UUID | None, Query(alias="accountId")] = None,
    stage: Annotated[QueryText | None, Query()] = None,
    include_archived: Annotated[bool, Query(alias="includeArchived")] = False,
    updated_since: UpdatedSince = None,
) -> Response:
    """List opportunities."""
    items, meta = await service.list_opportunities(
        session,
        ctx,
        params,
        codec,
        account_id=account_id,
        stage=stage,
        include_archived=include_archived,
        updated_since=updated_since,
    )
    return json_response(
        ListResponse[OpportunityOut](
            data=[OpportunityOut.model_validate(o) for o in items], pagination=meta
        )
    )


@router.post(
    "",
    operation_id="createOpportunity",
    status_code=201,
    response_model=OpportunityOut,
    summary="Create an opportunity",
    description=text.CREATE_OPPORTUNITY,
)
@as_tool(docs=text.CREATE_OPPORTUNITY_ARGS)
async def create_opportunity(body: OpportunityIn, ctx: Write, session: SessionDep) -> Response:
    """Create an opportunity."""
    return json_response(
        OpportunityOut.model_validate(await service.create_opportunity(session, ctx, body)), 201
    )


@router.get(
    "/{opportunityId}",
    operation_id="getOpportunity",
    response_model=OpportunityOut,
    summary="Read an opportunity",
    description=text.GET_OPPORTUNITY,
)
@as_tool(docs=text.GET_OPPORTUNITY_ARGS)
async def get_opportunity(opportunityId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read one opportunity."""
    return json_response(
        OpportunityOut.model_validate(await service.get_opportunity(session, ctx, opportunityId))
    )


@router.put(
    "/{opportunityId}",
    operation_id="updateOpportunity",
    response_model=OpportunityOut,
    summary="Replace an opportunity",
    description=text.UPDATE_OPPORTUNITY,
)
@as_tool(docs=text.UPDATE_OPPORTUNITY_ARGS, brief=text.UPDATE_OPPORTUNITY_BRIEF)
async def update_opportunity(
    opportunityId: uuid.UUID, body: OpportunityIn, ctx: Write, session: SessionDep
) -> Response:
    """Replace an opportunity."""
    opp = await service.replace_opportunity(session, ctx, opportunityId, body)
    return json_response(OpportunityOut.model_validate(opp))


@router.patch("/{opportunityId}", operation_id="patchOpportunity", response_model=OpportunityOut)
async def patch_opportunity(
    opportunityId: uuid.UUID, body: OpportunityPatch, ctx: Write, session: SessionDep
) -> Response:
    """Change the fields sent."""
    opp = await service.patch_opportunity(session, ctx, opportunityId, body)
    return json_response(OpportunityOut.model_validate(opp))


@router.delete(
    "/{opportunityId}",
    operation_id="deleteOpportunity",
    status_code=204,
    summary="Delete (archive) an opportunity",
    description=text.DELETE_OPPORTUNITY,
)
@as_tool(
    docs=text.DELETE_OPPORTUNITY_ARGS,
    note=DELETE_NOTE.format("opportunityId"),
    result=deleted("opportunityId"),
)
async def delete_opportunity(
    opportunityId: uuid.UUID, ctx: Delete, session: SessionDep
) -> Response:
    """Archive an opportunity."""
    await service.delete_opportunity(session, ctx, opportunityId)
    return Response(status_code=204)
