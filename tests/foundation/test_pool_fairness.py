"""The pool's queue serves waiting requests first come, first served (db.FairQueue): a
connection returned while a request waits goes to that request, never to a newcomer, so that a
saturated pool has no request starving behind others that keep re-acquiring."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.util.concurrency import greenlet_spawn
from sqlalchemy.util.queue import Empty

from salesplan.db import FairQueue, FairQueuePool


async def test_a_returned_item_goes_to_the_first_waiter_not_a_newcomer() -> None:
    queue = FairQueue(maxsize=5)
    first = asyncio.create_task(greenlet_spawn(queue.get, True, 5))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(greenlet_spawn(queue.get, True, 5))
    await asyncio.sleep(0.01)
    queue.put("a", False)
    # A newcomer asking at once finds nothing: "a" is the first waiter's already.
    with pytest.raises(Empty):
        queue.get_nowait()
    with pytest.raises(Empty):
        await greenlet_spawn(queue.get, False)
    queue.put("b", False)
    assert await first == "a"
    assert await second == "b"
    queue.put("c", False)
    assert queue.get_nowait() == "c"


async def test_a_waiter_that_times_out_leaves_the_line() -> None:
    queue = FairQueue(maxsize=5)
    with pytest.raises(Empty):
        await greenlet_spawn(queue.get, True, 0.02)
    queue.put("a", False)
    assert queue.get_nowait() == "a"


async def test_a_cancelled_waiter_passes_its_item_on() -> None:
    queue = FairQueue(maxsize=5)
    first = asyncio.create_task(greenlet_spawn(queue.get, True, 5))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(greenlet_spawn(queue.get, True, 5))
    await asyncio.sleep(0.01)
    first.cancel()
    await asyncio.sleep(0.01)
    queue.put("a", False)
    assert await second == "a"


async def test_connections_are_handed_out_in_arrival_order(tmp_path) -> None:
    engine = create_async_engine(
        f"sqlite+aiosqlite:///{tmp_path / 'fair.db'}",
        poolclass=FairQueuePool,
        pool_size=1,
        max_overflow=0,
        pool_timeout=10,
    )
    order: list[int] = []

    async def use(n: int) -> None:
        async with engine.connect() as conn:
            order.append(n)
            await conn.execute(text("SELECT 1"))
            await asyncio.sleep(0.01)

    try:
        tasks = []
        for n in range(6):
            tasks.append(asyncio.create_task(use(n)))
            await asyncio.sleep(0.005)
        await asyncio.gather(*tasks)
        assert order == list(range(6))
    finally:
        await engine.dispose()
