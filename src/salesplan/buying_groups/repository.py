"""Buying groups' statements: the generic tenant-scoped ones, their members, and the contacts a
body names."""

from __future__ import annotations

import functools
import uuid
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from sqlalchemy import bindparam, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from salesplan.kit.driver import DriverStatement
from salesplan.kit.repository import Repository, sorts
from salesplan.kit.scoping import scoped
from salesplan.models.crm import BuyingGroup, BuyingGroupMember, Contact


class BuyingGroupRepository(Repository[BuyingGroup]):
    model = BuyingGroup
    sort_columns = sorts(BuyingGroup, name=BuyingGroup.name)
    search_columns = (BuyingGroup.name,)

    async def members(self, group_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, list[uuid.UUID]]:
        """The member contact ids of each group, in the order they were added (one query)."""
        ids = list(group_ids)
        out: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
        if not ids:
            return out
        stmt = scoped(
            select(BuyingGroupMember.buying_group_id, BuyingGroupMember.contact_id)
            .where(BuyingGroupMember.buying_group_id.in_(ids))
            .order_by(BuyingGroupMember.id),
            self.ctx,
            BuyingGroupMember,
        )
        for group_id, contact_id in (await self.session.execute(stmt)).all():
            out[group_id].append(contact_id)
        return out

    async def live_contacts_of_account(
        self, contact_ids: list[uuid.UUID], account_id: uuid.UUID
    ) -> set[uuid.UUID]:
        """The ones among `contact_ids` that are live contacts of the account."""
        stmt = scoped(
            select(Contact.id).where(
                Contact.id.in_(contact_ids),
                Contact.account_id == account_id,
                Contact.archived_at.is_(None),
            ),
            self.ctx,
        )
        return set((await self.session.execute(stmt)).scalars())

    async def set_members(self, group: BuyingGroup, contact_ids: list[uuid.UUID]) -> None:
        await self.session.execute(
            # The group was loaded through the organization's scope.
            delete(BuyingGroupMember).where(BuyingGroupMember.buying_group_id == group.id)
        )
        self.session.add_all(
            BuyingGroupMember(
                organization_id=self.ctx.organization_id, buying_group_id=group.id, contact_id=c
            )
            for c in contact_ids
        )
        await self.session.flush()


@functools.cache
def add_member_statement(dialect: str) -> DriverStatement:
    """The contact a member of the group, on the driver (kit.driver); one already is no error:
    ON CONFLICT DO NOTHING, so two requests adding the same member at once both succeed."""
    members: Any = BuyingGroupMember.__table__
    insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = (
        insert(members)
        .values(
            organization_id=bindparam("organization_id"),
            buying_group_id=bindparam("group_id"),
            contact_id=bindparam("contact_id"),
        )
        .on_conflict_do_nothing(index_elements=["buying_group_id", "contact_id"])
        .returning(members.c.id)
    )
    return DriverStatement(stmt)
