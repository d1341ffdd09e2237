"""The idempotency pruning job kind: forget the records of `Idempotency-Key`s past their 24
hours (contract §6), so that the table holds one day of keys and a key is free again."""

from __future__ import annotations

import time

from salesplan.idempotency import prune_expired
from salesplan.worker.context import WorkerContext

EVERY_SECONDS = 60.0


class IdempotencyPruning:
    """Job kind: prune at most once every `EVERY_SECONDS` per loop (the clock is the
    instance's: `job_kinds()` makes one for each loop, and the first call prunes). Answers 0:
    pruning never keeps the loop awake."""

    __name__ = "run_idempotency_pruning"

    def __init__(self) -> None:
        self.last: float | None = None

    async def __call__(self, ctx: WorkerContext) -> int:
        if self.last is not None and time.monotonic() - self.last < EVERY_SECONDS:
            return 0
        self.last = time.monotonic()
        async with ctx.unit_of_work() as uow:
            await prune_expired(await uow.session())
        return 0
