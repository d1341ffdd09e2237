"""Pruning job kinds: work that keeps a table to its size, run now and then, never urgent.

`Periodic(name, every_seconds, prune)` is the job kind: it runs `prune(ctx)` on its first
call and then at most once every `every_seconds` (the clock is the instance's: `job_kinds()`
makes one for each loop, so there is no module global), and answers 0 so that pruning never
keeps the loop awake. A failure is logged and tried again at the next turn of the clock.

- idempotency records past their 24 hours (contract §6), every minute: a key is free again;
- webhook events older than 30 days (contract §13), every hour;
- a buyer room's sign-in codes a day old and expired room sessions (contract §16), every hour.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from salesplan.idempotency import prune_expired
from salesplan.rooms.access import prune
from salesplan.rooms.notices import REMINDERS_EVERY_SECONDS, send_reminders
from salesplan.worker.context import WorkerContext

log = logging.getLogger("salesplan.worker")

IDEMPOTENCY_EVERY_SECONDS = 60.0


class Periodic:
    """A job kind running `prune(ctx)` at most once every `every_seconds` per loop."""

    def __init__(
        self,
        name: str,
        every_seconds: float,
        prune: Callable[[WorkerContext], Awaitable[None]],
    ) -> None:
        self.__name__ = name
        self.every_seconds = every_seconds
        self.prune = prune
        self.last: float | None = None

    async def __call__(self, ctx: WorkerContext) -> int:
        if self.last is not None and time.monotonic() - self.last < self.every_seconds:
            return 0
        self.last = time.monotonic()
        try:
            await self.prune(ctx)
        except Exception:
            log.exception("%s failed; tried again in %.0f s", self.__name__, self.every_seconds)
        return 0


async def prune_idempotency_records(ctx: WorkerContext) -> None:
    async with ctx.unit_of_work() as uow:
        await prune_expired(await uow.session())


def idempotency_pruning() -> Periodic:
    return Periodic("run_idempotency_pruning", IDEMPOTENCY_EVERY_SECONDS, prune_idempotency_records)


ROOMS_EVERY_SECONDS = 3600.0


async def prune_room_sign_ins(ctx: WorkerContext) -> None:
    async with ctx.unit_of_work() as uow:
        await prune(await uow.session())


def room_pruning() -> Periodic:
    return Periodic("run_room_pruning", ROOMS_EVERY_SECONDS, prune_room_sign_ins)


async def remind_buyers(ctx: WorkerContext) -> None:
    await send_reminders(ctx)


def room_reminders() -> Periodic:
    """A buyer task due tomorrow or overdue e-mails its contact, at most once a day per task
    (contract §16): looked for every 10 minutes."""
    return Periodic("run_room_reminders", REMINDERS_EVERY_SECONDS, remind_buyers)
