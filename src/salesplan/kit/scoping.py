"""Tenancy in one place: every query of a tenant-owned table starts from `scoped`, so that
another organization's row is simply not found (a 404, never a 403)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, TypeVarTuple

from sqlalchemy import ColumnElement, Row, Select, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import QueryableAttribute

from salesplan.errors import NotFound

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

# Any SELECT, whatever it selects (SQLAlchemy 2.1's `Select` is variadic: `Select[Account]`,
# `Select[uuid.UUID, str]`), for code that runs one and reads its rows generically.
AnySelect = Select[*tuple[Any, ...]]
# Any row of such a SELECT.
AnyRow = Row[*tuple[Any, ...]]
# A column to compare, sort or label: a table's (`Plan.__table__.c.name`, a label) or a mapped
# class's attribute (`Account.created_at`).
SqlColumn = ColumnElement[object] | QueryableAttribute[object]


class TenantScope(Protocol):
    """What a query is scoped by: the request's context (`RequestContext`), or any object that
    names one organization (a page's `OrgScope`, a worker job)."""

    @property
    def organization_id(self) -> uuid.UUID: ...


@dataclass(frozen=True, slots=True)
class OrgScope:
    """A scope naming one organization by id, for code that has no request context (a job, a
    command, a rule given only the organization's id)."""

    organization_id: uuid.UUID


def scoped(stmt: Select[*Ts], ctx: TenantScope, model: Any | None = None) -> Select[*Ts]:
    """Restrict `stmt` to the context's organization.

    `model` defaults to the statement's first entity; pass it when selecting columns of
    several tables.
    """
    target = model if model is not None else stmt.column_descriptions[0]["entity"]
    return stmt.where(in_organization(target, ctx))


def in_organization(model: Any, ctx: TenantScope) -> ColumnElement[bool]:
    """The condition `scoped` adds, for statements that are not a SELECT (UPDATE, DELETE):
    `model`'s rows of the context's organization."""
    return model.organization_id == ctx.organization_id


def scoped_by_parameter(stmt: Select[*Ts], model: Any | None = None) -> Select[*Ts]:
    """`scoped` for a statement built once and run many times (a hot read): the organization is
    the statement's parameter `organization_id`, to pass with the others
    (`{"organization_id": ctx.organization_id, ...}`). Building a statement costs more CPU than
    running it on a primary key."""
    target = model if model is not None else stmt.column_descriptions[0]["entity"]
    return stmt.where(organization_parameter(target))


def organization_parameter(model: Any, name: str = "organization_id") -> ColumnElement[bool]:
    """The condition `scoped_by_parameter` adds, for any statement built once (an UPDATE, an
    INSERT … SELECT): `model`'s rows of the organization passed as the parameter `name`.
    `model` may be a mapped class, a table's `.c` or anything with an `organization_id`."""
    return model.organization_id == bindparam(name)


def not_found(model: type[object], object_id: object, what: str | None = None) -> NotFound:
    """The 404 of a tenant-owned row named in the path: "<Display name> not found."."""
    name = what or getattr(model, "__display_name__", model.__name__)
    return NotFound(f"{name} not found.", details={"id": str(object_id)})


async def get_scoped(
    session: AsyncSession,
    model: type[T],
    ctx: TenantScope,
    object_id: uuid.UUID,
    *,
    what: str | None = None,
    for_update: bool = False,
) -> T:
    """One tenant-owned row by id, or `NotFound`.

    `for_update` locks the row until the transaction ends and reads its latest committed
    state: concurrent read-modify-writes of the row (or of what it owns) then run one after
    the other. PostgreSQL: `SELECT … FOR UPDATE`. SQLite has no row locks: a no-op UPDATE of
    the row takes the database's write lock (waiting for it, busy_timeout) before the read."""
    table: Any = model
    id_col = table.id
    stmt = scoped(select(model).where(id_col == object_id), ctx, model)
    if for_update:
        if session.get_bind().dialect.name == "sqlite":
            # Each column set to itself; onupdate columns too, so that updated_at stays put.
            same = {c: c for c in table.__table__.c if c.onupdate is not None or c.key == "id"}
            await session.execute(
                update(table)
                .where(id_col == object_id, table.organization_id == ctx.organization_id)
                .values(same)
                .execution_options(synchronize_session=False)
            )
        else:
            stmt = stmt.with_for_update()
        stmt = stmt.execution_options(populate_existing=True)
    row = (await session.execute(stmt)).scalar_one_or_none()
    if row is None:
        raise not_found(model, object_id, what)
    return row
