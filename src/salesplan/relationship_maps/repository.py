"""Relationship maps' statements: the generic tenant-scoped ones, the placed contacts, the map's
entity, and the map page's lookup across the organizations of a signed-in user."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

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
