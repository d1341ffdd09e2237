"""The generic base of a domain's repository: every statement on one tenant-owned table, scoped to
the request's organization (`kit.scoping`), listed with the shared pagination (`kit.pagination`).

A domain's `repository.py` subclasses it, names its model and sort columns, and adds the
statements only it needs; its service holds the rules and calls the repository, never
`select(...)` itself:

    class LeadRepository(Repository[Lead]):
        model = Lead
        sort_columns = sorts(Lead, lastName=Lead.last_name, email=Lead.email)
        search_columns = (Lead.first_name, Lead.last_name, Lead.email)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

from sqlalchemy import ColumnElement, Select, Table, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import DeclarativeBase

from salesplan.errors import Conflict, Unprocessable
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams, changed_since, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import AnySelect, SqlColumn, TenantScope, get_scoped, scoped
from salesplan.kit.search import contains_ci

# A mapped class (SQLAlchemy's declarative base: every table of `models/`). A protocol naming
# `id` and `organization_id` is refused by mypy for the mapped classes within the package's
# import cycle with `models/` (their `Mapped` descriptors are not yet resolved there).
M = TypeVar("M", bound=DeclarativeBase)
T = TypeVar("T")


def table_of(model: type[DeclarativeBase]) -> Table:
    """The mapped class's `Table` (typed: `__table__` is declared a `FromClause`)."""
    table = model.__table__
    if not isinstance(table, Table):  # pragma: no cover - every model here maps one table
        raise TypeError(f"{model.__name__} is not mapped to a Table")
    return table


def apply(row: object, fields: Mapping[str, object]) -> None:
    """Write the fields (by Python name) onto the row."""
    for name, value in fields.items():
        setattr(row, name, value)


def archive(row: Any) -> None:
    """DELETE archives; archiving an archived row changes nothing (a second DELETE is a 204)."""
    if row.archived_at is None:
        row.archived_at = utcnow()


def absent_reference(model: type[object], object_id: object, field: str) -> Unprocessable:
    """The 422 of a row named in a request body that the organization does not have."""
    name = getattr(model, "__display_name__", model.__name__)
    return Unprocessable(
        f"{name} {object_id} does not exist in the organization.",
        details={"field": field, "id": str(object_id)},
    )


async def referenced(
    session: AsyncSession,
    model: type[T],
    ctx: TenantScope,
    object_id: uuid.UUID,
    field: str,
    *,
    live: bool = True,
) -> T:
    """A row named in a request body (not in the path): missing, another organization's, or
    archived (`live`) → 422 with `details.field`."""
    table: Any = model
    stmt = scoped(select(model).where(table.id == object_id), ctx, model)
    if live and hasattr(model, "archived_at"):
        stmt = stmt.where(table.archived_at.is_(None))
    row = (await session.execute(stmt)).scalar_one_or_none()
    if row is None:
        raise absent_reference(model, object_id, field)
    return row


async def flush_or_conflict(session: AsyncSession, crm_id: str | None, what: str) -> None:
    """Flush; the partial unique index on (organization, crmId) among live rows turns a
    duplicate, even one racing in another transaction, into a 409."""
    try:
        await session.flush()
    except IntegrityError as exc:
        if "crm_id" in str(exc.orig) or "uq_" in str(exc.orig):
            raise Conflict(
                f"{'An' if what[:1] in 'aeiou' else 'A'} {what} with this crmId already exists "
                "in the organization.",
                details={"field": "crmId", "crmId": crm_id},
            ) from None
        raise


def sorts(model: Any, **more: SqlColumn) -> dict[str, SqlColumn]:
    """The sort keys of a list: `createdAt` and `updatedAt`, and `more` (key=column)."""
    return {"createdAt": model.created_at, "updatedAt": model.updated_at, **more}


async def page_of(
    session: AsyncSession,
    stmt: AnySelect,
    model: Any,
    params: ListParams,
    codec: CursorCodec,
    sort_columns: Mapping[str, SqlColumn],
    search_columns: tuple[SqlColumn, ...] = (),
) -> tuple[list[Any], PaginationMeta]:
    """One page of the rows of `stmt` (`SELECT model …`): `params.search` matched
    (case-insensitive, contains) against `search_columns`, sorted by `sort_columns`."""
    if params.search and search_columns:
        match = contains_ci(search_columns[0], params.search)
        for column in search_columns[1:]:
            match = match | contains_ci(column, params.search)
        stmt = stmt.where(match)
    return await paginate(
        session,
        stmt,
        params,
        sort_columns=sort_columns,
        id_column=model.id,
        codec=codec,
        scalars=True,
    )


class Repository(Generic[M]):
    model: type[M]
    sort_columns: ClassVar[Mapping[str, SqlColumn]] = {}
    search_columns: ClassVar[tuple[SqlColumn, ...]] = ()
    conflict_name: ClassVar[str | None] = None  # "lead": a duplicate crmId is a 409

    def __init__(self, session: AsyncSession, ctx: TenantScope) -> None:
        self.session = session
        self.ctx = ctx

    def select(self) -> Select[M]:
        """`SELECT model` in the organization (add `.where(...)` to narrow it)."""
        return scoped(select(self.model), self.ctx, self.model)

    async def get(self, object_id: uuid.UUID, *, for_update: bool = False) -> M:
        """One row by id, or `NotFound` (another organization's row is not found either)."""
        row: M = await get_scoped(
            self.session, self.model, self.ctx, object_id, for_update=for_update
        )
        return row

    async def list(
        self,
        params: ListParams,
        codec: CursorCodec,
        *,
        where: Iterable[ColumnElement[bool]] = (),
        include_archived: bool = False,
        updated_since: datetime | None = None,
    ) -> tuple[list[M], PaginationMeta]:
        """One page of rows: live ones unless `include_archived`, changed at or after
        `updated_since` (then by `updatedAt` unless `sortBy` says otherwise), `params.search`
        matched (case-insensitive, contains) against `search_columns`, sorted by
        `sort_columns`."""
        table: Any = self.model  # archived_at, updated_at: columns of most tables, not all
        stmt = self.select().where(*where)
        if not include_archived and hasattr(table, "archived_at"):
            stmt = stmt.where(table.archived_at.is_(None))
        if updated_since is not None:
            stmt = stmt.where(table.updated_at >= updated_since)
            params = changed_since(params, updated_since)
        return await page_of(
            self.session, stmt, table, params, codec, self.sort_columns, self.search_columns
        )

    async def insert(self, row: M) -> M:
        """Add a new row (its organization is the context's) and flush."""
        owned: Any = row  # organization_id is TenantMixin's declared_attr: read-only to mypy
        owned.organization_id = self.ctx.organization_id
        self.session.add(row)
        await self.flush(row)
        return row

    async def update(self, row: M, fields: Mapping[str, object]) -> M:
        """Write the fields onto the row and flush (`updated_at` follows by `onupdate` when
        something changed)."""
        apply(row, fields)
        await self.flush(row)
        return row

    async def flush(self, row: M) -> None:
        """Flush; with `conflict_name` set, a duplicate live `crmId` (even one racing in from
        another transaction) is a 409 naming the record."""
        if self.conflict_name is None:
            await self.session.flush()
        else:
            await flush_or_conflict(self.session, getattr(row, "crm_id", None), self.conflict_name)

    async def archive(self, row: M) -> None:
        """Archive (DELETE): archiving an archived row changes nothing."""
        if getattr(row, "archived_at", None) is None:
            archive(row)
            await self.session.flush()
