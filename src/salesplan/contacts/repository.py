"""Contacts' statements: the generic tenant-scoped ones, with the contact's sort and search
columns, a page filtered by account or e-mail, and the accounts a bulk create names."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.repository import Repository, sorts
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import scoped
from salesplan.models.crm import Account, Contact


class ContactRepository(Repository[Contact]):
    model = Contact
    sort_columns = sorts(Contact, lastName=Contact.last_name, email=Contact.email)
    search_columns = (Contact.first_name, Contact.last_name, Contact.email)
    conflict_name = "contact"

    async def page(
        self,
        params: ListParams,
        codec: CursorCodec,
        *,
        account_id: uuid.UUID | None = None,
        email: str | None = None,
        include_archived: bool = False,
        updated_since: datetime | None = None,
    ) -> tuple[list[Contact], PaginationMeta]:
        """One page of contacts: of one account, or of one e-mail address (lower-cased, matched
        regardless of case), when named."""
        where: list[Any] = []
        if account_id is not None:
            where.append(Contact.account_id == account_id)
        if email is not None:
            where.append(func.lower(Contact.email) == email)
        return await self.list(
            params,
            codec,
            where=where,
            include_archived=include_archived,
            updated_since=updated_since,
        )

    async def live_accounts(
        self, ids: set[uuid.UUID], crm_ids: set[str | None]
    ) -> tuple[set[uuid.UUID], dict[str, uuid.UUID]]:
        """The live accounts among `ids` and `crm_ids` (one query): their ids, and their ids
        by crmId."""
        by_id: set[uuid.UUID] = set()
        by_crm: dict[str, uuid.UUID] = {}
        if not ids and not crm_ids:
            return by_id, by_crm
        cond = Account.id.in_(ids) | Account.crm_id.in_(crm_ids)
        stmt = scoped(
            select(Account.id, Account.crm_id).where(cond, Account.archived_at.is_(None)),
            self.ctx,
        )
        for account_id, crm_id in (await self.session.execute(stmt)).all():
            by_id.add(account_id)
            if crm_id is not None:
                by_crm[crm_id] = account_id
        return by_id, by_crm
