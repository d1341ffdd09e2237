"""getRelationshipMap, upsertRelationshipMapContact (contract §9 extras) and
listRelationshipMaps (added so that an agent can find a map's id; spec "MCP tools": the tool set
may grow)."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field

from salesplan.kit.schemas import ListResponse
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ListArgs, ToolArgs, mcp_tool
from salesplan.models.crm import RelationshipMap
from salesplan.relationship_maps import service
from salesplan.relationship_maps.schemas import BuyerMapResponse, EntityType, MapContactUpsert

BUYER_MAP_ID = (
    "Id of the relationship (buyer) map: the last part of its `mapUrl` "
    "(`{origin}/maps/<buyerMapId>`), as given by the user or the salesplan app."
)
ATTRIBUTE = "1..100 characters of free text; left out = unchanged ({})."


async def _one(call: ToolCall, row: RelationshipMap) -> BuyerMapResponse:
    rendered = await service.render(call.session, call.ctx, [row], call.settings.public_url)
    return BuyerMapResponse(buyer_map=rendered[0])


class ListMapsArgs(ListArgs):
    sortable = ("createdAt", "updatedAt")
    docs = {"search": "Not used by this list."}

    entity_type: EntityType | None = Field(
        default=None,
        description="Only maps of this kind of entity: Account, BuyingGroup or Opportunity.",
    )
    entity_id: uuid.UUID | None = Field(
        default=None,
        description="Only the map of this entity (an account, buying group or opportunity id).",
    )


@mcp_tool(
    "listRelationshipMaps",
    scope="relationship_maps:read",
    group="relationship_maps",
    args=ListMapsArgs,
    title="Find relationship maps",
    description="""
List relationship (buyer) maps, usually to find the map of one account, buying group or
opportunity: pass `entityType` (Account | BuyingGroup | Opportunity) and `entityId`. Each entity
has at most one map. Answers `{"data": [buyerMap, …], "pagination"}` with every map in the same
shape as getRelationshipMap's `buyerMap`. Use the map's `id` with getRelationshipMap or
upsertRelationshipMapContact.
""",
)
async def list_relationship_maps(call: ToolCall, args: ListMapsArgs) -> Any:
    rows, meta = await service.list_maps(
        call.session,
        call.ctx,
        args.list_params(),
        call.codec,
        entity_type=args.entity_type,
        entity_id=args.entity_id,
    )
    data = await service.render(call.session, call.ctx, rows, call.settings.public_url)
    return ListResponse(data=data, pagination=meta)


class MapArgs(ToolArgs):
    buyer_map_id: uuid.UUID = Field(description=BUYER_MAP_ID)


class UpsertMapContactArgs(ToolArgs, MapContactUpsert):
    docs = {
        "buyerMapId": BUYER_MAP_ID,
        "contactId": "Id of the contact to place (a contact of the map's account, from "
        "listAccountContacts).",
        "supportStatus": ATTRIBUTE.format("e.g. `champion`, `supporter`, `neutral`, `detractor`"),
        "decisionStatus": ATTRIBUTE.format("e.g. `decision_maker`, `influencer`, `evaluator`"),
        "contactStatus": ATTRIBUTE.format("e.g. `engaged`, `not_contacted`"),
        "functionalRole": ATTRIBUTE.format("e.g. `economic_buyer`, `technical_buyer`, `user`"),
        "executiveId": ATTRIBUTE.format("free text naming the contact's executive sponsor"),
        "buyingGroupId": "Also add the contact to this buying group of the same account (from "
        "listAccountBuyingGroups).",
    }

    buyer_map_id: uuid.UUID
    contact_id: uuid.UUID


@mcp_tool(
    "getRelationshipMap",
    scope="relationship_maps:read",
    group="relationship_maps",
    args=MapArgs,
    title="Read a relationship map",
    description="""
Read one relationship (buyer) map: `{"buyerMap": {id, entityType (Account | BuyingGroup |
Opportunity), entityId, map: {nodes, edges, viewport}, orientation, mapUrl, contacts:
[{contactId, supportStatus, decisionStatus, contactStatus, functionalRole, executiveId,
contact: {fullName, email}}], createdById, updatedById, createdAt, updatedAt}}`. Use it to see
who is placed on the map and how each person stands (champion, decision maker, …) before
planning. An attribute never set is null. A map of another organization answers `not_found`.
""",
)
async def get_relationship_map(call: ToolCall, args: MapArgs) -> Any:
    return await _one(call, await service.get_map(call.session, call.ctx, args.buyer_map_id))


@mcp_tool(
    "upsertRelationshipMapContact",
    scope="relationship_maps:write",
    group="relationship_maps",
    args=UpsertMapContactArgs,
    read_only=False,
    title="Place a contact on a relationship map",
    description="""
Place a contact on a relationship map, or change how it stands there. Creates the placement
when the contact is not on the map yet (with a node in `map.nodes`), else changes only the
attributes you send; attributes you leave out keep their value. The contact must belong to the
map's account (else `unprocessable`); `buyingGroupId` (a group of the same account) also adds
the contact to that buying group. Answers the whole map like getRelationshipMap.
""",
)
async def upsert_relationship_map_contact(call: ToolCall, args: UpsertMapContactArgs) -> Any:
    row = await service.upsert_contact(
        call.session, call.ctx, args.buyer_map_id, args.contact_id, args.body(MapContactUpsert)
    )
    return await _one(call, row)
