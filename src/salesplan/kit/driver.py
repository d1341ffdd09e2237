"""A Core statement run straight on the database driver for the hottest reads.

SQLAlchemy's execution path (compiled-cache lookup, execution context, cursor adapter, result
processing) costs about as much CPU as everything else in a one-row read. On PostgreSQL a
`DriverStatement` compiles its Core statement once for asyncpg (`$n` parameters) and runs it
with the asyncpg connection's own `fetchrow` (asyncpg's prepared-statement cache); rows come back
as asyncpg Records (ids as asyncpg's UUID, timestamps aware in UTC, numerics as Decimal), which
the wire builders turn into strings and numbers anyway. Any other engine (SQLite) runs the same
Core statement through SQLAlchemy. Only for statements whose result columns need no SQLAlchemy
result processing on PostgreSQL (plain columns of native types), and whose parameters need no
SQLAlchemy bind processing (ids, strings, numbers, aware date-times)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Executable
from sqlalchemy.ext.asyncio import AsyncConnection


class DriverStatement:
    def __init__(self, statement: Executable) -> None:
        self.statement = statement
        self._sql: str | None = None
        self._order: tuple[str, ...] = ()
        # Values the statement carries itself (a literal in a comparison is a bind parameter).
        self._carried: dict[str, Any] = {}

    def _compiled(self, conn: AsyncConnection) -> tuple[str, tuple[str, ...]]:
        if self._sql is None:
            compiled = self.statement.compile(dialect=conn.dialect)  # type: ignore[attr-defined]
            self._carried = {
                name: bind.effective_value
                for bind, name in compiled.bind_names.items()
                if not bind.required
            }
            self._order = tuple(compiled.positiontup or ())
            self._sql = str(compiled)
        return self._sql, self._order

    async def fetchrow(self, conn: AsyncConnection, params: Mapping[str, Any]) -> Any:
        """The first row (a Record or a Row, both indexable), or None."""
        if conn.dialect.name != "postgresql":
            return (await conn.execute(self.statement, params)).first()
        return await self._on_driver(conn, "fetchrow", params)

    async def fetch(self, conn: AsyncConnection, params: Mapping[str, Any]) -> Sequence[Any]:
        """Every row (Records or Rows: indexable by position, iterable over their values)."""
        if conn.dialect.name != "postgresql":
            return (await conn.execute(self.statement, params)).all()
        return await self._on_driver(conn, "fetch", params)  # type: ignore[no-any-return]

    async def fetchval(self, conn: AsyncConnection, params: Mapping[str, Any]) -> Any:
        """The first column of the first row, or None."""
        if conn.dialect.name != "postgresql":
            return (await conn.execute(self.statement, params)).scalar()
        return await self._on_driver(conn, "fetchval", params)

    async def _on_driver(
        self, conn: AsyncConnection, method: str, params: Mapping[str, Any]
    ) -> Any:
        sql, order = self._compiled(conn)
        raw = await conn.get_raw_connection()
        try:
            run = getattr(raw.driver_connection, method)
            carried = self._carried
            return await run(sql, *(params[k] if k in params else carried[k] for k in order))
        except Exception as exc:
            # The driver's own errors: a broken connection leaves the pool (SQLAlchemy would
            # invalidate it), and the error reaches the middleware as it would through
            # SQLAlchemy (database_unavailable reads the SQLSTATE and the error class).
            if _connection_lost(exc):
                await conn.invalidate(exc)
            raise


def _connection_lost(exc: BaseException) -> bool:
    name = type(exc).__name__
    return (
        isinstance(exc, OSError | TimeoutError)
        or name in ("InterfaceError", "ConnectionDoesNotExistError", "InternalClientError")
        or str(getattr(exc, "sqlstate", "") or "").startswith("08")
    )
