"""Relationship maps (contract §7; spec "Buyer map")."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.db_dependencies import SessionDep, unit_of_work
from salesplan.kit.list_query import CursorCodecDep, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.schemas import ListResponse
from salesplan.kit.tools import as_tool
from salesplan.models.crm import RelationshipMap
from salesplan.relationship_maps import descriptions as text
from salesplan.relationship_maps import service
from salesplan.relationship_maps.schemas import (
    BuyerMapOut,
    BuyerMapResponse,
    EntityType,
    MapContactUpsert,
    RelationshipMapIn,
    RelationshipMapPatch,
)

router = APIRouter(tags=["relationship-maps"])

Read = Annotated[RequestContext, require("relationship_maps:read", "relationship_maps")]
Write = Annotated[RequestContext, require("relationship_maps:write", "relationship_maps")]
Params = Annotated[ListParams, list_params(("createdAt", "updatedAt"))]


async def _one(
    request: Request, session: SessionDep, ctx: RequestContext, row: RelationshipMap
) -> BuyerMapResponse:
    public_url = request.app.state.settings.public_url
    rendered = await service.render(session, ctx, [row], public_url)
    return BuyerMapResponse(buyer_map=rendered[0])


@router.get(
    "",
    operation_id="listRelationshipMaps",
    response_model=ListResponse[BuyerMapOut],
    summary="Find relationship maps",
    description=text.LIST_RELATIONSHIP_MAPS,
)
@as_tool(docs=text.LIST_RELATIONSHIP_MAPS_ARGS)
async def list_relationship_maps(
    request: Request,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Params,
    entity_type: Annotated[EntityType | None, Query(alias="entityType")] = None,
    entity_id: Annotated[uuid.UUID | None, Query(alias="entityId")] = None,
) -> Response:
    """List relationship maps."""
    rows, meta = await service.list_maps(
        session, ctx, params, codec, entity_type=entity_type, entity_id=entity_id
    )
    public_url = request.app.state.settings.public_url
    return json_response(
        ListResponse[BuyerMapOut](
            data=await service.render(session, ctx, rows, public_url), pagination=meta
        )
    )


@router.post(
    "", operation_id="createRelationshipMap", status_code=201, response_model=BuyerMapResponse
)
async def create_relationship_map(
    request: Request, body: RelationshipMapIn, ctx: Write, session: SessionDep
) -> Response:
    """Create the relationship map of an account, buying group or opportunity."""
    return json_response(
        await _one(request, session, ctx, await service.create_map(session, ctx, body)), 201
    )


@router.get(
    "/{buyerMapId}",
    operation_id="getRelationshipMap",
    response_model=BuyerMapResponse,
    summary="Read a relationship map",
    description=text.GET_RELATIONSHIP_MAP,
)
@as_tool(docs=text.GET_RELATIONSHIP_MAP_ARGS)
async def get_relationship_map(
    request: Request, buyerMapId: uuid.UUID, ctx: Read, session: SessionDep
) -> Response:
    """Read one relationship map."""
    return json_response(
        await _one(request, session, ctx, await service.get_map(session, ctx, buyerMapId))
    )


@router.patch(
    "/{buyerMapId}", operation_id="updateRelationshipMap", response_model=BuyerMapResponse
)
async def update_relationship_map(
    request: Request,
    buyerMapId: uuid.UUID,
    body: RelationshipMapPatch,
    ctx: Write,
    session: SessionDep,
) -> Response:
    """Change the map graph or its orientation."""
    row = await service.update_map(session, ctx, buyerMapId, body)
    return json_response(await _one(request, session, ctx, row))


@router.patch(
    "/{buyerMapId}/contacts/{contactId}",
    operation_id="upsertRelationshipMapContact",
    response_model=BuyerMapResponse,
    summary="Place a contact on a relationship map",
    description=text.UPSERT_RELATIONSHIP_MAP_CONTACT,
)
@as_tool(docs=text.UPSERT_RELATIONSHIP_MAP_CONTACT_ARGS, destructive=False)
async def upsert_relationship_map_contact(
    request: Request,
    buyerMapId: uuid.UUID,
    contactId: uuid.UUID,
    body: MapContactUpsert,
    ctx: Write,
) -> Response:
    """Place a contact on the map or change its attributes."""
    public_url = request.app.state.settings.public_url
    # A hot write, in Core on the driver and committed before the response: one statement
    # (and the read of what is placed) when it applies, else every step in one transaction.
    async with unit_of_work(request) as uow:
        args = (await uow.writer(), ctx, buyerMapId, contactId, body, public_url)
        out = await service.upsert_contact_at_once(*args)
        if out is None:
            async with uow.atomic():
                out = await service.upsert_contact(*args)
    return json_response(BuyerMapResponse(buyer_map=out))


@router.delete(
    "/{buyerMapId}/contacts/{contactId}",
    operation_id="removeRelationshipMapContact",
    status_code=204,
)
async def remove_relationship_map_contact(
    buyerMapId: uuid.UUID, contactId: uuid.UUID, ctx: Write, session: SessionDep
) -> Response:
    """Remove a contact from the map (its node and the edges touching it)."""
    await service.remove_contact(session, ctx, buyerMapId, contactId)
    return Response(status_code=204)
