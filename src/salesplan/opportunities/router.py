"""Opportunities (contract §7)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import SessionDep
from salesplan.kit.list_query import CursorCodecDep, UpdatedSince, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.routes import Records
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


RECORDS = Records[AsyncSession, RequestContext](
    router, __name__, OpportunityOut, Read, Write, Delete, SessionDep
)
RECORDS.create_route(
    "",
    "createOpportunity",
    "Create an opportunity.",
    OpportunityIn,
    service.create_opportunity,
    summary="Create an opportunity",
    description=text.CREATE_OPPORTUNITY,
    tool=as_tool(docs=text.CREATE_OPPORTUNITY_ARGS),
)
RECORDS.read_route(
    "/{opportunityId}",
    "getOpportunity",
    "Read one opportunity.",
    service.get_opportunity,
    summary="Read an opportunity",
    description=text.GET_OPPORTUNITY,
    tool=as_tool(docs=text.GET_OPPORTUNITY_ARGS),
)
RECORDS.write_route(
    "PUT",
    "/{opportunityId}",
    "updateOpportunity",
    "Replace an opportunity.",
    OpportunityIn,
    service.replace_opportunity,
    summary="Replace an opportunity",
    description=text.UPDATE_OPPORTUNITY,
    tool=as_tool(docs=text.UPDATE_OPPORTUNITY_ARGS, brief=text.UPDATE_OPPORTUNITY_BRIEF),
)
RECORDS.write_route(
    "PATCH",
    "/{opportunityId}",
    "patchOpportunity",
    "Change the fields sent.",
    OpportunityPatch,
    service.patch_opportunity,
)
RECORDS.delete_route(
    "/{opportunityId}",
    "deleteOpportunity",
    "Archive an opportunity.",
    service.delete_opportunity,
    summary="Delete (archive) an opportunity",
    description=text.DELETE_OPPORTUNITY,
    tool=as_tool(
        docs=text.DELETE_OPPORTUNITY_ARGS,
        note=DELETE_NOTE.format("opportunityId"),
        result=deleted("opportunityId"),
    ),
)
