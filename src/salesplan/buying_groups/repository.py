"""Buying groups' statements: the generic tenant-scoped ones, their members, and the contacts a
body names."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import delete, select

from salesplan.kit.repository import Repository, sorts
from salesplan.kit.scoping import insert_ignoring_duplicates, scoped
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

    async def add_member(self, group: BuyingGroup, contact_id: uuid.UUID) -> None:
        # ON CONFLICT DO NOTHING: two requests adding the same member at once both succeed.
        await insert_ignoring_duplicates(
            self.session,
            BuyingGroupMember,
            {
                "organization_id": self.ctx.organization_id,
                "buying_group_id": group.id,
                "contact_id": contact_id,
            },
            ["buying_group_id", "contact_id"],
        )

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
