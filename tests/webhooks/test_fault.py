"""A `salesplan worker` killed with SIGKILL in the middle of deliveries loses nothing: when a
worker runs again, every event arrives, a re-sent one with the same webhook-id."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from typing import Any

import pytest
from sqlalchemy import func, select

from salesplan.models.webhooks import WebhookDelivery
from tests.webhooks.conftest import make_endpoint


def _worker_env(settings: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    env.update(
        SALESPLAN_DATABASE_URL=settings.database_url,
        SALESPLAN_SECRET_KEY=settings.secret_key,
        SALESPLAN_PUBLIC_URL="http://testserver",
        SALESPLAN_OUTBOUND_ALLOW="127.0.0.0/8",
        SALESPLAN_WORKER_LEASE_SECONDS="2",
        SALESPLAN_WORKER_POLL_SECONDS="0.2",
        SALESPLAN_LOG_LEVEL="warning",
    )
    return env


async def _start_worker(settings: Any) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from salesplan.cli import main; main()",
        "worker",
        env=_worker_env(settings),
    )


async def _delivered(db: Any) -> int:
    stmt = (
        select(func.count())
        .select_from(WebhookDelivery)
        .where(WebhookDelivery.status == "delivered")
    )
    return int(await db.scalar(stmt))


async def test_sigkill_mid_delivery_loses_nothing(app, client, actor, db, receiver) -> None:
    receiver.hold = threading.Event()  # the first requests hang until the kill
    await make_endpoint(client, actor, receiver.url)
    total = 12
    ids = set()
    for n in range(total):
        resp = await client.post("/api/v1/accounts", json={"name": f"A{n}"}, headers=actor.headers)
        ids.add(resp.json()["id"])
    doomed = await _start_worker(app.state.settings)
    try:
        arrived = await asyncio.to_thread(receiver.arrived.wait, 60)
        assert arrived, "the doomed worker never delivered"
        await asyncio.sleep(0.3)  # a few more in flight
    finally:
        doomed.send_signal(signal.SIGKILL)
        await asyncio.wait_for(doomed.wait(), 10)
    assert await _delivered(db) == 0  # every delivery was in flight or still queued
    receiver.hold.set()
    survivor = await _start_worker(app.state.settings)
    try:
        for _ in range(600):
            if await _delivered(db) == total:
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("the restarted worker did not deliver everything")
    finally:
        survivor.send_signal(signal.SIGTERM)
        await asyncio.wait_for(survivor.wait(), 20)
    by_resource: dict[str, set[str]] = {}
    for got in receiver.received:
        resource = json.loads(got.body)["data"]["id"]
        by_resource.setdefault(resource, set()).add(got.headers["webhook-id"])
    assert set(by_resource) == ids  # nothing lost
    assert all(len(webhook_ids) == 1 for webhook_ids in by_resource.values())
    assert len(receiver.received) > total  # the in-flight ones went twice, same webhook-id
