"""The unit of work: the one way to the database, for a request (`db.UoW`) or a job
(`async with ctx.unit_of_work() as uow`).

It opens, lazily, what the repositories need — an ORM session, a pooled connection for hot
reads (autocommit on PostgreSQL), a pooled connection for driver writes — and it alone ends
the transaction: `commit` handles the domain events the writes emitted (`kit.events`), on the
transaction's connection, then commits, then runs the after-commit handlers; any error rolls
back and drops the events. The ORM path (the session) and the driver path (`writer()`,
`atomic()`) queue their events the same way and run the same handlers. Services never commit;
routers never open a connection.

The event handlers travel with the session factory (`session_factory(..., handlers=...)`
puts them in every session's `info`), so a session commits through `commit(session)` with
the same handlers as a request.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from salesplan.kit import events
from salesplan.kit.driver import begun, transaction
from salesplan.kit.events import DomainEvent, EventHandlers, EventQueue


def session_factory(
    engine: AsyncEngine, handlers: EventHandlers
) -> async_sessionmaker[AsyncSession]:
    """Sessions that know the event handlers (`commit` finds them in `session.info`)."""
    return async_sessionmaker(
        engine, expire_on_commit=False, autoflush=False, info=events.handlers_info(handlers)
    )


def handlers_of(session: AsyncSession) -> EventHandlers | None:
    return events.handlers_on(session)


async def _handle(conn: AsyncConnection, queue: EventQueue) -> list[DomainEvent]:
    """Run the in-transaction handlers of the events queued for `conn`'s transaction (and of
    those they emit, round after round). Returns every event handled."""
    handled: list[DomainEvent] = []
    if not queue.pending:
        return handled
    if queue.handlers is None:
        raise RuntimeError("domain events emitted on a session that has no event handlers")
    await begun(conn)
    for _ in range(events.MAX_ROUNDS):
        batch = queue.take()
        if not batch:
            return handled
        handled += batch
        await queue.handlers.run_in_transaction(conn, batch)
    raise RuntimeError(f"domain events still emitted after {events.MAX_ROUNDS} rounds")


async def handle_pending(session: AsyncSession) -> list[DomainEvent]:
    """Run the in-transaction handlers of the events queued on `session` (and of those they
    emit), after flushing what the session holds, on the session's connection. Returns every
    event handled."""
    if not events.pending(session):
        return []
    queue = events.queue_of(session)
    await session.flush()
    conn = await session.connection()
    # While the handlers run, what they emit on the connection joins the session's queue.
    events.own(conn, queue)
    try:
        return await _handle(conn, queue)
    finally:
        events.disown(conn)


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

    @functools.cached_property
    def handlers(self) -> EventHandlers:
        """The event handlers the session factory carries (`session_factory`)."""
        found = self.sessionmaker.kw.get("info", {}).get(events.HANDLERS)
        if not isinstance(found, EventHandlers):
            raise RuntimeError("the session factory has no event handlers")
        return found


class UnitOfWork:
    """One request's or one job's access to the database. `read_only` (a route marked
    `db.read_only`) takes its session from the autocommit factory."""

    __slots__ = ("_db", "_read_only", "_reader", "_session", "_writer", "_writer_queue")

    def __init__(self, database: Database, *, read_only: bool = False) -> None:
        self._db = database
        self._read_only = read_only
        self._session: AsyncSession | None = None
        self._reader: AsyncConnection | None = None
        self._writer: AsyncConnection | None = None
        self._writer_queue: EventQueue | None = None

    def separate(self, *, read_only: bool = False) -> UnitOfWork:
        """A unit of work of its own on the same database, for work that must end before this
        one goes on (the reads before a slow call to another server, which then holds no
        connection) or must outlive its rollback (a refused request's stored answer)."""
        return UnitOfWork(self._db, read_only=read_only)

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
        statement alone commits on its own; `atomic()` makes one transaction of several.
        Events emitted on it are this unit of work's."""
        if self._writer is None:
            conn = await self._db.engine.connect()
            self._writer_queue = EventQueue(self._db.handlers)
            events.own(conn, self._writer_queue)
            self._writer = conn
        return self._writer

    @contextlib.asynccontextmanager
    async def atomic(self) -> AsyncIterator[AsyncConnection]:
        """One transaction of the statements run in the block on `writer()`: the events
        they emitted are handled in it (as a session's are), then it commits, then their
        after-commit handlers run; rolled back, with its events dropped, if it raises."""
        conn = await self.writer()
        queue = self._writer_queue
        assert queue is not None
        try:
            async with transaction(conn):
                yield conn
                handled = await _handle(conn, queue)
        except BaseException:
            queue.take()
            raise
        if handled:
            await self._db.handlers.run_after_commit(handled)

    async def commit(self) -> None:
        if self._session is not None:
            await commit(self._session)
        writer, queue = self._writer, self._writer_queue
        if writer is None or queue is None:
            return
        handled: list[DomainEvent] = []
        if writer.in_transaction():
            handled = await _handle(writer, queue)
            await writer.commit()
        elif queue.pending:
            queue.take()
            raise RuntimeError("domain events emitted on the writer outside a transaction")
        # The events of writes that committed on their own (`events.emit_committed`).
        handled += queue.take_committed()
        if handled:
            await self._db.handlers.run_after_commit(handled)

    async def rollback(self) -> None:
        if self._session is not None:
            await rollback(self._session)
        writer, queue = self._writer, self._writer_queue
        if writer is not None and queue is not None:
            queue.take()
            if writer.in_transaction():
                await writer.rollback()
            # Writes that committed on their own did happen: their after-commit handlers run.
            committed = queue.take_committed()
            if committed:
                await self._db.handlers.run_after_commit(committed)

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
                    events.disown(writer)
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
