"""The admission gate in front of the database pool (db.AdmissionGate): first come, first
served, a place handed straight to the oldest waiter, a bounded wait answered 503."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest

from salesplan.config import Settings
from salesplan.db import AdmissionGate, create_admission_gate
from tests.fixtures.envelope import assert_envelope


async def test_waiters_are_admitted_in_arrival_order_and_newcomers_queue_behind() -> None:
    gate = AdmissionGate(1, timeout=5)
    assert await gate.enter()
    admitted: list[str] = []

    async def request(name: str) -> None:
        assert await gate.enter()
        admitted.append(name)
        await asyncio.sleep(0)
        gate.leave()

    first = [asyncio.create_task(request(f"w{i}")) for i in range(3)]
    await asyncio.sleep(0)  # the three wait, in order
    gate.leave()  # the place goes to w0, not to whoever asks next
    late = asyncio.create_task(request("late"))  # arrives while w0 holds the handed-over place
    await asyncio.gather(*first, late)
    assert admitted == ["w0", "w1", "w2", "late"]
    assert gate.active == 0


async def test_places_beyond_the_size_wait() -> None:
    gate = AdmissionGate(2, timeout=5)
    assert await gate.enter() and await gate.enter()
    third = asyncio.create_task(gate.enter())
    await asyncio.sleep(0.01)
    assert not third.done()
    gate.leave()
    assert await third
    assert gate.active == 2
    gate.leave()
    gate.leave()
    assert gate.active == 0


async def test_a_wait_beyond_the_timeout_is_refused_and_leaves_no_trace() -> None:
    gate = AdmissionGate(1, timeout=0.05)
    assert await gate.enter()
    assert not await gate.enter()
    gate.leave()
    assert gate.active == 0
    assert await gate.enter()  # free again, at once
    gate.leave()


async def test_a_cancelled_waiter_gives_up_its_place_in_line() -> None:
    gate = AdmissionGate(1, timeout=5)
    assert await gate.enter()
    gone = asyncio.create_task(gate.enter())
    after = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    gate.leave()
    assert await after
    gate.leave()
    assert gate.active == 0


async def test_a_place_handed_to_a_cancelled_request_passes_on() -> None:
    gate = AdmissionGate(1, timeout=5)
    assert await gate.enter()
    handed = asyncio.create_task(gate.enter())
    after = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    gate.leave()  # handed to `handed`...
    handed.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await handed
    assert await after
    gate.leave()
    assert gate.active == 0


def test_a_pooled_server_database_gets_half_the_pool_and_sqlite_none() -> None:
    pg = Settings(
        database_url="postgresql+asyncpg://u@127.0.0.1/db", db_pool_size=10, db_max_overflow=10
    )
    gate = create_admission_gate(pg)
    assert gate is not None and gate.size == 10 and gate.timeout == pg.db_pool_timeout
    assert create_admission_gate(Settings(database_url="sqlite+aiosqlite:///x.db")) is None


@contextlib.contextmanager
def gate_of(app, gate: AdmissionGate) -> Iterator[AdmissionGate]:
    """The app's gate replaced for one test (app.state is a Starlette State, whose attributes
    pytest's monkeypatch deletes on undo instead of restoring)."""
    before = app.state.admission
    app.state.admission = gate
    try:
        yield gate
    finally:
        app.state.admission = before


async def test_an_api_read_that_cannot_get_in_is_a_503_and_the_database_is_not_down(
    app, client, actor
) -> None:
    with gate_of(app, AdmissionGate(1, timeout=0.05)) as gate:
        assert await gate.enter()  # every place taken
        resp = await client.get("/api/v1/accounts", headers=actor.headers)
        assert_envelope(resp, 503, "service_unavailable")
        assert resp.headers["retry-after"] == "5"
        assert (await client.get("/healthz")).status_code == 200  # not behind the gate
        gate.leave()
        resp = await client.get("/api/v1/accounts", headers=actor.headers)
        assert resp.status_code == 200, resp.text  # busy, not down: no pause after the 503
        assert gate.active == 0


async def test_writes_queue_at_the_gate_too(app, client, actor) -> None:
    """A write that cannot get in is refused before it starts: nothing is written."""
    with gate_of(app, AdmissionGate(1, timeout=0.05)) as gate:
        assert await gate.enter()  # every place taken
        body = {"name": "Queued write"}
        resp = await client.post("/api/v1/accounts", json=body, headers=actor.headers)
        assert_envelope(resp, 503, "service_unavailable")
        assert (await client.head("/api/v1/accounts", headers=actor.headers)).status_code == 503
        gate.leave()
        listed = await client.get("/api/v1/accounts", headers=actor.headers)
        assert [a["name"] for a in listed.json()["data"]].count("Queued write") == 0
        resp = await client.post("/api/v1/accounts", json=body, headers=actor.headers)
        assert resp.status_code == 201, resp.text
        assert gate.active == 0
