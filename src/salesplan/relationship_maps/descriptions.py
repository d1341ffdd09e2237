"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

BUYER_MAP_ID = (
    "Id of the relationship (buyer) map: the last part of its `mapUrl` "
    "(`{origin}/maps/<buyerMapId>`), as given by the user or the salesplan app."
)

GET_RELATIONSHIP_MAP = """
Read one relationship (buyer) map: `{"buyerMap": {id, entityType (Account | BuyingGroup |
Opportunity), entityId, map: {nodes, edges, viewport}, orientation, mapUrl, contacts:
[{contactId, supportStatus, decisionStatus, contactStatus, functionalRole, executiveId,
contact: {fullName, email}}], createdById, updatedById, createdAt, updatedAt}}`. Use it to see
who is placed on the map and how each person stands (champion, decision maker, …) before
planning. An attribute never set is null. A map of another organization answers `not_found`.
"""

LIST_RELATIONSHIP_MAPS = """
List relationship (buyer) maps, usually to find the map of one account, buying group or
opportunity: pass `entityType` (Account | BuyingGroup | Opportunity) and `entityId`. Each entity
has at most one map. Answers `{"data": [buyerMap, …], "pagination"}` with every map in the same
shape as getRelationshipMap's `buyerMap`. Use the map's `id` with getRelationshipMap or
upsertRelationshipMapContact.
"""

UPSERT_RELATIONSHIP_MAP_CONTACT = """
Place a contact on a relationship map, or change how it stands there. Creates the placement
when the contact is not on the map yet (with a node in `map.nodes`), else changes only the
attributes you send; attributes you leave out keep their value. The contact must belong to the
map's account (else `unprocessable`); `buyingGroupId` (a group of the same account) also adds
the contact to that buying group. Answers the whole map like getRelationshipMap.
"""

GET_RELATIONSHIP_MAP_ARGS = {"buyerMapId": BUYER_MAP_ID}
LIST_RELATIONSHIP_MAPS_ARGS = {
    "entityId": "Only the map of this entity (an account, buying group or opportunity id).",
    "entityType": "Only maps of this kind of entity: Account, BuyingGroup or Opportunity.",
    "search": "Not used by this list.",
}
UPSERT_RELATIONSHIP_MAP_CONTACT_ARGS = {
    "buyerMapId": BUYER_MAP_ID,
    "buyingGroupId": (
        "Also add the contact to this buying group of the same account (from "
        "listAccountBuyingGroups)."
    ),
    "contactId": (
        "Id of the contact to place (a contact of the map's account, from listAccountContacts)."
    ),
    "contactStatus": (
        "1..100 characters of free text; left out = unchanged (e.g. `engaged`, `not_contacted`)."
    ),
    "decisionStatus": (
        "1..100 characters of free text; left out = unchanged (e.g. `decision_maker`, "
        "`influencer`, `evaluator`)."
    ),
    "executiveId": (
        "1..100 characters of free text; left out = unchanged (free text naming the contact's "
        "executive sponsor)."
    ),
    "functionalRole": (
        "1..100 characters of free text; left out = unchanged (e.g. `economic_buyer`, "
        "`technical_buyer`, `user`)."
    ),
    "supportStatus": (
        "1..100 characters of free text; left out = unchanged (e.g. `champion`, `supporter`, "
        "`neutral`, `detractor`)."
    ),
}
