"""Slow CalDAV servers starve no one (contract §12, issue 27 item 6): provider calls run on a
bounded pool of their own, a few per organization, each request ending after 15 s with the
uniform text; meanwhile another organization connects at once and the default executor stays
free."""

from __future__ import annotations

import asyncio
import time

from salesplan.kit import outbound
from tests.fixtures.factories import make_actor
from tests.outbound.test_caldav import _create

# One more than an organization's outbound slots, so that one call queues behind them; and no
# more than the organization's half of the admission gate on PostgreSQL (5 of 10 places with the
# default pool: issue 38), so that every request is admitted and the queued one waits at the
# outbound pool, not at the gate (the gate's share has its own test,
# tests/foundation/test_admission_share.py).
HANGERS = outbound.PER_KEY_CALLS + 1


async def test_connects_to_a_server_that_never_answers_stall_no_one_else(
    client, db, radicale, blackhole, outbound_allow
) -> None:
    slow_org = await make_actor(db)
    other_org = await make_actor(db)
    started = time.monotonic()
    hangers = [
        asyncio.create_task(_create(client, slow_org, blackhole.url(path=f"/cal/{i}/")))
        for i in range(HANGERS)
    ]
    while blackhole.connections < outbound.PER_KEY_CALLS:  # the slow ones are hanging now
        await asyncio.sleep(0.05)
        assert time.monotonic() - started < 10

    t = time.monotonic()
    r = await _create(client, other_org, radicale.new_calendar())
    assert r.status_code == 201, r.text
    assert time.monotonic() - t < 5  # not queued behind the slow provider
    t = time.monotonic()
    assert await asyncio.to_thread(lambda: 42) == 42  # the default executor is free
    assert time.monotonic() - t < 1
    assert not any(h.done() for h in hangers)
    # One organization never holds more than its share of the pool: while its calls hang,
    # the others wait for a slot without connecting. (Counted now: once the first ones end at
    # their deadline, a queued call that gets its slot within its own may connect.)
    assert blackhole.connections == outbound.PER_KEY_CALLS

    answers = await asyncio.gather(*hangers)
    elapsed = time.monotonic() - started
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["details"]["reason"] == "could not connect to the server"
    # 15 s per request: the first few time out at 15 s, the ones queued behind them for their
    # organization's slots time out at the same deadline (the wait counts)
    assert outbound.TIMEOUT_SECONDS - 1 < elapsed < outbound.TIMEOUT_SECONDS + 8, elapsed
