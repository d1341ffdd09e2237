"""Accounts: CRUD with the default buying group, and the bulk create the CSV importer uses."""

from __future__ import annotations

import uuid
from typing import Any, cast

from pydantic import ValidationError
from sqlalchemy import Table, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.accounts import repository
from salesplan.accounts.records import (
    apply,
    archive,
    check_owner,
    flush_or_conflict,
    reject_nulls,
)
from salesplan.accounts.schemas import AccountIn, AccountOut, AccountPatch
from salesplan.auth.principal import RequestContext
from salesplan.errors import NotFound, validation_errors
from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped, scoped
from salesplan.models.crm import Account, BuyingGroup, default_buying_group_name
from salesplan.models.identity import Membership


async def list_accounts(
    conn: AsyncConnection,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    include_archived: bool = False,
    crm_id: str | None = None,
    owner_id: uuid.UUID | None = None,
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


def _default_group(
    ctx: RequestContext, account_id: uuid.UUID, name: str, now: Any
) -> dict[str, Any]:
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
    """An account and its default buying group, in the caller's transaction."""
    await check_owner(session, ctx, data.owner_id)
    account = Account(id=uuid7(), organization_id=ctx.organization_id, **data.model_dump())
    session.add(account)
    session.add(BuyingGroup(**_default_group(ctx, account.id, account.name, utcnow())))
    await flush_or_conflict(session, data.crm_id, "account")
    return account


async def replace_account(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID, data: AccountIn
) -> Account:
    account = await get_account(session, ctx, account_id)
    await check_owner(session, ctx, data.owner_id)
    apply(account, data.model_dump())
    await flush_or_conflict(session, data.crm_id, "account")
    return account


async def patch_account(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID, data: AccountPatch
) -> Account:
    sent = data.sent()
    reject_nulls(sent, ("name",))
    account = await get_account(session, ctx, account_id)
    if sent.get("owner_id") is not None:
        await check_owner(session, ctx, sent["owner_id"])
    apply(account, sent)
    await flush_or_conflict(session, account.crm_id, "account")
    return account


async def delete_account(session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID) -> None:
    archive(await get_account(session, ctx, account_id))
    await session.flush()


# --- bulk -------------------------------------------------------------------------------------


def _row_error(status: int, code: str, message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details}


async def bulk_create_accounts(
    session: AsyncSession, ctx: RequestContext, rows: list[Any]
) -> dict[str, Any]:
    """Create the valid rows, report every row. A fixed number of queries whatever the row
    count: owners checked in one query, crmIds in one, accounts inserted in one statement
    (ON CONFLICT DO NOTHING, so that a crmId racing in from another transaction becomes that
    row's 409 instead of failing the batch), their default buying groups in one more."""
    results: list[dict[str, Any] | None] = [None] * len(rows)
    valid: list[tuple[int, AccountIn]] = []
    for index, raw in enumerate(rows):
        if not isinstance(raw, dict):
            results[index] = {
                "index": index,
                "status": 400,
                "error": _row_error(
                    400,
                    "validation_error",
                    "Each account must be an object.",
                    {
                        "errors": [
                            {"location": ["body", "accounts", index], "message": "Not an object."}
                        ]
                    },
                ),
            }
            continue
        try:
            valid.append((index, AccountIn.model_validate(raw)))
        except ValidationError as exc:
            errors = validation_errors(exc.errors())
            for err in errors:
                err["location"] = ["body", "accounts", index, *err["location"]]
            results[index] = {
                "index": index,
                "status": 400,
                "error": _row_error(
                    400, "validation_error", "The account is not valid.", {"errors": errors}
                ),
            }

    owners = {a.owner_id for _, a in valid if a.owner_id is not None}
    known_owners: set[uuid.UUID] = set()
    if owners:
        stmt = scoped(select(Membership.user_id).where(Membership.user_id.in_(owners)), ctx)
        known_owners = set((await session.execute(stmt)).scalars())
    crm_ids = {a.crm_id for _, a in valid if a.crm_id is not None}
    taken: set[str] = set()
    if crm_ids:
        stmt = scoped(
            select(Account.crm_id).where(
                Account.crm_id.in_(crm_ids), Account.archived_at.is_(None)
            ),
            ctx,
        )
        taken = {c for c in (await session.execute(stmt)).scalars() if c is not None}

    def conflict(index: int, crm_id: str | None) -> dict[str, Any]:
        return {
            "index": index,
            "status": 409,
            "error": _row_error(
                409,
                "conflict",
                "An account with this crmId already exists in the organization.",
                {"field": "crmId", "crmId": crm_id},
            ),
        }

    now = utcnow()
    to_insert: list[tuple[int, dict[str, Any]]] = []
    for index, account in valid:
        if account.owner_id is not None and account.owner_id not in known_owners:
            results[index] = {
                "index": index,
                "status": 422,
                "error": _row_error(
                    422,
                    "unprocessable",
                    "ownerId is not a user of the organization.",
                    {"field": "ownerId", "id": str(account.owner_id)},
                ),
            }
            continue
        if account.crm_id is not None:
            if account.crm_id in taken:
                results[index] = conflict(index, account.crm_id)
                continue
            taken.add(account.crm_id)  # a later duplicate within the batch is a 409 too
        values = account.model_dump()
        values.update(
            id=uuid7(),
            organization_id=ctx.organization_id,
            created_at=now,
            updated_at=now,
            archived_at=None,
        )
        to_insert.append((index, values))

    inserted: set[uuid.UUID] = set()
    if to_insert:
        inserted = await _insert_accounts(session, [v for _, v in to_insert])
        groups = [
            _default_group(ctx, v["id"], v["name"], now)
            for _, v in to_insert
            if v["id"] in inserted
        ]
        if groups:
            # RETURNING makes it one multi-row INSERT (insertmanyvalues) instead of an
            # executemany round trip per row on asyncpg.
            group_table = cast(Table, BuyingGroup.__table__)
            await session.execute(group_table.insert().returning(group_table.c.id), groups)
    for index, values in to_insert:
        if values["id"] in inserted:
            out = AccountOut.model_validate(values).model_dump(mode="json", by_alias=True)
            results[index] = {"index": index, "status": 201, "data": out}
        else:
            results[index] = conflict(index, values["crm_id"])
    final = [r for r in results if r is not None]
    created = sum(1 for r in final if r["status"] == 201)
    return {"results": final, "created": created, "failed": len(final) - created}


async def _insert_accounts(session: AsyncSession, values: list[dict[str, Any]]) -> set[uuid.UUID]:
    table = cast(Table, Account.__table__)
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    where = table.c.crm_id.isnot(None) & table.c.archived_at.is_(None)
    stmt = (
        insert(table)
        .on_conflict_do_nothing(
            index_elements=[table.c.organization_id, table.c.crm_id], index_where=where
        )
        .returning(table.c.id)
    )
    result = await session.execute(stmt, values)
    return set(result.scalars())
