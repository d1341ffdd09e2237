"""Relationship (buyer) maps: one per account, buying group or opportunity, with contacts
placed on them. Every placed contact has exactly one node in `map.nodes`."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.buying_groups.service import add_member
from salesplan.errors import Conflict, NotFound, Unprocessable
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.repository import absent_reference, referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import not_found
from salesplan.models.crm import (
    Account,
    BuyingGroup,
    Contact,
    RelationshipMap,
    empty_map,
)
from salesplan.relationship_maps import repository as repo
from salesplan.relationship_maps.repository import (
    ATTRIBUTES,
    ENTITY_MODELS,
    RelationshipMapRepository,
)
from salesplan.relationship_maps.schemas import (
    BuyerMapOut,
    MapContactUpsert,
    RelationshipMapIn,
    RelationshipMapPatch,
)


def map_url(public_url: str, map_id: uuid.UUID) -> str:
    return f"{public_url}/maps/{map_id}"


def buyer_map_out(
    m: RelationshipMap | repo.MapRow,
    contacts: list[dict[str, object]],
    public_url: str,
    *,
    graph: dict[str, object] | None = None,
) -> BuyerMapOut:
    """The spec's buyerMap of a map (an object or a row with its columns by name) and its
    placed contacts."""
    return BuyerMapOut.model_validate(
        {
            "id": m.id,
            "entity_id": m.entity_id,
            "entity_type": m.entity_type,
            "map": m.map if graph is None else graph,
            "created_at": m.created_at,
            "updated_at": m.updated_at,
            "orientation": m.orientation,
            "map_url": map_url(public_url, m.id),
            "contacts": contacts,
            "created_by_id": m.created_by_id,
            "updated_by_id": m.updated_by_id,
        }
    )


def _placed(
    attributes: Sequence[object],
    contact_id: object,
    first: str | None,
    last: str | None,
    email: str | None,
) -> dict[str, object]:
    entry: dict[str, object] = dict(zip(ATTRIBUTES, attributes, strict=True))
    entry["contact_id"] = contact_id
    entry["contact"] = {"full_name": " ".join(p for p in (first, last) if p), "email": email}
    return entry


async def render(
    session: AsyncSession, ctx: RequestContext, maps: list[RelationshipMap], public_url: str
) -> list[BuyerMapOut]:
    """The spec's buyerMap shape; the placed contacts of all maps in one query."""
    placed: dict[uuid.UUID, list[dict[str, object]]] = {m.id: [] for m in maps}
    if maps:
        maps_repo = RelationshipMapRepository(session, ctx)
        for placement, first, last, email in await maps_repo.placed_names(list(placed)):
            attributes = [getattr(placement, name) for name in ATTRIBUTES]
            placed[placement.map_id].append(
                _placed(attributes, placement.contact_id, first, last, email)
            )
    return [buyer_map_out(m, placed[m.id], public_url) for m in maps]


async def list_maps(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    entity_type: str | None,
    entity_id: uuid.UUID | None,
) -> tuple[list[RelationshipMap], PaginationMeta]:
    where = []
    if entity_type is not None:
        where.append(RelationshipMap.entity_type == entity_type)
    if entity_id is not None:
        where.append(RelationshipMap.entity_id == entity_id)
    return await RelationshipMapRepository(session, ctx).list(params, codec, where=where)


async def get_map(
    session: AsyncSession, ctx: RequestContext, map_id: uuid.UUID, *, for_update: bool = False
) -> RelationshipMap:
    return await RelationshipMapRepository(session, ctx).get(map_id, for_update=for_update)


async def create_map(
    session: AsyncSession, ctx: RequestContext, data: RelationshipMapIn
) -> RelationshipMap:
    entity = await referenced(
        session, ENTITY_MODELS[data.entity_type], ctx, data.entity_id, "entityId"
    )
    account_id = entity.id if isinstance(entity, Account) else entity.account_id
    duplicate = Conflict(
        "This entity already has a relationship map.",
        details={"entityType": data.entity_type, "entityId": str(data.entity_id)},
    )
    maps = RelationshipMapRepository(session, ctx)
    if await maps.exists_for(data.entity_type, data.entity_id):
        raise duplicate
    row = RelationshipMap(
        entity_type=data.entity_type,
        entity_id=data.entity_id,
        account_id=account_id,
        map=data.map.model_dump() if data.map is not None else empty_map(),
        orientation=data.orientation,
        created_by_id=ctx.user_id,
        updated_by_id=ctx.user_id,
    )
    try:
        return await maps.insert(row)
    except IntegrityError:
        raise duplicate from None


