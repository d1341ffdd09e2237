"""The one claim: how every job kind takes due rows so that several workers never take the
same one and a killed worker's rows come back.

    UPDATE <table> SET <lease values>
    WHERE <key> IN (SELECT <key> FROM <table> WHERE <due> ORDER BY … LIMIT n
                    FOR UPDATE SKIP LOCKED)
    RETURNING …

- PostgreSQL: `FOR UPDATE SKIP LOCKED` lets concurrent workers pass over each other's
  candidates; the UPDATE sets the lease (an owner and an expiry) in the same statement.
- SQLite: one writer at a time, so the same UPDATE is atomic without the lock clause.

The lease values are the job kind's own (a lease column moved forward, an owner, an attempt
counted or not); what is claimed is due again when its lease ends, so a worker killed
mid-batch loses nothing (at-least-once). Each kind writes an outcome only where the lease is
still its own (`WHERE lease_owner = me`), so a worker whose lease was taken over never writes
over the new owner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, SQLColumnExpression, Table, Update, select, update
from sqlalchemy.engine import Result
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import DeclarativeBase

from salesplan.kit.repository import table_of
from salesplan.kit.scoping import AnySelect

# A column or SQL expression (a mapped attribute too), as ORDER BY or RETURNING take them.
Column = SQLColumnExpression[object]
# What a claim updates: a table or a mapped class.
Target = Table | type[DeclarativeBase]


def candidates(
    entity: Column | type[DeclarativeBase],
    *,
    due: Sequence[ColumnElement[bool]],
    order_by: Sequence[Column],
    limit: int,
    lock_of: Target | None = None,
) -> AnySelect:
    """The due rows (`entity`: columns or a mapped class), first by `order_by`, at most
    `limit`, locked `FOR UPDATE SKIP LOCKED` (only `lock_of`'s rows when `due` joins another
    table). Alone, it is the claim of a kind whose transaction is its lease: the rows stay
    locked until it ends, and a killed worker's locks end with its connection."""
    return (
        select(entity)
        .where(*due)
        .order_by(*order_by)
        .limit(limit)
        .with_for_update(skip_locked=True, of=lock_of)
    )


def claim_statement(
    table: Target,
    *,
    due: Sequence[ColumnElement[bool]],
    order_by: Sequence[Column],
    limit: int,
    values: Mapping[str, object],
    returning: Sequence[Column | type[DeclarativeBase]] = (),
    key: str = "id",
    lock_of: Target | None = None,
    recheck: Sequence[ColumnElement[bool]] = (),
) -> Update:
    """The claim of at most `limit` rows of `table` (a Table or a mapped class) matching
    `due`, first by `order_by`: `values` set on them, `returning` read back (none: the
    result's `rowcount` says how many). `recheck`: conditions the UPDATE also requires of
    the rows it takes (another table's state, read when the row is taken)."""
    columns = (table if isinstance(table, Table) else table_of(table)).c
    chosen = candidates(columns[key], due=due, order_by=order_by, limit=limit, lock_of=lock_of)
    statement = (
        update(table)
        .where(_one_of(columns[key], chosen, limit), *recheck)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if returning:
        return statement.returning(*returning)
    return statement


def _one_of(key: ColumnElement[object], chosen: AnySelect, limit: int) -> ColumnElement[bool]:
    """`key = (subquery)` for one row (an InitPlan, run once), else `key IN (subquery)`."""
    if limit == 1:
        return key == chosen.scalar_subquery()
    return key.in_(chosen.scalar_subquery())


async def claim(
    session: AsyncSession | AsyncConnection,
    table: Target,
    *,
    due: Sequence[ColumnElement[bool]],
    order_by: Sequence[Column],
    limit: int,
    values: Mapping[str, object],
    returning: Sequence[Column | type[DeclarativeBase]] = (),
    key: str = "id",
    lock_of: Target | None = None,
    recheck: Sequence[ColumnElement[bool]] = (),
) -> Result[Any]:
    """Run `claim_statement` in the transaction of `session` (or a connection): the
    caller's unit of work commits."""
    statement = claim_statement(
        table,
        due=due,
        order_by=order_by,
        limit=limit,
        values=values,
        returning=returning,
        key=key,
        lock_of=lock_of,
        recheck=recheck,
    )
    return await session.execute(statement)
