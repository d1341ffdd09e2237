"""Accounts' hot reads in Core on a pooled connection (a unit of work's `reader()`): getAccount is one
statement on the primary key, a listAccounts page one keyed statement (and the count in page
mode). Rows become wire dicts here, ids as plain strings and money as numbers, so that orjson
serializes them without a fallback; no ORM object, no identity map, no pydantic model."""

from __future__ import annotations

import functools
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.kit.driver import DriverStatement
from salesplan.kit.pagination import CursorCodec, ListParams, changed_since, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import AnySelect, TenantScope, scoped_by_parameter
from salesplan.kit.search import contains_ci, like_pattern
from salesplan.models.crm import Account

A = Account.__table__.c

# The columns of AccountOut, in its order (the wire order of the body).
COLUMNS = (
    A.id,
    A.name,
    A.domain,
    A.website,
    A.industry,
    A.description,
    A.crm_id,
    A.owner_id,
    A.annual_revenue,
    A.employee_count,
    A.archived_at,
    A.created_at,
    A.updated_at,
)

SORT = {"createdAt": A.created_at, "updatedAt": A.updated_at, "name": A.name}


def account_wire(row: Any) -> dict[str, Any]:
    """An account row (COLUMNS first) as AccountOut's JSON object."""
    (
        id_,
        name,
        domain,
        website,
        industry,
        description,
        crm_id,
        owner_id,
        revenue,
        employees,
        archived_at,
        created_at,
        updated_at,
    ) = row[:13]
    return {
        "id": str(id_),
        "name": name,
        "domain": domain,
        "website": website,
        "industry": industry,
        "description": description,
        "crmId": crm_id,
        "ownerId": None if owner_id is None else str(owner_id),
        "annualRevenue": None if revenue is None else float(revenue),
        "employeeCount": employees,
        "archivedAt": archived_at,
        "createdAt": created_at,
        "updatedAt": updated_at,
    }


_BY_ID = scoped_by_parameter(select(*COLUMNS).where(A.id == bindparam("account_id")), Account)
_BY_ID_ON_DRIVER = DriverStatement(_BY_ID)


async def read(
    conn: AsyncConnection, ctx: TenantScope, account_id: uuid.UUID
) -> dict[str, Any] | None:
    """One account of the organization (archived ones too) as its wire dict, or None. On
    PostgreSQL the statement goes straight to the driver (kit.driver): getAccount's hottest
    path, a third of its CPU time is SQLAlchemy's execution machinery otherwise."""
    params = {"account_id": account_id, "organization_id": ctx.organization_id}
    row = await _BY_ID_ON_DRIVER.fetchrow(conn, params)
    return None if row is None else account_wire(row)


@functools.cache
def _query(
    include_archived: bool, crm_id: bool, owner_id: bool, search: bool, updated_since: bool = False
) -> AnySelect:
    """listAccounts' statement for one combination of filters, built once: the organization
    and the filters' values are its parameters (see `page`)."""
    stmt = scoped_by_parameter(select(*COLUMNS), Account)
    if not include_archived:
        stmt = stmt.where(A.archived_at.is_(None))
    if updated_since:
        stmt = stmt.where(A.updated_at >= bindparam("updated_since", type_=A.updated_at.type))
    if crm_id:
        stmt = stmt.where(A.crm_id == bindparam("crm_id"))
    if owner_id:
        stmt = stmt.where(A.owner_id == bindparam("owner_id"))
    if search:
        pattern = bindparam("search", type_=A.name.type)
        stmt = stmt.where(contains_ci(A.name, pattern) | contains_ci(A.domain, pattern))
    return stmt


async def page(
    conn: AsyncConnection,
    ctx: TenantScope,
    params: ListParams,
    codec: CursorCodec,
    *,
    include_archived: bool = False,
    crm_id: str | None = None,
    owner_id: uuid.UUID | None = None,
    updated_since: datetime | None = None,
) -> tuple[list[dict[str, Any]], PaginationMeta]:
    """One page of accounts as wire dicts, and its pagination; with `updated_since`, those
    changed at or after it (by `updatedAt` unless `sortBy` says otherwise)."""
    search = params.search or None
    stmt = _query(
        include_archived,
        crm_id is not None,
        owner_id is not None,
        search is not None,
        updated_since is not None,
    )
    values: dict[str, object] = {"organization_id": ctx.organization_id}
    if updated_since is not None:
        values["updated_since"] = updated_since
        params = changed_since(params, updated_since)
    if crm_id is not None:
        values["crm_id"] = crm_id
    if owner_id is not None:
        values["owner_id"] = owner_id
    if search is not None:
        values["search"] = like_pattern(search)
    rows, meta = await paginate(
        conn, stmt, params, sort_columns=SORT, id_column=A.id, codec=codec, bound=values
    )
    return [account_wire(row) for row in rows], meta
