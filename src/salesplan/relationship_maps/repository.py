"""Relationship maps' statements: the generic tenant-scoped ones, the placed contacts, the map's
entity, and the map page's lookup across the organizations of a signed-in user."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import bindparam, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.kit.driver import DriverStatement
from salesplan.kit.repository import Repository, sorts
from salesplan.kit.scoping import scoped
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

ENTITY_MODELS: dict[str, type[Any]] = {
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

    async def placed_names(self, map_ids: list[uuid.UUID]) -> Sequence[Any]:
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

    async def placed_contacts(self, map_id: uuid.UUID) -> Sequence[Any]:
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

    async def name_of(self, model: Any, object_id: uuid.UUID) -> str | None:
        """The `name` of a row of the organization (archived ones too), or None."""
        stmt = scoped(select(model.name).where(model.id == object_id), self.ctx, model)
        name: str | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return name


# --- upsertRelationshipMapContact: Core statements on the driver (kit.driver), built once ------

_RM: Any = RelationshipMap.__table__
_RMC: Any = RelationshipMapContact.__table__
_C: Any = Contact.__table__
_BG: Any = BuyingGroup.__table__
_ORG: Any = bindparam("organization_id")


class MapRow(NamedTuple):
    """A map's row as `TOUCH_MAP` answers it (its columns by these names, in this order)."""

    id: uuid.UUID
    entity_id: uuid.UUID
    entity_type: str
    map: dict[str, Any]
    created_at: Any
    updated_at: Any
    orientation: str
    created_by_id: uuid.UUID | None
    updated_by_id: uuid.UUID | None
    account_id: uuid.UUID


# The map touched (updated_at, updated_by_id) and so locked until the transaction ends: a row
# lock on PostgreSQL, the database's write lock on SQLite. Its row as it is now comes back.
TOUCH_MAP = DriverStatement(
    update(_RM)
    .where(_RM.c.id == bindparam("map_id"), _RM.c.organization_id == _ORG)
    .values(updated_at=bindparam("now"), updated_by_id=bindparam("user_id"))
    .returning(*(_RM.c[name] for name in MapRow._fields))
)
WRITE_GRAPH = DriverStatement(
    update(_RM)
    .where(_RM.c.id == bindparam("map_id"))
    .values(map=bindparam("graph", type_=_RM.c.map.type), updated_at=bindparam("now"))
    .returning(_RM.c.id)
)
CONTACT_ACCOUNT = DriverStatement(
    select(_C.c.account_id).where(_C.c.id == bindparam("contact_id"), _C.c.organization_id == _ORG)
)
LIVE_GROUP_ACCOUNT = DriverStatement(
    select(_BG.c.account_id).where(
        _BG.c.id == bindparam("group_id"),
        _BG.c.organization_id == _ORG,
        _BG.c.archived_at.is_(None),
    )
)
PLACED_NAMES = DriverStatement(
    select(*(_RMC.c[name] for name in (*ATTRIBUTES, "contact_id")), _C.c.first_name)
    .add_columns(_C.c.last_name, _C.c.email)
    .join_from(_RMC, _C, _C.c.id == _RMC.c.contact_id)
    .where(_RMC.c.map_id == bindparam("map_id"), _RMC.c.organization_id == _ORG)
    .order_by(_RMC.c.id)
)


@functools.lru_cache(maxsize=128)
def place_statement(dialect: str, keys: frozenset[str]) -> DriverStatement:
    """The contact placed on the map with the attributes `keys` (those sent, by name): a new
    placement has them and null for the others; an existing one changes only them."""
    dialect_insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
    insert = dialect_insert(_RMC).values(
        organization_id=_ORG,
        map_id=bindparam("map_id"),
        contact_id=bindparam("contact_id"),
        created_at=bindparam("now"),
        **{name: bindparam(f"new_{name}", type_=_RMC.c[name].type) for name in sorted(keys)},
    )
    index = ["map_id", "contact_id"]
    if keys:
        stmt = insert.on_conflict_do_update(
            index_elements=index, set_={name: insert.excluded[name] for name in sorted(keys)}
        )
    else:
        stmt = insert.on_conflict_do_nothing(index_elements=index)
    return DriverStatement(stmt.returning(_RMC.c.map_id))
