"""The unit of work: the one way to the database, for a request (`db.UoW`) or a job
(`async with UnitOfWork(...)`).

It opens, lazily, what the repositories need — an ORM session, a pooled connection for hot
reads (autocommit on PostgreSQL), a pooled connection for driver writes — and it alone ends
the transaction: `commit` handles the domain events the writes emitted (`kit.events`), in the
same transaction, then commits, then runs the after-commit handlers; any error rolls back
and drops the events. Services never commit; routers never open a connection.

The event handlers travel with the session factory (`session_factory(..., handlers=...)`
puts them in every session's `info`), so a job that opens a session of its own commits
through `commit(session)` with the same handlers as a request.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from salesplan.kit import events
from salesplan.kit.events import DomainEvent, EventHandlers

_HANDLERS = "salesplan_handlers"


def session_factory(
    engine: AsyncEngine, handlers: EventHandlers
) -> async_sessionmaker[AsyncSession]:
    """Sessions that know the event handlers (`commit` finds them in `session.info`)."""
    return async_sessionmaker(
        engine, expire_on_commit=False, autoflush=False, info={_HANDLERS: handlers}
    )


def handlers_of(session: AsyncSession) -> EventHandlers | None:
    found: EventHandlers | None = session.sync_session.info.get(_HANDLERS)
    return found


async def handle_pending(session: AsyncSession) -> list[DomainEvent]:
    """Run the in-transaction handlers of the events queued on `session` (and of those they
    emit), after flushing what the session holds. Returns every event handled."""
    handled: list[DomainEvent] = []
    if not events.pending(session):
        return handled
    handlers = handlers_of(session)
    if handlers is None:
        raise RuntimeError("domain events emitted on a session that has no event handlers")
    for _ in range(events.MAX_ROUNDS):
        await session.flush()
        batch = events.take(session)
        if not batch:
            return handled
        handled += batch
        await session.run_sync(_run_in_transaction, handlers, batch)
    raise RuntimeError(f"domain events still emitted after {events.MAX_ROUNDS} rounds")


def _run_in_transaction(
    session: Session, handlers: EventHandlers, batch: list[DomainEvent]
) -> None:
    handlers.run_in_transaction(session.connection(), batch)


async def commit(session: AsyncSession) -> None:
    """Commit `session` with its domain events: the in-transaction handlers, the COMMIT,
    then the after-commit handlers. The only COMMIT of a session in the app."""
    handled = await handle_pending(session)
    if session.in_transaction():
        await session.commit()
    if handled:
        handlers = handlers_of(session)
        assert handlers is not None  # handle_pending raised otherwise
        await handlers.run_after_commit(handled)


async def rollback(session: AsyncSession) -> None:
    events.drop(session)
    await session.rollback()


@dataclass(frozen=True)
class Database:
    """What a unit of work opens from: the app's (or the worker's) factories."""

    sessionmaker: async_sessionmaker[AsyncSession]
    # Sessions and connections of reads: autocommit on PostgreSQL (no BEGIN/COMMIT round
    # trips); the same as the writers' on SQLite.
    read_sessionmaker: async_sessionmaker[AsyncSession]
    engine: AsyncEngine
    read_engine: AsyncEngine


class UnitOfWork:
    """One request's or one job's access to the database. `read_only` (a route marked
    `db.read_only`) takes its session from the autocommit factory."""

    __slots__ = ("_db", "_read_only", "_reader", "_session", "_writer")

    def __init__(self, database: Database, *, read_only: bool = False) -> None:
        self._db = database
        self._read_only = read_only
        self._session: AsyncSession | None = None
        self._reader: AsyncConnection | None = None
        self._writer: AsyncConnection | None = None

    async def session(self) -> AsyncSession:
        """The ORM session (opened on first use)."""
        if self._session is None:
            maker = self._db.read_sessionmaker if self._read_only else self._db.sessionmaker
            self._session = maker()
        return self._session

    async def reader(self) -> AsyncConnection:
        """A pooled connection for reads in Core, outside any transaction on PostgreSQL."""
        if self._reader is None:
            self._reader = await self._db.read_engine.connect()
        return self._reader

    async def writer(self) -> AsyncConnection:
        """A pooled connection for writes with the driver's statements (`kit.driver`): a
        statement alone commits on its own; `atomic()` makes one transaction of several."""
        if self._writer is None:
            self._writer = await self._db.engine.connect()
        return self._writer

    @contextlib.asynccontextmanager
    async def atomic(self) -> AsyncIterator[AsyncConnection]:
        """One transaction of the driver statements run in the block on `writer()`:
        committed when the block ends, rolled back if it raises. Such writes account for
        what other domains follow inside their own statements (no events on this path)."""
        from salesplan.kit.driver import transaction

        conn = await self.writer()
        async with transaction(conn):
            yield conn
        if events.pending(conn):
            events.drop(conn)
            raise RuntimeError("domain events emitted on a driver transaction")

    async def commit(self) -> None:
        if self._session is not None:
            await commit(self._session)
        if self._writer is not None and self._writer.in_transaction():
            await self._writer.commit()

    async def rollback(self) -> None:
        if self._session is not None:
            await rollback(self._session)
        if self._writer is not None and self._writer.in_transaction():
            await self._writer.rollback()

    async def close(self) -> None:
        """Return everything to the pool (rolling back what was not committed)."""
        session, reader, writer = self._session, self._reader, self._writer
        self._session = self._reader = self._writer = None
        try:
            if session is not None:
                await session.close()
        finally:
            try:
                if reader is not None:
                    await reader.close()
            finally:
                if writer is not None:
                    await writer.close()

    async def __aenter__(self) -> UnitOfWork:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if exc is None:
                await self.commit()
            else:
                await self.rollback()
        finally:
            await self.close()