def _contact_node(contact_id: uuid.UUID, index: int) -> dict[str, object]:
    return {
        "id": str(contact_id),
        "type": "contact",
        "position": {"x": 0, "y": 160 * index},
        "data": {"contactId": str(contact_id)},
    }


def _with_contact_nodes(graph: dict[str, Any], contact_ids: list[uuid.UUID]) -> dict[str, Any]:
    """One node per placed contact: add the missing ones, drop duplicates."""
    graph = copy.deepcopy(graph)
    nodes: list[dict[str, Any]] = []
    seen: set[str] = set()
    for node in graph.get("nodes", []):
        node_id = str(node.get("id"))
        if node.get("type") == "contact" and node_id in seen:
            continue
        seen.add(node_id)
        nodes.append(node)
    for contact_id in contact_ids:
        if str(contact_id) not in seen:
            seen.add(str(contact_id))
            nodes.append(_contact_node(contact_id, len(nodes)))
    graph["nodes"] = nodes
    graph.setdefault("edges", [])
    graph.setdefault("viewport", {"x": 0, "y": 0, "zoom": 1})
    return graph


def _touch(row: RelationshipMap, ctx: RequestContext) -> None:
    row.updated_at = utcnow()
    row.updated_by_id = ctx.user_id


async def update_map(
    session: AsyncSession, ctx: RequestContext, map_id: uuid.UUID, data: RelationshipMapPatch
) -> RelationshipMap:
    sent = data.sent()
    # Locked: `map` is read, changed and written back; concurrent changes go one by one.
    row = await get_map(session, ctx, map_id, for_update=True)
    if sent.get("map") is not None:
        row.map = _with_contact_nodes(
            data.map.model_dump() if data.map else empty_map(),
            await RelationshipMapRepository(session, ctx).placed_contact_ids(row.id),
        )
    if sent.get("orientation") is not None:
        row.orientation = sent["orientation"]
    _touch(row, ctx)
    await session.flush()
    return row


def _upsert_params(
    ctx: RequestContext, map_id: uuid.UUID, contact_id: uuid.UUID, sent: Mapping[str, object]
) -> dict[str, object]:
    """The upsert statements' parameters; `sent`'s attributes as `new_<name>`."""
    return {
        "map_id": map_id,
        "contact_id": contact_id,
        "organization_id": ctx.organization_id,
        "user_id": ctx.user_id,
        "now": utcnow(),
        **{f"new_{name}": value for name, value in sent.items()},
    }


def _placed_row(row: Any) -> dict[str, object]:
    """A placed contact from a row of PLACED_NAMES' columns."""
    return _placed(row[: len(ATTRIBUTES)], *row[len(ATTRIBUTES) :])


async def _placed_now(
    conn: AsyncConnection, params: Mapping[str, object]
) -> list[dict[str, object]]:
    """The contacts placed on the map, with their names, in the order they were placed."""
    return [_placed_row(r) for r in await repo.PLACED_NAMES.fetch(conn, params)]


