"""Buying groups (contract §7)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.buying_groups import descriptions as text
from salesplan.buying_groups import service
from salesplan.buying_groups.schemas import BuyingGroupIn, BuyingGroupOut, BuyingGroupPatch
from salesplan.db_dependencies import SessionDep
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.schemas import ListResponse
from salesplan.kit.tools import as_tool

router = APIRouter(tags=["buying-groups"])

Read = Annotated[RequestContext, require("accounts:read", "accounts")]
Write = Annotated[RequestContext, require("accounts:write", "accounts")]
Delete = Annotated[RequestContext, require("accounts:delete", "accounts")]
Params = Annotated[ListParams, list_params(("createdAt", "updatedAt", "name"))]


@router.get(
    "",
    operation_id="listBuyingGroups",
    response_model=ListResponse[BuyingGroupOut],
    summary="List buying groups",
    description=text.LIST_BUYING_GROUPS,
)
@as_tool(docs=text.LIST_BUYING_GROUPS_ARGS)
async def list_buying_groups(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Params,
    account_id: Annotated[uuid.UUID | None, Query(alias="accountId")] = None,
    include_archived: Annotated[bool, Query(alias="includeArchived")] = False,
) -> Response:
    """List buying groups."""
    items, meta = await service.list_buying_groups(
        session, ctx, params, codec, account_id=account_id, include_archived=include_archived
    )
    return json_response(ListResponse[BuyingGroupOut](data=items, pagination=meta))


@router.post("", operation_id="createBuyingGroup", status_code=201, response_model=BuyingGroupOut)
async def create_buying_group(body: BuyingGroupIn, ctx: Write, session: SessionDep) -> Response:
    """Create a buying group."""
    group = await service.create_buying_group(session, ctx, body)
    return json_response(await service.render_one(session, ctx, group), 201)


@router.get("/{buyingGroupId}", operation_id="getBuyingGroup", response_model=BuyingGroupOut)
async def get_buying_group(buyingGroupId: uuid.UUID, ctx: Read, session: SessionDep) -> Response:
    """Read one buying group."""
    group = await service.get_buying_group(session, ctx, buyingGroupId)
    return json_response(await service.render_one(session, ctx, group))


@router.patch("/{buyingGroupId}", operation_id="updateBuyingGroup", response_model=BuyingGroupOut)
async def update_buying_group(
    buyingGroupId: uuid.UUID, body: BuyingGroupPatch, ctx: Write, session: SessionDep
) -> Response:
    """Change the fields sent (memberContactIds replaces the members)."""
    group = await service.update_buying_group(session, ctx, buyingGroupId, body)
    return json_response(await service.render_one(session, ctx, group))


@router.delete("/{buyingGroupId}", operation_id="deleteBuyingGroup", status_code=204)
async def delete_buying_group(
    buyingGroupId: uuid.UUID, ctx: Delete, session: SessionDep
) -> Response:
    """Archive a buying group (not the default one)."""
    await service.delete_buying_group(session, ctx, buyingGroupId)
    return Response(status_code=204)
