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
mid-batch loses nothing (at-least-once). Writing an outcome only `WHERE lease_owner = me`
(`still_ours`) keeps a worker whose lease was taken over from writing over the new owner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Table, select, update
from sqlalchemy.engine import Result
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.dml import ReturningUpdate


def claim_statement(
    table: Table | Any,
    *,
    due: Sequence[ColumnElement[bool]],
    order_by: Sequence[Any],
    limit: int,
    values: Mapping[str, Any],
    returning: Sequence[Any],
    key: str = "id",
    lock_of: Any = None,
) -> ReturningUpdate[Any]:
    """The claim of at most `limit` rows of `table` (a Table or a mapped class) matching
    `due`, first by `order_by`: `values` set on them, `returning` read back."""
    columns = table.__table__.c if hasattr(table, "__table__") else table.c
    candidates = (
        select(columns[key])
        .where(*due)
        .order_by(*order_by)
        .limit(limit)
        .with_for_update(skip_locked=True, of=lock_of)
    )
    return (
        update(table)
        .where(columns[key].in_(candidates.scalar_subquery()))
        .values(**values)
        .returning(*returning)
        .execution_options(synchronize_session=False)
    )


async def claim(
    session: AsyncSession,
    table: Table | Any,
    *,
    due: Sequence[ColumnElement[bool]],
    order_by: Sequence[Any],
    limit: int,
    values: Mapping[str, Any],
    returning: Sequence[Any],
    key: str = "id",
) -> Result[Any]:
    """Run `claim_statement` in `session`'s transaction (the caller's unit of work commits)."""
    statement = claim_statement(
        table,
        due=due,
        order_by=order_by,
        limit=limit,
        values=values,
        returning=returning,
        key=key,
    )
    return await session.execute(statement)


def still_ours(lease_owner: ColumnElement[Any], worker_id: str) -> ColumnElement[bool]:
    """The condition of an outcome's write: the lease is still this worker's."""
    return lease_owner == worker_id
