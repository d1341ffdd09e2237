from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from salesplan.webhooks.delivery import run_webhook_delivery, settle
from salesplan.worker.context import WorkerContext
from tests.engage_delivery.conftest import smtp
from tests.webhooks.receiver import Receiver

__all__ = ["smtp"]  # the SMTP sink fixture, for the Engage events

API = "/api/v1/webhooks/endpoints"


@pytest.fixture
def receiver(outbound_allow: Any) -> Iterator[Receiver]:
    found = Receiver().start()
    yield found
    found.stop()


def worker_ctx(app: Any, worker_id: str | None = None) -> WorkerContext:
    return WorkerContext(
        settings=app.state.settings,
        engine=app.state.engine,
        sessionmaker=app.state.sessionmaker,
        worker_id=worker_id or f"test-{uuid.uuid4().hex[:8]}",
    )


async def deliver_due(ctx: WorkerContext) -> int:
    """Run the delivery kind until nothing is due, waiting for what it started."""
    total = 0
    while True:
        started = await run_webhook_delivery(ctx)
        await settle(ctx)
        total += started
        if not started:
            return total


async def make_endpoint(client: Any, actor: Any, url: str, **fields: Any) -> dict[str, Any]:
    resp = await client.post(API, json={"url": url, **fields}, headers=actor.headers)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())
