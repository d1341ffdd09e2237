"""A connection whose server cannot be reached (the demo's `calendar.invalid`): the worker backs
off exponentially up to one hour, logs the reason once per attempt at WARNING, and the
connection's `lastError` says why."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.calendar.crypto import encrypt_password
from salesplan.calendar.sync import sync_connection
from salesplan.kit.clock import utcnow
from salesplan.models.calendar import CalendarConnection
from salesplan.worker.context import WorkerContext
from tests.fixtures.factories import Actor

API = "/api/v1/calendar"


async def unreachable(db: AsyncSession, actor: Actor, worker: WorkerContext) -> uuid.UUID:
    conn = CalendarConnection(
        organization_id=actor.org.id,
        user_id=actor.user.id,
        url="https://calendar.invalid/dana/",
        username="dana",
        password_encrypted=encrypt_password(worker.settings.signing_key, "pw"),
        sync_requested_at=utcnow(),
    )
    db.add(conn)
    await db.commit()
    return conn.id


async def attempt(db: AsyncSession, worker: WorkerContext, conn_id: uuid.UUID) -> timedelta:
    """One attempt as the worker makes it once it holds the lease; the wait until the next."""
    conn = await db.get(CalendarConnection, conn_id)
    assert conn is not None
    conn.lease_owner, conn.lease_until = worker.worker_id, utcnow() + timedelta(minutes=5)
    await db.commit()
    await sync_connection(worker, conn_id)
    await db.refresh(conn)
    assert conn.lease_owner is None and conn.lease_until is not None
    return conn.lease_until - utcnow()


async def test_an_unreachable_calendar_backs_off_to_an_hour_and_says_why(
    client: httpx.AsyncClient,
    actor: Actor,
    db: AsyncSession,
    worker: WorkerContext,
    caplog: pytest.LogCaptureFixture,
) -> None:
    conn_id = await unreachable(db, actor, worker)
    waits = []
    for _ in range(9):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="salesplan"):
            waits.append(await attempt(db, worker, conn_id))
        mine = [r for r in caplog.records if r.name.startswith("salesplan.calendar")]
        assert [r.levelno for r in mine] == [logging.WARNING], mine
        assert "(calendar.invalid) failed" in mine[0].getMessage()
        assert mine[0].getMessage().endswith(": could not connect to the server")
    minutes = [round(w.total_seconds() / 60) for w in waits]
    assert minutes == [1, 2, 4, 8, 16, 32, 60, 60, 60]

    listed = (await client.get(f"{API}/connections", headers=actor.in_org())).json()["data"]
    (shown,) = [c for c in listed if c["id"] == str(conn_id)]
    assert shown["lastError"] == "could not connect to the server"  # the outbound guard's words
