"""Declarative base with a naming convention, column types that behave alike on both engines,
and the mixins every table is made of."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, MetaData, TypeDecorator, Uuid, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware date-time that comes back aware (UTC) on SQLite too."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


JSONType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        datetime: UTCDateTime(),
        uuid.UUID: Uuid(),
        dict[str, Any]: JSONType,
        list[Any]: JSONType,
    }


class IdMixin:
    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid7)


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class ArchiveMixin:
    archived_at: Mapped[datetime | None] = mapped_column(default=None)


class TenantMixin:
    """Every tenant-owned table carries its organization; `kit.scoping.scoped` filters on it."""

    @declared_attr
    def organization_id(cls) -> Mapped[uuid.UUID]:
        return mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)


LIVE = text("archived_at IS NULL")


def sort_indexes(
    table: str, *columns: str, scope: tuple[str, ...] = (), live: bool = False
) -> tuple[Index, ...]:
    """One index per `sortBy` of a list: (organization, the list's `scope` columns, the sort
    key, id), so that a cursor page is one index range in page order whatever the list's size
    (kit.pagination's keyset; tests/sync/test_index.py checks every list's plans). `live`: of
    the rows not archived only (`archived_at IS NULL`, what the list shows unless asked for
    archived rows), named `…_live`: smaller, and never a stand-in for a whole-table scan (a
    trigram search's plan). Named `ix_{table}_org_[{scope}_]{key}[_live]`, without the `_id`
    of a scope column nor the `_at` of a time."""
    where: dict[str, Any] = {"postgresql_where": LIVE, "sqlite_where": LIVE} if live else {}
    indexes = []
    for column in columns:
        scoped = (c.removesuffix("_id") for c in scope)
        name = "_".join(("ix", table, "org", *scoped, column.removesuffix("_at")))
        name += "_live" if live else ""
        indexes.append(Index(name, "organization_id", *scope, column, "id", **where))
    return tuple(indexes)
