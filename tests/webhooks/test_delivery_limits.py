"""A receiver cannot make delivery cost more than one bounded attempt (issue 38, contract §13
"Delivery"): its answer's body is not read, an absurd `Retry-After` is 24 h, and an attempt
that crashes still counts, so that the attempt limit holds whatever goes wrong."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from salesplan.kit.clock import utcnow
from salesplan.models.webhooks import WebhookDelivery
from salesplan.webhooks import delivery, signing
from tests.webhooks.conftest import deliver_due, make_endpoint, worker_ctx


async def _account(client: Any, actor: Any) -> None:
    resp = await client.post("/api/v1/accounts", json={"name": "Acme"}, headers=actor.headers)
    assert resp.status_code == 201, resp.text


async def _rows(db: Any) -> list[WebhookDelivery]:
    db.expire_all()
    return list((await db.execute(select(WebhookDelivery))).scalars())


async def _due_now(db: Any) -> None:
    await db.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.status == "pending")
        .values(next_attempt_at=utcnow())
    )
    await db.commit()


async def test_a_huge_answer_is_not_read(app, client, actor, db, receiver) -> None:
    offered = 256 * 1024 * 1024
    receiver.body_size = offered  # 256 MiB announced and streamed
    await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    started = time.monotonic()
    assert await deliver_due(worker_ctx(app)) == 1
    elapsed = time.monotonic() - started
    [row] = await _rows(db)
    assert row.status == "delivered" and row.last_status_code == 204
    for _ in range(50):  # the receiver notices the dropped connection
        if receiver.sent < offered:
            break
        await asyncio.sleep(0.1)
    # What the kernel's socket buffers took before the connection was dropped, at most.
    assert receiver.sent < 32 * 1024 * 1024, receiver.sent
    assert elapsed < 10


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("99999999999999999999", timedelta(hours=24)),
        ("9" * 5000, timedelta(hours=24)),
        ("86401", timedelta(hours=24)),
        ("600", timedelta(seconds=600)),
        ("Fri, 31 Dec 9999 23:59:59 GMT", timedelta(hours=24)),
        ("Mon, 01 Jan 0001 00:00:00 GMT", timedelta(0)),
        ("²", None),
        ("-5", None),
        ("soon", None),
        ("Fri, 99 Foo 2026 99:99:99 GMT", None),
        ("x" * 10_000, None),
    ],
)
def test_retry_after_is_read_without_raising_and_capped(value: str, expected: Any) -> None:
    now = datetime(2026, 11, 27, tzinfo=UTC)
    assert delivery.parse_retry_after(value, now) == expected


async def test_an_absurd_retry_after_waits_24_hours(app, client, actor, db, receiver) -> None:
    receiver.status = lambda _r: 429
    receiver.headers = {"Retry-After": "99999999999999999999"}
    await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    await deliver_due(worker_ctx(app))
    [row] = await _rows(db)
    assert row.status == "pending" and row.attempts == 1 and row.last_status_code == 429
    wait = row.next_attempt_at - utcnow()
    assert timedelta(hours=23, minutes=59) <= wait <= timedelta(hours=24)


async def test_a_crashing_attempt_counts_and_the_limit_holds(
    app, client, actor, db, receiver, monkeypatch
) -> None:
    def crash(*_: Any) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(signing, "signatures", crash)
    await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    ctx = worker_ctx(app)
    for n in range(1, delivery.MAX_ATTEMPTS + 1):
        await _due_now(db)
        await deliver_due(ctx)
        [row] = await _rows(db)
        assert row.attempts == n and row.last_error == "internal error"
    assert row.status == "failed" and row.next_attempt_at is None
    await _due_now(db)
    assert await deliver_due(ctx) == 0
    assert receiver.received == []


async def test_a_delivery_whose_outcome_is_never_written_stops_at_the_limit(
    app, client, actor, db, receiver, monkeypatch
) -> None:
    """A worker that claims and dies (or cannot write the outcome) still spends attempts: once
    they are spent the delivery fails without another request."""
    await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    await db.execute(update(WebhookDelivery).values(attempts=delivery.MAX_ATTEMPTS))
    await db.commit()
    await deliver_due(worker_ctx(app))
    [row] = await _rows(db)
    assert row.status == "failed" and row.attempts == delivery.MAX_ATTEMPTS + 1
    assert row.last_error == "attempt limit reached"
    assert receiver.received == []
