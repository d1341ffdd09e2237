"""Tenancy in one place: every query of a tenant-owned table starts from `scoped`, so that
another organization's row is simply not found (a 404, never a 403)."""

from __future__ import annotations

import uuid
from typing import Any, Protocol, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.errors import NotFound

T = TypeVar("T")


class HasOrganization(Protocol):
    organization_id: uuid.UUID


def scoped(stmt: Select, ctx: Any, model: Any | None = None) -> Select:  # type: ignore[type-arg]
    """Restrict `stmt` to the context's organization.

    `model` defaults to the statement's first entity; pass it when selecting columns of
    several tables.
    """
    target = model if model is not None else stmt.column_descriptions[0]["entity"]
    return stmt.where(target.organization_id == ctx.organization_id)


async def get_scoped(
    session: AsyncSession,
    model: type[T],
    ctx: Any,
    object_id: uuid.UUID,
    *,
    what: str | None = None,
    for_update: bool = False,
) -> T:
    """One tenant-owned row by id, or `NotFound`."""
    stmt = scoped(select(model).where(model.id == object_id), ctx, model)  # type: ignore[attr-defined]
    if for_update:
        stmt = stmt.with_for_update()
    row = (await session.execute(stmt)).scalar_one_or_none()
    if row is None:
        name = what or getattr(model, "__display_name__", model.__name__)
        raise NotFound(f"{name} not found.", details={"id": str(object_id)})
    return row
