"""What a job kind receives, and how a request wakes the worker.

A job kind is `async def run(ctx: WorkerContext) -> int`: it claims a bounded amount of due work
(safely when several workers run: `FOR UPDATE SKIP LOCKED` on PostgreSQL, a lease that expires so
that a killed worker's work is taken over), commits it in its own transactions, and returns how
many units it processed (0 when nothing was due). The loop calls every kind in turn and sleeps
until woken (`wake_worker`) or a short poll interval passes when all of them answered 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from salesplan.config import Settings

WAKE_CHANNEL = "salesplan_worker"


@dataclass
class WorkerContext:
    settings: Settings
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    # Unique per running loop; written into lease columns so that a worker knows its own claims.
    worker_id: str
    stopping: asyncio.Event = field(default_factory=asyncio.Event)


JobKind = Callable[[WorkerContext], Awaitable[int]]

# Set in the process that runs an in-process worker (the embedded default); a request that
# queues work sets it so that the loop runs at once instead of at its next poll.
in_process_wakeup: asyncio.Event | None = None


async def wake_worker(session: AsyncSession) -> None:
    """Wake the worker(s) when the request's transaction commits.

    PostgreSQL: `pg_notify` is transactional (delivered on COMMIT, dropped on ROLLBACK), and every
    `salesplan worker` LISTENs on `WAKE_CHANNEL`. In-process (SQLite): set the loop's event; the
    loop re-reads the database, so an early wake-up before the commit is harmless."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": WAKE_CHANNEL})
    if in_process_wakeup is not None:
        in_process_wakeup.set()
