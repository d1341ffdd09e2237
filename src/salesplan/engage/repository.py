"""Engage content's statements: templates, drafts, lists and their members, campaigns and
enrollment jobs on `kit.repository`'s tenant-scoped base, and the lookups of rows a request
body names (a missing one is a 422 naming the field)."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.engage.enrollment_repository import audience_of_ids, audience_of_list
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams, paginate
from salesplan.kit.repository import M, Repository, sorts, table_of
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import AnySelect, TenantScope, scoped
from salesplan.models.crm import Account, Contact
from salesplan.models.engage import (
    EngageCampaign,
    EngageDraft,
    EngageEnrollment,
    EngageEnrollmentJob,
    EngageList,
    EngageListMember,
    EngageSuppression,
    EngageTemplate,
)
from salesplan.models.engage_delivery import EngageMessage, EngageReply


class EngageRepository(Repository[M]):
    async def page(
        self,
        params: ListParams,
        codec: CursorCodec,
        *,
        include_archived: bool = False,
        **equal: Any,
    ) -> tuple[list[M], PaginationMeta]:
        """One page of the organization's rows; `equal` filters by column name (a filter left
        out, None, narrows nothing)."""
        model = self.model
        where = [getattr(model, column) == value for column, value in equal.items() if value]
        return await self.list(params, codec, where=where, include_archived=include_archived)


class TemplateRepository(EngageRepository[EngageTemplate]):
    model = EngageTemplate
    sort_columns = sorts(EngageTemplate, name=EngageTemplate.name)
    search_columns = (EngageTemplate.name,)

    async def live_channels(self, ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
        """Template id → channel of the live templates among `ids`, in one query."""
        if not ids:
            return {}
        stmt = scoped(
            select(EngageTemplate.id, EngageTemplate.channel).where(
                EngageTemplate.id.in_(ids), EngageTemplate.archived_at.is_(None)
            ),
            self.ctx,
        )
        return {row.id: row.channel for row in (await self.session.execute(stmt)).all()}


class DraftRepository(EngageRepository[EngageDraft]):
    model = EngageDraft
    sort_columns = sorts(EngageDraft)
    search_columns = (EngageDraft.name, EngageDraft.subject)

    async def delete(self, draft: EngageDraft) -> None:
        await self.session.delete(draft)
        await self.session.flush()


MEMBER_SORT = {"contactId": Contact.id}


class ListRepository(EngageRepository[EngageList]):
    model = EngageList
    sort_columns = sorts(EngageList, name=EngageList.name)
    search_columns = (EngageList.name,)

    async def members(
        self, lst: EngageList, params: ListParams, codec: CursorCodec
    ) -> tuple[list[dict[str, Any]], PaginationMeta]:
        """Keyset by contact id (cursor mode); a DYNAMIC list's criteria run as one SQL query
        (its members have no `addedAt`)."""
        dynamic = lst.type == "DYNAMIC"
        stmt: AnySelect = (
            audience_of_list(lst, Contact)
            if dynamic
            else audience_of_list(lst, Contact, EngageListMember.added_at)
        )
        rows, meta = await paginate(
            self.session, stmt, params, sort_columns=MEMBER_SORT, id_column=Contact.id, codec=codec
        )
        return [
            {"contact_id": r[0].id, "contact": r[0], "added_at": None if dynamic else r[1]}
            for r in rows
        ], meta

    async def add_members(
        self, lst: EngageList, contact_ids: Iterable[uuid.UUID], added_at: datetime
    ) -> int:
        """INSERT … ON CONFLICT DO NOTHING; the number of contacts that were not members yet."""
        postgres = self.session.get_bind().dialect.name == "postgresql"
        stmt = (
            (postgresql.insert if postgres else sqlite.insert)(EngageListMember)
            .on_conflict_do_nothing()
            .values(
                [
                    {
                        "organization_id": self.ctx.organization_id,
                        "list_id": lst.id,
                        "contact_id": cid,
                        "added_at": added_at,
                    }
                    for cid in contact_ids
                ]
            )
            .returning(EngageListMember.contact_id)
        )
        return len((await self.session.execute(stmt)).all())

    async def member(self, lst: EngageList, contact_id: uuid.UUID) -> EngageListMember | None:
        return await self.session.get(EngageListMember, (lst.id, contact_id))

    async def remove_member(self, member: EngageListMember) -> None:
        await self.session.delete(member)

    async def audience_size(self, lst: EngageList) -> int:
        return int(
            (await self.session.execute(audience_of_list(lst, func.count(Contact.id)))).scalar_one()
        )


class CampaignRepository(EngageRepository[EngageCampaign]):
    model = EngageCampaign
    sort_columns = sorts(EngageCampaign, name=EngageCampaign.name)
    search_columns = (EngageCampaign.name,)

    async def insert_many(self, campaigns: list[EngageCampaign]) -> None:
        """One INSERT for every campaign (their ids and timestamps set by the caller)."""
        if not campaigns:
            return
        await self.session.execute(
            insert(EngageCampaign),
            [
                {
                    "id": c.id,
                    "organization_id": self.ctx.organization_id,
                    "name": c.name,
                    "description": c.description,
                    "status": c.status,
                    "flow": c.flow,
                    "send_window": c.send_window,
                    "created_at": c.created_at,
                    "updated_at": c.updated_at,
                }
                for c in campaigns
            ],
        )

    async def state_counts(self, campaign: EngageCampaign) -> list[tuple[int, str, int]]:
        """(step, state, enrollments) of the campaign, in one GROUP BY."""
        stmt = (
            select(EngageEnrollment.current_step, EngageEnrollment.state, func.count())
            .where(EngageEnrollment.campaign_id == campaign.id)
            .group_by(EngageEnrollment.current_step, EngageEnrollment.state)
        )
        rows = (await self.session.execute(scoped(stmt, self.ctx, EngageEnrollment))).all()
        return [(step, state, count) for step, state, count in rows]


class JobRepository(EngageRepository[EngageEnrollmentJob]):
    model = EngageEnrollmentJob


# --- delivery: the outbox and replies ----------------------------------------------------------


class QueueRepository(EngageRepository[EngageMessage]):
    model = EngageMessage
    sort_columns = sorts(EngageMessage)


class ReplyRepository(EngageRepository[EngageReply]):
    model = EngageReply
    sort_columns = {"receivedAt": EngageReply.received_at}


async def count_engagement(
    session: AsyncSession, message_id: uuid.UUID, count: str, first_at: str
) -> None:
    """One more open or click of a message (`open_count`/`opened_at`, `click_count`/
    `clicked_at`); the first one's time is kept. Not scoped: a tracking link's signature proves
    the message id, and the row's organization is the message's own."""
    table = table_of(EngageMessage)
    await session.execute(
        table.update()
        .where(table.c.id == message_id)
        .values({count: table.c[count] + 1, first_at: func.coalesce(table.c[first_at], utcnow())})
    )


# --- rows named in a request body ------------------------------------------------------------


async def missing_contacts(
    session: AsyncSession, ctx: TenantScope, contact_ids: set[uuid.UUID]
) -> list[uuid.UUID]:
    """The ids that are not live contacts of the organization, in one query."""
    stmt = scoped(select(Contact.id).where(Contact.id.in_(contact_ids)), ctx).where(
        Contact.archived_at.is_(None)
    )
    found = set((await session.execute(stmt)).scalars())
    return sorted(contact_ids - found)


async def missing_accounts(
    session: AsyncSession, ctx: TenantScope, account_ids: set[uuid.UUID]
) -> set[uuid.UUID]:
    """The ids that are not accounts of the organization, in one query."""
    stmt = scoped(select(Account.id).where(Account.id.in_(account_ids)), ctx)
    return account_ids - set((await session.execute(stmt)).scalars())


async def audience_of_contacts(
    session: AsyncSession, ctx: TenantScope, contact_ids: list[uuid.UUID]
) -> int:
    """How many of the ids are live contacts of the organization."""
    stmt = audience_of_ids(ctx.organization_id, contact_ids, func.count(Contact.id))
    return int((await session.execute(stmt)).scalar_one())


# --- the suppression list (contract §14) -----------------------------------------------------


class SuppressionRepository(EngageRepository[EngageSuppression]):
    model = EngageSuppression
    sort_columns = {"createdAt": EngageSuppression.created_at, "address": EngageSuppression.email}
    search_columns = (EngageSuppression.email,)

    async def by_address(self, address: str) -> EngageSuppression | None:
        """The organization's entry for an address already kit.email.mailbox'd (the unique
        index's equality)."""
        stmt = scoped(select(EngageSuppression), self.ctx).where(EngageSuppression.email == address)
        found: EngageSuppression | None = (await self.session.execute(stmt)).scalar_one_or_none()
        return found

    async def by_addresses(self, addresses: Collection[str]) -> dict[str, EngageSuppression]:
        """The organization's entries for addresses already kit.email.mailbox'd, by address
        (one statement)."""
        if not addresses:
            return {}
        stmt = scoped(select(EngageSuppression), self.ctx).where(
            EngageSuppression.email.in_(list(addresses))
        )
        return {row.email: row for row in (await self.session.execute(stmt)).scalars()}

    async def delete(self, row: EngageSuppression) -> None:
        await self.session.delete(row)
        await self.session.flush()
