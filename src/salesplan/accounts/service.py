"""Accounts: CRUD with the default buying group, and the bulk create the CSV importer uses."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from pydantic import ValidationError
from sqlalchemy import Table
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.accounts import repository
from salesplan.accounts.events import AccountCreated, AccountDeleted, AccountUpdated
from salesplan.accounts.schemas import AccountIn, AccountOut, AccountPatch
from salesplan.auth.principal import RequestContext
from salesplan.errors import NotFound, PreconditionFailed, validation_errors
from salesplan.kit.bulk import BulkCreate
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.kit.ids import uuid7
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.repository import apply, archive, flush_or_conflict
from salesplan.kit.responses import entity_tag, if_match_holds, json_bytes
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped
from salesplan.models.crm import Account, BuyingGroup, default_buying_group_name
from salesplan.organizations.repository import MembershipRepository
from salesplan.organizations.service import check_owner


async def list_accounts(
    conn: AsyncConnection,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    include_archived: bool = False,
    crm_id: str | None = None,
    owner_id: uuid.UUID | None = None,
    updated_since: datetime | None = None,
) -> tuple[list[dict[str, Any]], PaginationMeta]:
    """listAccounts: one page of wire dicts (Core rows, accounts/repository.py)."""
    return await repository.page(
        conn,
        ctx,
        params,
        codec,
        include_archived=include_archived,
        crm_id=crm_id,
        owner_id=owner_id,
        updated_since=updated_since,
    )


async def read_account(
    conn: AsyncConnection, ctx: RequestContext, account_id: uuid.UUID
) -> dict[str, Any]:
    """getAccount: the account's wire dict (archived ones too), or 404."""
    account = await repository.read(conn, ctx, account_id)
    if account is None:
        raise NotFound("Account not found.", details={"id": str(account_id)})
    return account


async def get_account(session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID) -> Account:
    return await get_scoped(session, Account, ctx, account_id)


async def matching_account(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID, if_match: str | None
) -> Account:
    """The account a write changes. With the client's `If-Match` (getAccount's ETag, the tag
    of its body), the row is locked and the body getAccount would answer now must carry a tag
    it names (RFC 9110 §13.1.1), else 412 `precondition_failed` and nothing changes."""
    if if_match is None:
        return await get_account(session, ctx, account_id)
    account = await get_scoped(session, Account, ctx, account_id, for_update=True)
    current = await read_account(await session.connection(), ctx, account_id)
    if not if_match_holds(if_match, entity_tag(json_bytes(current))):
        raise PreconditionFailed(
            "The account changed since the representation named by If-Match: read it again.",
            details={"reason": "etag_mismatch"},
        )
    return account


def _default_group(
    ctx: RequestContext, account_id: uuid.UUID, name: str, now: datetime
) -> dict[str, object]:
    return {
        "id": uuid7(),
        "organization_id": ctx.organization_id,
        "account_id": account_id,
        "name": default_buying_group_name(name)[:255],
        "description": None,
        "is_default": True,
        "opportunity_id": None,
        "created_at": now,
        "updated_at": now,
        "archived_at": None,
    }


async def create_account(session: AsyncSession, ctx: RequestContext, data: AccountIn) -> Account:
    """An account and its default buying group, in the caller's transaction. Without an
    `ownerId` the account is the calling user's (REST and MCP alike; none for an app token)."""
    if "owner_id" not in data.model_fields_set:
        data = data.model_copy(update={"owner_id": ctx.user_id})
    await check_owner(session, ctx, data.owner_id)
    account = Account(id=uuid7(), organization_id=ctx.organization_id, **data.model_dump())
    session.add(account)
    session.add(BuyingGroup(**_default_group(ctx, account.id, account.name, utcnow())))
    await flush_or_conflict(session, data.crm_id, "account")
    emit(session, AccountCreated(ctx.organization_id, account))
    return account


async def replace_account(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    data: AccountIn,
    if_match: str | None = None,
) -> Account:
    account = await matching_account(session, ctx, account_id, if_match)
    await check_owner(session, ctx, data.owner_id)
    apply(account, data.model_dump())
    await flush_or_conflict(session, data.crm_id, "account")
    emit(session, AccountUpdated(ctx.organization_id, account))
    return account


async def patch_account(
    session: AsyncSession,
    ctx: RequestContext,
    account_id: uuid.UUID,
    data: AccountPatch,
    if_match: str | None = None,
) -> Account:
    sent = data.sent()
    reject_nulls(sent, ("name",))
    account = await matching_account(session, ctx, account_id, if_match)
    if sent.get("owner_id") is not None:
        await check_owner(session, ctx, sent["owner_id"])
    apply(account, sent)
    await flush_or_conflict(session, account.crm_id, "account")
    emit(session, AccountUpdated(ctx.organization_id, account))
    return account


async def delete_account(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID, if_match: str | None = None
) -> None:
    account = await matching_account(session, ctx, account_id, if_match)
    if account.archived_at is None:
        archive(account)
        await session.flush()
        emit(session, AccountDeleted(ctx.organization_id, account))


# --- bulk -------------------------------------------------------------------------------------


async def bulk_create_accounts(
    session: AsyncSession, ctx: RequestContext, rows: Sequence[object]
) -> dict[str, Any]:
    """Create the valid rows, report every row (`kit.bulk`): owners checked in one query, then
    the accounts inserted in one statement and their default buying groups in one more."""
    bulk = BulkCreate(session, ctx, Account, "account", len(rows))
    valid: list[tuple[int, AccountIn]] = []
    for index, raw in enumerate(rows):
        if not isinstance(raw, dict):
            location = ["body", "accounts", index]
            bulk.invalid(
                index,
                "Each account must be an object.",
                [{"location": location, "message": "Not an object."}],
            )
            continue
        try:
            valid.append((index, AccountIn.model_validate(raw)))
        except ValidationError as exc:
            errors = validation_errors(exc.errors())
            for err in errors:
                err["location"] = ["body", "accounts", index, *err["location"]]
            bulk.invalid(index, "The account is not valid.", errors)

    members = MembershipRepository(session, ctx)
    known_owners = await members.user_ids_among({a.owner_id for _, a in valid if a.owner_id})
    checked: list[tuple[int, dict[str, Any]]] = []
    for index, account in valid:
        if account.owner_id is not None and account.owner_id not in known_owners:
            bulk.fail(
                index,
                422,
                "unprocessable",
                "ownerId is not a user of the organization.",
                {"field": "ownerId", "id": str(account.owner_id)},
            )
            continue
        checked.append((index, account.model_dump()))

    created = await bulk.insert(
        checked, lambda v: AccountOut.model_validate(v).model_dump(mode="json", by_alias=True)
    )
    if created:
        # RETURNING makes it one multi-row INSERT (insertmanyvalues) instead of an
        # executemany round trip per row on asyncpg.
        groups = [_default_group(ctx, v["id"], v["name"], v["created_at"]) for v in created]
        group_table = cast(Table, BuyingGroup.__table__)
        await session.execute(group_table.insert().returning(group_table.c.id), groups)
    bulk.emit_created(AccountCreated)
    return bulk.summary()
