"""Relationship maps' statements: the generic tenant-scoped ones, the placed contacts, the map's
entity, and the map page's lookup across the organizations of a signed-in user."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple, TypeVar, TypeVarTuple

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    FromClause,
    Label,
    Row,
    Select,
    bindparam,
    literal_column,
    null,
    select,
    text,
    true,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import KeyedColumnElement

from salesplan.kit.driver import DriverStatement
from salesplan.kit.repository import Repository, sorts, table_of
from salesplan.kit.scoping import AnySelect, scoped
from salesplan.models.crm import (
    Account,
    BuyingGroup,
    Contact,
    Opportunity,
    RelationshipMap,
    RelationshipMapContact,
)
from salesplan.models.identity import Membership

ATTRIBUTES = (
    "support_status",
    "decision_status",
    "contact_status",
    "functional_role",
    "executive_id",
)
"""A placed contact's attributes (MapContactUpsert's, but the buying group)."""

Ts = TypeVarTuple("Ts")
# The INSERT of a placement, on either engine (both have ON CONFLICT).
DialectInsert = TypeVar("DialectInsert", postgresql.Insert, sqlite.Insert)

EntityModel = type[Account] | type[BuyingGroup] | type[Opportunity]

ENTITY_MODELS: dict[str, EntityModel] = {
    "Account": Account,
    "BuyingGroup": BuyingGroup,
    "Opportunity": Opportunity,
}
"""What a map can belong to, by `entityType`."""


async def find_member_map(
    session: AsyncSession, user_id: uuid.UUID, map_id: uuid.UUID
) -> RelationshipMap | None:
    """The map, in any organization the user is a member of (one query)."""
    stmt = select(RelationshipMap).where(
        RelationshipMap.id == map_id,
        RelationshipMap.organization_id.in_(
            select(Membership.organization_id).where(Membership.user_id == user_id)
        ),
    )
    return (await session.execute(stmt)).scalar_one_or_none()


class RelationshipMapRepository(Repository[RelationshipMap]):
    model = RelationshipMap
    sort_columns = sorts(RelationshipMap)

    async def exists_for(self, entity_type: str, entity_id: uuid.UUID) -> bool:
        """Whether the entity already has a map."""
        stmt = scoped(
            select(RelationshipMap.id).where(
                RelationshipMap.entity_type == entity_type, RelationshipMap.entity_id == entity_id
            ),
            self.ctx,
        )
        return (await self.session.execute(stmt)).first() is not None

    async def placed_contact_ids(self, map_id: uuid.UUID) -> list[uuid.UUID]:
        stmt = scoped(
            select(RelationshipMapContact.contact_id).where(
                RelationshipMapContact.map_id == map_id
            ),
            self.ctx,
            RelationshipMapContact,
        )
        return list((await self.session.execute(stmt)).scalars())

    async def placement(
        self, map_id: uuid.UUID, contact_id: uuid.UUID
    ) -> RelationshipMapContact | None:
        """Where the contact is placed on the map, if it is."""
        stmt = scoped(
            select(RelationshipMapContact).where(
                RelationshipMapContact.map_id == map_id,
                RelationshipMapContact.contact_id == contact_id,
            ),
            self.ctx,
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def placed_names(
        self, map_ids: list[uuid.UUID]
    ) -> Sequence[Row[RelationshipMapContact, str | None, str | None, str | None]]:
        """(placement, first name, last name, e-mail) of the contacts placed on the maps, in
        the order they were placed (one query)."""
        stmt = scoped(
            select(RelationshipMapContact, Contact.first_name, Contact.last_name, Contact.email)
            .join(Contact, Contact.id == RelationshipMapContact.contact_id)
            .where(RelationshipMapContact.map_id.in_(map_ids))
            .order_by(RelationshipMapContact.id),
            self.ctx,
            RelationshipMapContact,
        )
        return (await self.session.execute(stmt)).all()

    async def placed_contacts(
        self, map_id: uuid.UUID
    ) -> Sequence[Row[RelationshipMapContact, Contact]]:
        """(placement, contact) of the contacts placed on the map, in the order they were
        placed (one query)."""
        stmt = scoped(
            select(RelationshipMapContact, Contact)
            .join(Contact, Contact.id == RelationshipMapContact.contact_id)
            .where(RelationshipMapContact.map_id == map_id)
            .order_by(RelationshipMapContact.id),
            self.ctx,
            RelationshipMapContact,
        )
        return (await self.session.execute(stmt)).all()

    async def name_of(self, model: EntityModel, object_id: uuid.UUID) -> str | None:
        """The `name` of a row of the organization (archived ones too), or None."""
        stmt = scoped(select(model.name).where(model.id == object_id), self.ctx, model)
        name: str | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return name


# --- upsertRelationshipMapContact: Core statements on the driver (kit.driver), built once ------

_RM = table_of(RelationshipMap)
_RMC = table_of(RelationshipMapContact)
_C = table_of(Contact)
_BG = table_of(BuyingGroup)
_ORG = bindparam("organization_id", type_=_RM.c.organization_id.type)


class MapRow(NamedTuple):
    """A map's row as the upsert's statements answer it (its columns by these names, in this
    order)."""

    id: uuid.UUID
    entity_id: uuid.UUID
    entity_type: str
    map: dict[str, object]
    created_at: datetime
    updated_at: datetime
    orientation: str
    created_by_id: uuid.UUID | None
    updated_by_id: uuid.UUID | None
    account_id: uuid.UUID


_PLACED_COLUMNS = (*ATTRIBUTES, "contact_id")
_NAMES = (_C.c.first_name, _C.c.last_name, _C.c.email)
# The map named in the path, of the organization; its placements; the contact's account.
_THE_MAP = (_RM.c.id == bindparam("map_id")) & (_RM.c.organization_id == _ORG)
_ITS_PLACEMENTS = (_RMC.c.map_id == bindparam("map_id")) & (_RMC.c.organization_id == _ORG)
_CONTACT_ACCOUNT = select(_C.c.account_id).where(
    _C.c.id == bindparam("contact_id"), _C.c.organization_id == _ORG
)

# The map touched (updated_at, updated_by_id) and so locked until the transaction ends: a row
# lock on PostgreSQL, the database's write lock on SQLite. Its row as it is now comes back.
TOUCH_MAP = DriverStatement(
    update(_RM)
    .where(_THE_MAP)
    .values(updated_at=bindparam("now"), updated_by_id=bindparam("user_id"))
    .returning(*(_RM.c[name] for name in MapRow._fields))
)
WRITE_GRAPH = DriverStatement(
    update(_RM)
    .where(_RM.c.id == bindparam("map_id"))
    .values(map=bindparam("graph", type_=_RM.c.map.type), updated_at=bindparam("now"))
    .returning(_RM.c.id)
)
CONTACT_ACCOUNT = DriverStatement(_CONTACT_ACCOUNT)
LIVE_GROUP_ACCOUNT = DriverStatement(
    select(_BG.c.account_id).where(
        _BG.c.id == bindparam("group_id"),
        _BG.c.organization_id == _ORG,
        _BG.c.archived_at.is_(None),
    )
)


def _placed_names(source: FromClause) -> tuple[KeyedColumnElement[object], ...]:
    """A placement's attributes and contact (from `source`, the table or a CTE of its rows)
    and the contact's names: PLACED_NAMES' columns."""
    return (*(source.c[name] for name in _PLACED_COLUMNS), *_NAMES)


PLACED_NAMES = DriverStatement(
    select(*_placed_names(_RMC))
    .join_from(_RMC, _C, _C.c.id == _RMC.c.contact_id)
    .where(_ITS_PLACEMENTS)
    .order_by(_RMC.c.id)
)


def _placing(insert: DialectInsert, keys: frozenset[str]) -> DialectInsert:
    """`insert` of a placement made an upsert: an existing placement changes only `keys`."""
    index = ["map_id", "contact_id"]
    if keys:
        return insert.on_conflict_do_update(
            index_elements=index, set_={name: insert.excluded[name] for name in sorted(keys)}
        )
    return insert.on_conflict_do_nothing(index_elements=index)


def _new_values(keys: frozenset[str]) -> dict[str, ColumnElement[object]]:
    """A placement's columns: the map, the contact, and the attributes sent (`new_<name>`)."""
    return {
        "organization_id": _ORG,
        "map_id": bindparam("map_id"),
        "contact_id": bindparam("contact_id"),
        "created_at": bindparam("now"),
        **{name: bindparam(f"new_{name}", type_=_RMC.c[name].type) for name in sorted(keys)},
    }


