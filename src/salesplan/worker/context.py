"""What a job kind receives, and how a request wakes the worker.

A job kind is `async def run(ctx: WorkerContext) -> int`: it claims a bounded amount of due work
(safely when several workers run: `FOR UPDATE SKIP LOCKED` on PostgreSQL, a lease that expires so
that a killed worker's work is taken over), commits it in its own transactions, and returns how
many units it processed (0 when nothing was due). The loop calls every kind in turn and sleeps
until woken (`wake_worker`) or a short poll interval passes when all of them answered 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from salesplan.config import Settings
from salesplan.kit.driver import DriverStatement
from salesplan.kit.events import DomainEvent, emit
from salesplan.kit.uow import Database, UnitOfWork

WAKE_CHANNEL = "salesplan_worker"


@dataclass
class WorkerContext:
    settings: Settings
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    # Unique per running loop; written into lease columns so that a worker knows its own claims.
    worker_id: str
    stopping: asyncio.Event = field(default_factory=asyncio.Event)

    def unit_of_work(self) -> UnitOfWork:
        """A job's unit of work: `async with ctx.unit_of_work() as uow:` commits (with the
        domain events) when the block ends, rolls back if it raises."""
        database = Database(self.sessionmaker, self.sessionmaker, self.engine, self.engine)
        return UnitOfWork(database)


JobKind = Callable[[WorkerContext], Awaitable[int]]

# Set in the process that runs an in-process worker (the embedded default); a request that
# queues work sets it so that the loop runs at once instead of at its next poll.
in_process_wakeup: asyncio.Event | None = None


@dataclass(frozen=True)
class JobDue(DomainEvent):
    """Work was queued for the worker: wake it when the transaction commits."""


async def wake_worker(db: AsyncSession | AsyncConnection) -> None:
    """Wake the worker(s) when the transaction commits (a `JobDue` event)."""
    emit(db, JobDue())


_NOTIFY = DriverStatement(select(func.pg_notify(bindparam("channel"), "")))


async def notify_workers(conn: AsyncConnection, _events: Sequence[JobDue]) -> None:
    """In the transaction: PostgreSQL's `pg_notify` is transactional (delivered on COMMIT,
    dropped on ROLLBACK), and every `salesplan worker` LISTENs on `WAKE_CHANNEL`. Once per
    transaction, however many jobs it queued."""
    if conn.dialect.name == "postgresql":
        await _NOTIFY.fetchval(conn, {"channel": WAKE_CHANNEL})


async def wake_in_process(_events: Sequence[JobDue]) -> None:
    """After the commit: the in-process worker's event (the embedded default)."""
    if in_process_wakeup is not None:
        in_process_wakeup.set()
