"""Organizations' statements: the memberships of the request's organization."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import select

from salesplan.kit.repository import Repository
from salesplan.kit.scoping import scoped
from salesplan.models.identity import Membership


class MembershipRepository(Repository[Membership]):
    model = Membership

    async def user_ids_among(self, user_ids: Iterable[uuid.UUID]) -> set[uuid.UUID]:
        """The ones among `user_ids` that are users of the organization (one query)."""
        wanted = set(user_ids)
        if not wanted:
            return set()
        stmt = scoped(select(Membership.user_id).where(Membership.user_id.in_(wanted)), self.ctx)
        return set((await self.session.execute(stmt)).scalars())