@functools.lru_cache(maxsize=128)
def place_statement(dialect: str, keys: frozenset[str]) -> DriverStatement:
    """The contact placed on the map with the attributes `keys` (those sent, by name): a new
    placement has them and null for the others; an existing one changes only them."""
    values = _new_values(keys)
    if dialect == "postgresql":
        pg_insert = postgresql.insert(_RMC).values(**values)
        return DriverStatement(_placing(pg_insert, keys).returning(_RMC.c.map_id))
    lite_insert = sqlite.insert(_RMC).values(**values)
    return DriverStatement(_placing(lite_insert, keys).returning(_RMC.c.map_id))


# The graph as it is already holds the contact's node and needs no mending: `nodes` a list
# whose ids are distinct strings, one of them the contact's, and `edges` and `viewport`
# present. Then the service's `_with_contact_nodes` would leave it as it is. Stricter than
# that rule (distinct ids of every node, not only of contact nodes), never looser: a graph
# it refuses takes the way that reads and mends the graph.
_GRAPH_KEEPS_CONTACT = text(
    "jsonb_typeof(locked.map -> 'nodes') = 'array'"
    " AND (locked.map -> 'edges') IS NOT NULL AND (locked.map -> 'viewport') IS NOT NULL"
    " AND (SELECT count(*) = count(DISTINCT node ->> 'id')"
    " AND bool_and(jsonb_typeof(node -> 'id') = 'string')"
    " AND bool_or(node ->> 'id' = :contact_key)"
    " FROM jsonb_array_elements(locked.map -> 'nodes') AS node)"
)


