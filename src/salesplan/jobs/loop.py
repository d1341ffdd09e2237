"""The worker loop: call every job kind in turn; when none had work, sleep until woken
(PostgreSQL `LISTEN` on `WAKE_CHANNEL`, or the in-process event) or the poll interval passes.

Why our own loop and not procrastinate or pgqueuer: both are PostgreSQL-only (the embedded
default is SQLite), both keep jobs in their own tables, and here the queue rows are also the
records the API shows (an enrollment job's status and counts, a message's delivery state), with
per-batch progress committed together with the work. A claim is one UPDATE … WHERE id = (SELECT
… FOR UPDATE SKIP LOCKED) on our own tables plus a lease column, which is all we need from them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import asyncpg
from sqlalchemy.engine import make_url

from salesplan.config import Settings
from salesplan.db import create_engine, create_sessionmaker
from salesplan.events import handlers
from salesplan.jobs.kinds import job_kinds
from salesplan.worker import context as worker_context
from salesplan.worker.context import WAKE_CHANNEL, JobKind, WorkerContext

if TYPE_CHECKING:
    from starlette.applications import Starlette

log = logging.getLogger("salesplan.worker")


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


async def run_once(ctx: WorkerContext, kinds: list[JobKind] | None = None) -> int:
    """Call every job kind once; how many units they processed together."""
    total = 0
    for kind in kinds if kinds is not None else job_kinds():
        if ctx.stopping.is_set():
            break
        try:
            total += await kind(ctx)
        except Exception:  # one kind's failure must not stop the others
            log.exception("job kind %s failed", getattr(kind, "__name__", kind))
    return total


async def drain(ctx: WorkerContext, kinds: list[JobKind] | None = None) -> None:
    """Run until no kind has work (tests, the bench)."""
    while await run_once(ctx, kinds):
        pass


class _Listener:
    """`LISTEN` on a dedicated asyncpg connection; reconnects lazily when it drops."""

    def __init__(self, database_url: str, wake: asyncio.Event) -> None:
        url = make_url(database_url).set(drivername="postgresql")
        self._dsn = url.render_as_string(hide_password=False)
        self._wake = wake
        self._conn: Any = None

    async def ensure(self) -> None:
        if self._conn is not None and not self._conn.is_closed():
            return
        try:
            self._conn = await asyncpg.connect(self._dsn)
            await self._conn.add_listener(WAKE_CHANNEL, self._notified)
        except Exception as exc:  # the poll keeps the worker going meanwhile
            log.warning("worker: LISTEN unavailable (%s); polling", type(exc).__name__)
            self._conn = None

    def _notified(self, *_: object) -> None:
        self._wake.set()

    async def close(self) -> None:
        if self._conn is not None and not self._conn.is_closed():
            with contextlib.suppress(Exception):
                await self._conn.close()


async def run_loop(
    ctx: WorkerContext,
    *,
    wake: asyncio.Event | None = None,
    kinds: list[JobKind] | None = None,
) -> None:
    """Run until `ctx.stopping` is set."""
    wake = wake or asyncio.Event()
    listener = None
    if ctx.engine.dialect.name == "postgresql":
        listener = _Listener(ctx.settings.database_url, wake)
    kinds = kinds if kinds is not None else job_kinds()
    stop_wait = asyncio.create_task(ctx.stopping.wait())
    try:
        while not ctx.stopping.is_set():
            if listener is not None:
                # Listen before looking, so that work queued meanwhile wakes the next sleep.
                await listener.ensure()
            wake.clear()
            if await run_once(ctx, kinds):
                continue
            wake_wait = asyncio.create_task(wake.wait())
            await asyncio.wait(
                {wake_wait, stop_wait},
                timeout=ctx.settings.worker_poll_seconds,
                return_when=asyncio.FIRST_COMPLETED,
            )
            wake_wait.cancel()
    finally:
        stop_wait.cancel()
        if listener is not None:
            await listener.close()


@contextlib.asynccontextmanager
async def in_process_worker(app: Starlette) -> AsyncIterator[None]:
    """A lifespan hook: the loop as a task of the serving process (the embedded default)."""
    ctx = WorkerContext(
        settings=app.state.settings,
        engine=app.state.engine,
        sessionmaker=app.state.sessionmaker,
        worker_id=new_worker_id(),
    )
    wake = asyncio.Event()
    worker_context.in_process_wakeup = wake
    task = asyncio.create_task(run_loop(ctx, wake=wake), name="salesplan-worker")
    try:
        yield
    finally:
        ctx.stopping.set()
        wake.set()
        try:
            await asyncio.wait_for(task, timeout=10)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        if worker_context.in_process_wakeup is wake:
            worker_context.in_process_wakeup = None


async def run_standalone(settings: Settings) -> None:
    """`salesplan worker`: the loop until SIGTERM/SIGINT."""
    engine = create_engine(settings)
    ctx = WorkerContext(
        settings=settings,
        engine=engine,
        sessionmaker=create_sessionmaker(engine, handlers()),
        worker_id=new_worker_id(),
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, ctx.stopping.set)
    log.info("worker %s started", ctx.worker_id)
    try:
        await run_loop(ctx)
    finally:
        await engine.dispose()
