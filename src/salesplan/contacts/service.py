"""Contacts: the people of an account."""

from __future__ import annotations

import uuid
from typing import Any, cast

from pydantic import ValidationError
from sqlalchemy import Table, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.contacts.schemas import ContactIn, ContactOut, ContactPatch, ContactReplace
from salesplan.errors import validation_errors
from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.kit.pagination import CursorCodec, ListParams, contains_ci, paginate
from salesplan.kit.repository import apply, archive, flush_or_conflict, referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped, scoped
from salesplan.models.crm import Account, Contact

SORT = {
    "createdAt": Contact.created_at,
    "updatedAt": Contact.updated_at,
    "lastName": Contact.last_name,
    "email": Contact.email,
}


async def list_account_contacts(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
    *,
    include_archived: bool = False,
) -> tuple[list[Contact], PaginationMeta]:
    """The contacts of an account that exists in the organization (else 404)."""
    await get_scoped(session, Account, ctx, account_id)
    return await list_contacts(
        session, ctx, params, codec, account_id=account_id, include_archived=include_archived
    )


async def list_contacts(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    account_id: uuid.UUID | None = None,
    email: str | None = None,
    include_archived: bool = False,
) -> tuple[list[Contact], PaginationMeta]:
    stmt = scoped(select(Contact), ctx)
    if account_id is not None:
        stmt = stmt.where(Contact.account_id == account_id)
    if email is not None:
        stmt = stmt.where(func.lower(Contact.email) == email.strip().lower())
    if not include_archived:
        stmt = stmt.where(Contact.archived_at.is_(None))
    if params.search:
        term = params.search
        stmt = stmt.where(
            contains_ci(Contact.first_name, term)
            | contains_ci(Contact.last_name, term)
            | contains_ci(Contact.email, term)
        )
    return await paginate(
        session, stmt, params, sort_columns=SORT, id_column=Contact.id, codec=codec, scalars=True
    )


async def get_contact(session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID) -> Contact:
    return await get_scoped(session, Contact, ctx, contact_id)


async def create_contact(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID, data: ContactIn
) -> Contact:
    # The account is in the path: a missing one is a 404.
    await get_scoped(session, Account, ctx, account_id)
    contact = Contact(
        organization_id=ctx.organization_id, account_id=account_id, **data.model_dump()
    )
    session.add(contact)
    await flush_or_conflict(session, data.crm_id, "contact")
    return contact


async def replace_contact(
    session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID, data: ContactReplace
) -> Contact:
    contact = await get_contact(session, ctx, contact_id)
    fields = data.model_dump()
    account_id = fields.pop("account_id")
    if account_id is not None and account_id != contact.account_id:
        await referenced(session, Account, ctx, account_id, "accountId")
        contact.account_id = account_id
    apply(contact, fields)
    await flush_or_conflict(session, data.crm_id, "contact")
    return contact


async def patch_contact(
    session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID, data: ContactPatch
) -> Contact:
    sent = data.sent()
    contact = await get_contact(session, ctx, contact_id)
    if "account_id" in sent:
        account_id = sent.pop("account_id")
        if account_id is None:
            from salesplan.errors import ValidationFailed

            raise ValidationFailed.at(["body", "accountId"], "This field may not be null.")
        if account_id != contact.account_id:
            await referenced(session, Account, ctx, account_id, "accountId")
            contact.account_id = account_id
    apply(contact, sent)
    await flush_or_conflict(session, contact.crm_id, "contact")
    return contact


async def delete_contact(session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID) -> None:
    archive(await get_contact(session, ctx, contact_id))
    await session.flush()