def _map_part(source: FromClause, fresh: ColumnElement[bool]) -> AnySelect:
    """The map's row of an answer (see MAP_ANSWER): part 0, `MapRow` from `source`, `fresh`."""
    return select(
        literal_column("0").label("part"),
        null().label("position"),
        *(source.c[name] for name in MapRow._fields),
        fresh.label("fresh"),
        *(null() for _ in (*_PLACED_COLUMNS, *_NAMES)),
    )


def _placement_part(source: FromClause) -> AnySelect:
    """Placements' rows of an answer: part 1, their order, PLACED_NAMES' columns."""
    blank = (null() for _ in range(len(MapRow._fields) + 1))
    return select(literal_column("1"), source.c.id, *blank, *_placed_names(source)).join_from(
        source, _C, _C.c.id == source.c.contact_id
    )


def _answer(*parts: Select[*Ts]) -> CompoundSelect[*Ts]:
    return union_all(*parts).order_by(literal_column("part"), literal_column("position"))


MAP_ANSWER_FRESH = len(MapRow._fields) + 2
"""Where `fresh` is in an answer's first row; its `MapRow` comes before, from the 3rd column,
and each further row has PLACED_NAMES' columns after it."""

# The map and its placements in one statement (PostgreSQL): the rows of an answer, its
# first the map's (part 0, `fresh` true), then the placements' in the order they were placed.
MAP_ANSWER = DriverStatement(
    _answer(
        _map_part(_RM, true()).where(_THE_MAP),
        _placement_part(_RMC).where(_ITS_PLACEMENTS),
    )
)


# The map row's version (its `xmin`: the transaction that wrote it last), in a SELECT of it.
_VERSION: Label[object] = literal_column("relationship_maps.xmin").label("version")


@functools.lru_cache(maxsize=32)
def place_at_once(keys: frozenset[str]) -> DriverStatement:
    """upsertRelationshipMapContact in one statement (PostgreSQL), for a contact whose node
    the graph already holds: the write, and the map with what is placed on it after it,
    as MAP_ANSWER's rows.

        WITH seen AS (<the map's version in the statement's snapshot>),
             locked AS (SELECT id, account_id, map, <version> FROM relationship_maps
                        WHERE <the map> FOR UPDATE),
             ok AS (SELECT id, <locked's version = seen's> AS fresh FROM locked
                    WHERE account_id = <the contact's account> AND <the graph keeps it>),
             placed AS (INSERT INTO relationship_map_contacts (…) SELECT … FROM ok
                        ON CONFLICT (map_id, contact_id) DO UPDATE SET <keys>
                        RETURNING id, <attributes>, contact_id),
             touched AS (UPDATE relationship_maps SET updated_at, updated_by_id
                         WHERE id IN (SELECT id FROM ok) RETURNING <MapRow>)
        SELECT 0, NULL, <MapRow>, <fresh>, NULL… FROM touched
        UNION ALL SELECT 1, id, NULL…, <placement, names> FROM <the map's other placements>
        UNION ALL SELECT 1, id, NULL…, <placement, names> FROM placed
        ORDER BY 1, 2

    No row means nothing was written (no such map or contact, a contact of another
    account, a graph without the contact's node): the transaction's way then finds the
    answer. The map's row lock comes first, as in every write of a map.

    The other placements are read in the statement's snapshot, taken before the lock was
    granted: they are the map's as this write leaves it only when no write of the map
    committed in between (`fresh`: the row the lock got is the snapshot's). Every write of
    a map's placements touches its row; when `fresh` is false, the caller reads the map
    again (MAP_ANSWER)."""
    seen = select(_VERSION).where(_THE_MAP).cte("seen")
    locked = (
        select(_RM.c.id, _RM.c.account_id, _RM.c.map, _VERSION)
        .where(_THE_MAP)
        .with_for_update()
        .cte("locked")
    )
    fresh = locked.c.version == select(seen.c.version).scalar_subquery()
    ok = (
        select(locked.c.id, fresh.label("fresh"))
        .where(locked.c.account_id == _CONTACT_ACCOUNT.scalar_subquery(), _GRAPH_KEEPS_CONTACT)
        .cte("ok")
    )
    values = _new_values(keys)
    insert = postgresql.insert(_RMC).from_select(
        list(values), select(*(v.label(k) for k, v in values.items())).select_from(ok)
    )
    placed = (
        _placing(insert, keys)
        .returning(_RMC.c.id, *(_RMC.c[name] for name in _PLACED_COLUMNS))
        .cte("placed")
    )
    touched = (
        update(_RM)
        .where(_RM.c.id.in_(select(ok.c.id)))
        .values(updated_at=bindparam("now"), updated_by_id=bindparam("user_id"))
        .returning(*(_RM.c[name] for name in MapRow._fields))
        .cte("touched")
    )
    others = _placement_part(_RMC).where(
        _ITS_PLACEMENTS,
        _RMC.c.contact_id.not_in(select(placed.c.contact_id)),
        select(ok.c.id).exists(),
    )
    the_map = _map_part(touched, select(ok.c.fresh).scalar_subquery())
    return DriverStatement(_answer(the_map, others, _placement_part(placed)).add_cte(touched))
