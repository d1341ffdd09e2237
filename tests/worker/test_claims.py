"""worker/claims.py, the one claim of every job kind: concurrent claims on PostgreSQL never
take the same row (FOR UPDATE SKIP LOCKED), and a claimed row is due again when its lease
ends (a killed worker's rows are taken over)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from salesplan.config import Settings
from salesplan.worker.claims import claim_statement
from tests.conftest import need_service

LEASE = timedelta(minutes=5)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
async def probe(settings: Settings) -> AsyncIterator[tuple[AsyncEngine, Table]]:
    """A table of 40 due rows of its own (dropped afterwards)."""
    engine = create_async_engine(settings.database_url)
    table = Table(
        f"claims_probe_{uuid.uuid4().hex[:8]}",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("due_at", DateTime(timezone=True), nullable=False),
        Column("lease_owner", String(64)),
    )
    async with engine.begin() as conn:
        await conn.run_sync(table.create)
        await conn.execute(
            insert(table), [{"id": i, "due_at": T0 + timedelta(seconds=i)} for i in range(40)]
        )
    try:
        yield engine, table
    finally:
        async with engine.begin() as conn:
            await conn.run_sync(table.drop)
        await engine.dispose()


def claim_of(table: Table, worker: str, now: datetime, limit: int) -> Any:
    return claim_statement(
        table,
        due=(table.c.due_at <= now,),
        order_by=(table.c.due_at,),
        limit=limit,
        values={"lease_owner": worker, "due_at": now + LEASE},
        returning=(table.c.id,),
    )


async def test_concurrent_claims_never_take_the_same_row(
    probe: tuple[AsyncEngine, Table], is_postgres: bool
) -> None:
    if not is_postgres:
        need_service("PostgreSQL", "row locks (FOR UPDATE SKIP LOCKED) are PostgreSQL's")
    engine, table = probe
    now = T0 + timedelta(hours=1)
    # Two open transactions: the second passes over the rows the first holds, not waits.
    async with engine.connect() as first, engine.connect() as second:
        await first.begin()
        await second.begin()
        a = set((await first.execute(claim_of(table, "a", now, 5))).scalars())
        b = set(
            (await asyncio.wait_for(second.execute(claim_of(table, "b", now, 5)), 10)).scalars()
        )
        assert len(a) == 5 and len(b) == 5
        assert not a & b
        await first.commit()
        await second.commit()

    # Many workers at once, each claiming until nothing is due: every row exactly once (a
    # claim of one row, `key = (subquery)`, and of several, `key IN (subquery)`).
    async def worker(name: str) -> list[int]:
        taken: list[int] = []
        limit = 1 if name in ("w1", "w3", "w5") else 3
        while True:
            async with engine.begin() as conn:
                ids = list((await conn.execute(claim_of(table, name, now, limit))).scalars())
            if not ids:
                return taken
            taken += ids

    results = await asyncio.gather(*(worker(f"w{i}") for i in range(6)))
    everything = [i for ids in results for i in ids]
    assert len(everything) == len(set(everything)) == 30
    async with engine.connect() as conn:
        owners = dict((await conn.execute(select(table.c.id, table.c.lease_owner))).all())
    for name, ids in zip([f"w{i}" for i in range(6)], results, strict=True):
        assert all(owners[i] == name for i in ids)


async def test_a_claimed_row_is_due_again_when_its_lease_ends(
    probe: tuple[AsyncEngine, Table],
) -> None:
    engine, table = probe
    now = T0 + timedelta(hours=1)
    async with engine.begin() as conn:
        taken = list((await conn.execute(claim_of(table, "dead", now, 40))).scalars())
    assert len(taken) == 40
    # While the lease runs, nobody else takes the rows.
    async with engine.begin() as conn:
        assert list((await conn.execute(claim_of(table, "other", now, 40))).scalars()) == []
        later = now + LEASE - timedelta(seconds=1)
        assert list((await conn.execute(claim_of(table, "other", later, 40))).scalars()) == []
    # The worker died: when its lease ends another takes every row over.
    after = now + LEASE
    async with engine.begin() as conn:
        again = list((await conn.execute(claim_of(table, "survivor", after, 40))).scalars())
        owners = set((await conn.execute(select(table.c.lease_owner))).scalars())
    assert sorted(again) == sorted(taken)
    assert owners == {"survivor"}
