"""A Core statement run straight on the database driver for the hottest reads.

SQLAlchemy's execution path (compiled-cache lookup, execution context, cursor adapter, result
processing, and on SQLite several hand-offs to aiosqlite's thread per statement) costs about as
much CPU as everything else in a one-row read. A `DriverStatement` compiles its Core statement
once per dialect and runs it on the driver connection underneath SQLAlchemy's:

- PostgreSQL: asyncpg's own `fetch`/`fetchrow`/`fetchval` (`$n` parameters, asyncpg's
  prepared-statement cache). Rows come back as asyncpg Records (ids as asyncpg's UUID, a
  `uuid.UUID` subclass; timestamps aware in UTC; numerics as Decimal), which the wire builders
  turn into strings and numbers anyway. Only for statements whose result columns need no
  SQLAlchemy result processing on PostgreSQL (plain columns of native types), and whose
  parameters need no bind processing (ids, strings, numbers, aware date-times) but JSON, which
  SQLAlchemy's own processor serializes.
- SQLite (aiosqlite): one `execute_fetchall` (one hand-off to the connection's thread), with
  SQLAlchemy's own bind and result processors of the statement's types applied here, so that
  rows hold what SQLAlchemy would have answered (UUIDs, date-times), as tuples.
- Any other driver: the same statement through SQLAlchemy.

Rows of every path are indexable by position (slices too) and iterate over their values.

Writes too: an UPDATE or INSERT with RETURNING runs the same way, inside `transaction(conn)`,
which opens the transaction on the driver itself (see there)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Executable
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql import sqltypes
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement

from salesplan.kit.adapters import begin_on_driver, bind_processors, result_processor

# What the driver says of a connection it lost (asyncpg raises InterfaceError for many things:
# too many parameters, an operation in progress; only these texts are a closed connection).
_CLOSED_TEXTS = ("connection is closed", "connection was closed")


def closed_connection_error(exc: BaseException) -> bool:
    name = type(exc).__name__
    if name == "ConnectionDoesNotExistError":
        return True
    return name == "InterfaceError" and any(text in str(exc) for text in _CLOSED_TEXTS)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    order: tuple[str, ...]  # parameter names, in their positions
    carried: dict[str, object]  # values the statement holds itself (a literal is a parameter)
    # SQLAlchemy's bind processors by name (SQLite: all; PostgreSQL: JSON's)
    binds: dict[str, Callable[[object], object]]
    results: tuple[tuple[int, Callable[[object], object]], ...]  # SQLite: (column, processor)

    def args(self, params: Mapping[str, object]) -> list[object]:
        """The statement's positional parameters: `params` by name, else the values it
        carries, through their bind processors."""
        args = []
        for key in self.order:
            value = params[key] if key in params else self.carried[key]
            processor = self.binds.get(key)
            args.append(value if processor is None or value is None else processor(value))
        return args


class DriverStatement:
    def __init__(self, statement: Executable) -> None:
        self.statement = statement
        self._compiled_for: dict[str, _Compiled] = {}

    def _compiled(self, conn: AsyncConnection) -> _Compiled:
        dialect = conn.dialect
        found = self._compiled_for.get(dialect.name)
        if found is None:
            statement = self.statement
            assert isinstance(statement, ClauseElement)  # a select(), insert(), text(), …
            compiled = statement.compile(dialect=dialect)
            assert isinstance(compiled, SQLCompiler)  # a statement's, not a DDL's
            if compiled.insert_prefetch or compiled.update_prefetch:
                # SQLAlchemy computes these values (a column's Python default or onupdate, as
                # `updated_at`'s) when it executes the statement itself; here they would go
                # out as NULL.
                names = [c.key for c in (*compiled.insert_prefetch, *compiled.update_prefetch)]
                raise TypeError(f"set {names} explicitly: their Python defaults would not run")
            results: list[tuple[int, Callable[[object], object]]] = []
            binds: dict[str, Callable[[object], object]] = {}
            if dialect.name == "postgresql":
                # JSON parameters go to asyncpg as text (SQLAlchemy's codec on the connection
                # takes text): serialized by SQLAlchemy's own processor, as it would.
                binds = {
                    name: processor
                    for name, processor in bind_processors(compiled).items()
                    if isinstance(compiled.binds[name].type, sqltypes.JSON)
                }
            if dialect.name == "sqlite":
                binds = bind_processors(compiled)
                # A SELECT's columns, or the RETURNING columns of an UPDATE / INSERT.
                for i, column in enumerate(getattr(self.statement, "exported_columns", ())):
                    processor = result_processor(column.type, dialect)
                    if processor is not None:
                        results.append((i, processor))
            found = self._compiled_for[dialect.name] = _Compiled(
                sql=str(compiled),
                order=tuple(compiled.positiontup or ()),
                carried={
                    name: bind.effective_value
                    for bind, name in compiled.bind_names.items()
                    if not bind.required
                },
                binds=binds,
                results=tuple(results),
            )
        return found

    @staticmethod
    async def _conn(db: AsyncConnection | AsyncSession) -> AsyncConnection:
        """`db` itself, or a session's connection (in its transaction once SQLAlchemy began
        one)."""
        return db if isinstance(db, AsyncConnection) else await db.connection()

    async def fetchrow(
        self, db: AsyncConnection | AsyncSession, params: Mapping[str, object]
    ) -> Any:
        """The first row, or None. `db` may be a session: its connection (and its transaction,
        when SQLAlchemy has begun one) runs the statement."""
        conn = await self._conn(db)
        name = conn.dialect.name
        if name == "postgresql":
            return await self._on_asyncpg(conn, "fetchrow", params)
        if name == "sqlite":
            rows = await self._on_aiosqlite(conn, params)
            return rows[0] if rows else None
        return (await conn.execute(self.statement, params)).first()

    async def fetch(
        self, db: AsyncConnection | AsyncSession, params: Mapping[str, object]
    ) -> Sequence[Any]:
        """Every row."""
        conn = await self._conn(db)
        name = conn.dialect.name
        if name == "postgresql":
            rows: Sequence[Any] = await self._on_asyncpg(conn, "fetch", params)
            return rows
        if name == "sqlite":
            return await self._on_aiosqlite(conn, params)
        return (await conn.execute(self.statement, params)).all()

    async def fetchval(
        self, db: AsyncConnection | AsyncSession, params: Mapping[str, object]
    ) -> Any:
        """The first column of the first row, or None."""
        conn = await self._conn(db)
        if conn.dialect.name == "postgresql":
            return await self._on_asyncpg(conn, "fetchval", params)
        row = await self.fetchrow(conn, params)
        return None if row is None else row[0]

    async def executemany(
        self, db: AsyncConnection | AsyncSession, rows: Sequence[Mapping[str, object]]
    ) -> None:
        """Run the statement once per parameter set, in one hand-off to the driver (asyncpg
        pipelines them: one round trip)."""
        conn = await self._conn(db)
        name = conn.dialect.name
        if name not in ("postgresql", "sqlite"):
            await conn.execute(self.statement, list(rows))
            return
        compiled = self._compiled(conn)
        args = [compiled.args(row) for row in rows]
        driver = (await conn.get_raw_connection()).driver_connection
        assert driver is not None  # a checked-out connection has its driver's
        try:
            await driver.executemany(compiled.sql, args)
        except Exception as exc:
            if name == "postgresql" and _connection_lost(exc):
                await conn.invalidate(exc)
            raise

    async def _on_asyncpg(
        self, conn: AsyncConnection, method: str, params: Mapping[str, object]
    ) -> Any:
        compiled = self._compiled(conn)
        args = compiled.args(params)
        raw = await conn.get_raw_connection()
        try:
            run = getattr(raw.driver_connection, method)
            return await run(compiled.sql, *args)
        except Exception as exc:
            # The driver's own errors: a broken connection leaves the pool (SQLAlchemy would
            # invalidate it), and the error reaches the middleware as it would through
            # SQLAlchemy (database_unavailable reads the SQLSTATE and the error class).
            if _connection_lost(exc):
                await conn.invalidate(exc)
            raise

    async def _on_aiosqlite(
        self, conn: AsyncConnection, params: Mapping[str, object]
    ) -> list[tuple[object, ...]]:
        compiled = self._compiled(conn)
        driver = (await conn.get_raw_connection()).driver_connection
        assert driver is not None  # a checked-out connection has its driver's
        rows = await driver.execute_fetchall(compiled.sql, compiled.args(params))
        if not compiled.results:
            return [tuple(row) for row in rows]
        out = []
        for row in rows:
            values = list(row)
            for i, processor in compiled.results:
                values[i] = processor(values[i])
            out.append(tuple(values))
        return out


@contextlib.asynccontextmanager
async def transaction(conn: AsyncConnection) -> AsyncIterator[AsyncConnection]:
    """One transaction on `conn` (SQLAlchemy's own, `conn.begin()`): committed when the block
    ends, rolled back if it raises. DriverStatements and SQLAlchemy statements run in the
    block join it alike: on PostgreSQL the transaction is begun on the driver at once
    (`begun`), where SQLAlchemy's asyncpg adapter would begin it only at the first statement
    SQLAlchemy itself sends (statements sent straight to the driver before that would each
    commit on their own). On SQLite the driver's (pysqlite's) own BEGIN comes before the first
    write, and SQLAlchemy's COMMIT or ROLLBACK ends it."""
    try:
        async with conn.begin():
            await begun(conn)
            yield conn
    except Exception as exc:
        if conn.dialect.name == "postgresql" and _connection_lost(exc) and not conn.invalidated:
            await conn.invalidate(exc)
        raise


async def begun(conn: AsyncConnection) -> None:
    """Make sure the transaction SQLAlchemy began on `conn` is begun on the driver too, so
    that statements sent straight to the driver run in it (PostgreSQL; a no-op elsewhere, and
    on an autocommit connection)."""
    if conn.dialect.name == "postgresql" and conn.in_transaction():
        await begin_on_driver(conn)


def _connection_lost(exc: BaseException) -> bool:
    return (
        isinstance(exc, OSError | TimeoutError)
        or closed_connection_error(exc)
        or type(exc).__name__ == "InternalClientError"
        or str(getattr(exc, "sqlstate", "") or "").startswith("08")
    )