async def upsert_contact_at_once(
    conn: AsyncConnection,
    ctx: RequestContext,
    map_id: uuid.UUID,
    contact_id: uuid.UUID,
    data: MapContactUpsert,
    public_url: str,
) -> BuyerMapOut | None:
    """upsertRelationshipMapContact without a transaction (PostgreSQL, on a connection
    outside any): one statement that locks the map, checks the contact's account, upserts
    the placement, touches the map and answers the map with its placements, committing on
    its own (`repository.place_at_once`). The map is read once more only when a write of
    it committed while this one waited for its lock: the answer is then the map as a read
    right after this write finds it, with what committed since.

    None, with nothing written, when it does not apply (SQLite; a buying group sent, whose
    membership `upsert_contact` writes) or wrote nothing (no such map or contact, a contact
    of another account, a contact not yet in the graph or a graph to mend): then
    `upsert_contact`, in a transaction, finds the exact answer. One round trip instead of
    six, and the map's row lock held for one statement, not for a transaction."""
    sent = data.sent()
    if conn.dialect.name != "postgresql" or sent.get("buying_group_id") is not None:
        return None
    sent.pop("buying_group_id", None)
    params = _upsert_params(ctx, map_id, contact_id, sent)
    params["contact_key"] = str(contact_id)
    rows = await repo.place_at_once(frozenset(sent)).fetch(conn, params)
    if not rows:
        return None
    if not rows[0][repo.MAP_ANSWER_FRESH]:
        # Another write of the map committed while this one waited for the lock: the map
        # as a read finds it now, this write's change and any committed since.
        rows = await repo.MAP_ANSWER.fetch(conn, params)
        if not rows:  # the map went with its account since
            raise not_found(RelationshipMap, map_id)
    the_map = repo.MapRow(*rows[0][2 : repo.MAP_ANSWER_FRESH])
    contacts = [_placed_row(r[repo.MAP_ANSWER_FRESH + 1 :]) for r in rows[1:]]
    return buyer_map_out(the_map, contacts, public_url)


async def upsert_contact(
    conn: AsyncConnection,
    ctx: RequestContext,
    map_id: uuid.UUID,
    contact_id: uuid.UUID,
    data: MapContactUpsert,
    public_url: str,
) -> BuyerMapOut:
    """Place the contact on the map or change its attributes; the map as it is now. Core
    statements on the driver (kit.driver), inside `kit.driver.transaction`: the map touched
    and locked, the contact's account, the placement upserted, the graph written only when
    the contact's node is new (or duplicates went), the placed contacts read back."""
    sent = data.sent()
    group_id = sent.pop("buying_group_id", None)
    params = _upsert_params(ctx, map_id, contact_id, sent)
    # Locked: `map` is read, changed and written back; concurrent changes go one by one.
    row = await repo.TOUCH_MAP.fetchrow(conn, params)
    if row is None:
        raise not_found(RelationshipMap, map_id)
    m = repo.MapRow(*row)
    account_id = await repo.CONTACT_ACCOUNT.fetchval(conn, params)
    if account_id is None:
        raise not_found(Contact, contact_id)
    if account_id != m.account_id:
        raise Unprocessable(
            "The contact belongs to another account than the map.",
            details={"field": "contactId", "id": str(contact_id)},
        )
    if group_id is not None:
        params["group_id"] = group_id
        group_account = await repo.LIVE_GROUP_ACCOUNT.fetchval(conn, params)
        if group_account is None:
            raise absent_reference(BuyingGroup, group_id, "buyingGroupId")
        if group_account != m.account_id:
            raise Unprocessable(
                "The buying group belongs to another account than the map.",
                details={"field": "buyingGroupId", "id": str(group_id)},
            )
        await add_member(conn, ctx, group_id, contact_id)
    await repo.place_statement(conn.dialect.name, frozenset(sent)).fetchrow(conn, params)
    graph = _with_contact_nodes(m.map, [contact_id])
    if graph != m.map:
        await repo.WRITE_GRAPH.fetchrow(conn, params | {"graph": graph})
    return buyer_map_out(m, await _placed_now(conn, params), public_url, graph=graph)


async def remove_contact(
    session: AsyncSession, ctx: RequestContext, map_id: uuid.UUID, contact_id: uuid.UUID
) -> None:
    # Locked: `map` is read, changed and written back; concurrent changes go one by one.
    row = await get_map(session, ctx, map_id, for_update=True)
    placement = await RelationshipMapRepository(session, ctx).placement(row.id, contact_id)
    if placement is None:
        raise NotFound(
            "The contact is not placed on this map.", details={"contactId": str(contact_id)}
        )
    await session.delete(placement)
    key = str(contact_id)
    graph = copy.deepcopy(row.map)
    graph["nodes"] = [n for n in graph.get("nodes", []) if str(n.get("id")) != key]
    graph["edges"] = [
        e
        for e in graph.get("edges", [])
        if str(e.get("source")) != key and str(e.get("target")) != key
    ]
    row.map = graph
    _touch(row, ctx)
    await session.flush()