async def bulk_create_contacts(
    session: AsyncSession, ctx: RequestContext, rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """The CSV importer's path for contacts: like bulkCreateAccounts, each row names its account
    by `accountId` or `accountCrmId`. A fixed number of queries whatever the row count."""
    results: list[dict[str, Any] | None] = [None] * len(rows)
    valid: list[tuple[int, dict[str, Any], ContactIn]] = []
    for index, raw in enumerate(rows):
        raw = dict(raw)
        ref = {k: raw.pop(k, None) for k in ("accountId", "accountCrmId")}
        try:
            data = ContactIn.model_validate(raw)
            account_id = uuid.UUID(ref["accountId"]) if ref["accountId"] else None
        except ValidationError as exc:
            results[index] = _error(
                index,
                400,
                "validation_error",
                "The contact is not valid.",
                {"errors": validation_errors(exc.errors())},
            )
            continue
        except ValueError:
            results[index] = _error(
                index,
                400,
                "validation_error",
                "accountId is not a UUID.",
                {"errors": [{"location": ["accountId"], "message": "Not a UUID."}]},
            )
            continue
        if account_id is None and not ref["accountCrmId"]:
            results[index] = _error(
                index,
                400,
                "validation_error",
                "accountId or accountCrmId is required.",
                {"errors": [{"location": ["accountId"], "message": "Required."}]},
            )
            continue
        valid.append(
            (index, {"account_id": account_id, "account_crm_id": ref["accountCrmId"]}, data)
        )

    ids = {r["account_id"] for _, r, _ in valid if r["account_id"]}
    crm_refs = {r["account_crm_id"] for _, r, _ in valid if r["account_id"] is None}
    accounts_by_id: set[uuid.UUID] = set()
    accounts_by_crm: dict[str, uuid.UUID] = {}
    if ids or crm_refs:
        cond = Account.id.in_(ids) | Account.crm_id.in_(crm_refs)
        stmt = scoped(
            select(Account.id, Account.crm_id).where(cond, Account.archived_at.is_(None)), ctx
        )
        for aid, crm in (await session.execute(stmt)).all():
            accounts_by_id.add(aid)
            if crm is not None:
                accounts_by_crm[crm] = aid
    crm_ids = {d.crm_id for _, _, d in valid if d.crm_id}
    taken: set[str] = set()
    if crm_ids:
        stmt2 = scoped(
            select(Contact.crm_id).where(
                Contact.crm_id.in_(crm_ids), Contact.archived_at.is_(None)
            ),
            ctx,
        )
        taken = {c for c in (await session.execute(stmt2)).scalars() if c}

    now = utcnow()
    to_insert: list[tuple[int, dict[str, Any]]] = []
    for index, ref, data in valid:
        account_id = ref["account_id"] if ref["account_id"] in accounts_by_id else None
        if ref["account_id"] is None:
            account_id = accounts_by_crm.get(ref["account_crm_id"])
        if account_id is None:
            field = "accountId" if ref["account_id"] else "accountCrmId"
            results[index] = _error(
                index,
                422,
                "unprocessable",
                "The account does not exist in the organization.",
                {"field": field},
            )
            continue
        if data.crm_id:
            if data.crm_id in taken:
                results[index] = _conflict(index, data.crm_id)
                continue
            taken.add(data.crm_id)
        values = data.model_dump()
        values.update(
            id=uuid7(),
            organization_id=ctx.organization_id,
            account_id=account_id,
            created_at=now,
            updated_at=now,
            archived_at=None,
        )
        to_insert.append((index, values))
    inserted: set[uuid.UUID] = set()
    if to_insert:
        table = cast(Table, Contact.__table__)
        insert = (
            postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
        )
        where = table.c.crm_id.isnot(None) & table.c.archived_at.is_(None)
        stmt3 = (
            insert(table)
            .on_conflict_do_nothing(
                index_elements=[table.c.organization_id, table.c.crm_id], index_where=where
            )
            .returning(table.c.id)
        )
        inserted = set((await session.execute(stmt3, [v for _, v in to_insert])).scalars())
    for index, values in to_insert:
        if values["id"] in inserted:
            values["full_name"] = " ".join(
                p for p in (values["first_name"], values["last_name"]) if p
            )
            out = ContactOut.model_validate(values).model_dump(mode="json", by_alias=True)
            results[index] = {"index": index, "status": 201, "data": out}
        else:
            results[index] = _conflict(index, values["crm_id"])
    final = [r for r in results if r is not None]
    created = sum(1 for r in final if r["status"] == 201)
    return {"results": final, "created": created, "failed": len(final) - created}


def _error(
    index: int, status: int, code: str, message: str, details: dict[str, Any]
) -> dict[str, Any]:
    return {
        "index": index,
        "status": status,
        "error": {"code": code, "message": message, "details": details},
    }


def _conflict(index: int, crm_id: str | None) -> dict[str, Any]:
    return _error(
        index,
        409,
        "conflict",
        "A contact with this crmId already exists in the organization.",
        {"field": "crmId", "crmId": crm_id},
    )
