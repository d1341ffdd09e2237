"""Contacts: the people of an account. The rules; the statements are `ContactRepository`'s."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.contacts.events import ContactCreated, ContactDeleted, ContactUpdated
from salesplan.contacts.repository import ContactRepository
from salesplan.contacts.schemas import ContactIn, ContactOut, ContactPatch, ContactReplace
from salesplan.errors import ValidationFailed, validation_errors
from salesplan.kit.bulk import BulkCreate
from salesplan.kit.events import emit
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.repository import referenced
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped
from salesplan.kit.zones import check_zone, zone
from salesplan.models.crm import Account, Contact


async def list_account_contacts(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
    *,
    include_archived: bool = False,
    updated_since: datetime | None = None,
) -> tuple[list[Contact], PaginationMeta]:
    """The contacts of an account that exists in the organization (else 404)."""
    await get_scoped(session, Account, ctx, account_id)
    return await list_contacts(
        session,
        ctx,
        params,
        codec,
        account_id=account_id,
        include_archived=include_archived,
        updated_since=updated_since,
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
    updated_since: datetime | None = None,
) -> tuple[list[Contact], PaginationMeta]:
    return await ContactRepository(session, ctx).page(
        params,
        codec,
        account_id=account_id,
        email=email.strip().lower() if email is not None else None,
        include_archived=include_archived,
        updated_since=updated_since,
    )


async def get_contact(session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID) -> Contact:
    return await ContactRepository(session, ctx).get(contact_id)


async def create_contact(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID, data: ContactIn
) -> Contact:
    # The account is in the path: a missing one is a 404.
    await get_scoped(session, Account, ctx, account_id)
    check_zone(data.time_zone, "timeZone")
    contact = Contact(account_id=account_id, **data.model_dump())
    await ContactRepository(session, ctx).insert(contact)
    emit(session, ContactCreated(ctx.organization_id, contact))
    return contact


async def replace_contact(
    session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID, data: ContactReplace
) -> Contact:
    contacts = ContactRepository(session, ctx)
    contact = await contacts.get(contact_id)
    check_zone(data.time_zone, "timeZone")
    fields = data.model_dump()
    account_id = fields.pop("account_id")
    if account_id is not None and account_id != contact.account_id:
        await referenced(session, Account, ctx, account_id, "accountId")
        contact.account_id = account_id
    await contacts.update(contact, fields)
    emit(session, ContactUpdated(ctx.organization_id, contact))
    return contact


async def patch_contact(
    session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID, data: ContactPatch
) -> Contact:
    sent = data.sent()
    contacts = ContactRepository(session, ctx)
    contact = await contacts.get(contact_id)
    check_zone(sent.get("time_zone"), "timeZone")
    if "account_id" in sent:
        account_id = sent.pop("account_id")
        if account_id is None:
            raise ValidationFailed.at(["body", "accountId"], "This field may not be null.")
        if account_id != contact.account_id:
            await referenced(session, Account, ctx, account_id, "accountId")
            contact.account_id = account_id
    await contacts.update(contact, sent)
    emit(session, ContactUpdated(ctx.organization_id, contact))
    return contact


async def delete_contact(session: AsyncSession, ctx: RequestContext, contact_id: uuid.UUID) -> None:
    contacts = ContactRepository(session, ctx)
    contact = await contacts.get(contact_id)
    if contact.archived_at is None:
        await contacts.archive(contact)
        emit(session, ContactDeleted(ctx.organization_id, contact))


async def bulk_create_contacts(
    session: AsyncSession, ctx: RequestContext, rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """The CSV importer's path for contacts: like bulkCreateAccounts (`kit.bulk`), each row
    names its account by `accountId` or `accountCrmId` (the accounts found in one query)."""
    bulk = BulkCreate(session, ctx, Contact, "contact", len(rows))
    valid: list[tuple[int, uuid.UUID | None, str | None, ContactIn]] = []
    for index, raw in enumerate(rows):
        raw = dict(raw)
        ref = {k: raw.pop(k, None) for k in ("accountId", "accountCrmId")}
        try:
            data = ContactIn.model_validate(raw)
            account_id = uuid.UUID(ref["accountId"]) if ref["accountId"] else None
        except ValidationError as exc:
            bulk.invalid(index, "The contact is not valid.", validation_errors(exc.errors()))
            continue
        except ValueError:
            bulk.invalid(
                index,
                "accountId is not a UUID.",
                [{"location": ["accountId"], "message": "Not a UUID."}],
            )
            continue
        if data.time_zone is not None and zone(data.time_zone) is None:
            bulk.fail(
                index,
                422,
                "unprocessable",
                "timeZone is not an IANA time zone name.",
                {"field": "timeZone", "reason": "unknown_time_zone"},
            )
            continue
        if account_id is None and not ref["accountCrmId"]:
            bulk.invalid(
                index,
                "accountId or accountCrmId is required.",
                [{"location": ["accountId"], "message": "Required."}],
            )
            continue
        valid.append((index, account_id, ref["accountCrmId"], data))

    accounts_by_id, accounts_by_crm = await ContactRepository(session, ctx).live_accounts(
        {aid for _, aid, _, _ in valid if aid}, {crm for _, aid, crm, _ in valid if aid is None}
    )
    checked: list[tuple[int, dict[str, Any]]] = []
    for index, ref_id, ref_crm, data in valid:
        if ref_id is not None:
            account_id = ref_id if ref_id in accounts_by_id else None
        else:
            account_id = accounts_by_crm.get(ref_crm or "")
        if account_id is None:
            bulk.fail(
                index,
                422,
                "unprocessable",
                "The account does not exist in the organization.",
                {"field": "accountId" if ref_id else "accountCrmId"},
            )
            continue
        checked.append((index, {**data.model_dump(), "account_id": account_id}))
    await bulk.insert(checked, _render)
    bulk.emit_created(ContactCreated)
    return bulk.summary()


def _render(values: dict[str, Any]) -> dict[str, Any]:
    full_name = " ".join(p for p in (values["first_name"], values["last_name"]) if p)
    return ContactOut.model_validate({**values, "full_name": full_name}).model_dump(
        mode="json", by_alias=True
    )
