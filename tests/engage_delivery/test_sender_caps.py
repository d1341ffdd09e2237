"""Sender caps (contract §14): SALESPLAN_SEND_LIMIT_PER_HOUR / _PER_DAY cap the e-mails one From
address hands to the relay in a rolling hour / 24 hours. Over the cap a message is not refused:
it stays `scheduled` with lastError "sender cap reached", is not an attempt, and goes at the
first free slot — also when several workers share the sender."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update

from salesplan.engage.delivery.worker import claim, run_delivery
from salesplan.models.engage_delivery import EngageMessage
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_send import email, send
from tests.engage_delivery.test_worker import item

CAP_REACHED = "sender cap reached"


def capped(app: Any, smtp: Any, **limits: int) -> Any:
    ctx = worker_context(app, smtp)
    ctx.settings = ctx.settings.model_copy(
        update={f"send_limit_per_{window}": n for window, n in limits.items()}
    )
    return ctx


async def queue(client: Any, actor: Any, count: int, tag: str = "cap") -> list[str]:
    ids = []
    for n in range(count):
        response = await send(client, actor, email(to=f"p{n}@example.com"), key=f"{tag}-{n}")
        assert response.status_code == 202
        ids.append(response.json()["message"]["id"])
    return ids


async def drain(ctx: Any) -> None:
    while await run_delivery(ctx):
        pass


async def age_sent(db: Any, by: timedelta) -> None:
    """Time passes for what was sent: the sends move `by` into the past, and every waiting
    message whose slot has come is due."""
    rows = (
        await db.execute(
            select(EngageMessage.id, EngageMessage.sent_at, EngageMessage.next_attempt_at)
        )
    ).all()
    for message_id, sent_at, next_attempt_at in rows:
        await db.execute(
            update(EngageMessage)
            .where(EngageMessage.id == message_id)
            .values(
                sent_at=sent_at and sent_at - by,
                next_attempt_at=next_attempt_at and next_attempt_at - by,
            )
        )
    await db.commit()


async def test_over_the_hourly_cap_a_message_waits_scheduled_and_goes_at_the_free_slot(
    app, client, actor, smtp, db
) -> None:
    ids = await queue(client, actor, 5)
    ctx = capped(app, smtp, hour=2)
    await drain(ctx)
    assert len(smtp.received) == 2
    items = [await item(client, actor, i) for i in ids]
    sent = [i for i in items if i["status"] == "sent"]
    waiting = [i for i in items if i["status"] != "sent"]
    assert len(sent) == 2
    assert [i["status"] for i in waiting] == ["scheduled"] * 3
    assert {i["lastError"] for i in waiting} == {CAP_REACHED}
    assert {i["attempts"] for i in waiting} == {0}  # not an attempt
    # Its slot: an hour after the oldest send of the window.
    first_sent = min(
        (await db.execute(select(EngageMessage.sent_at).where(EngageMessage.sent_at.is_not(None))))
        .scalars()
        .all()
    )
    slots = set(
        (
            await db.execute(
                select(EngageMessage.next_attempt_at).where(EngageMessage.status == "scheduled")
            )
        ).scalars()
    )
    assert len(slots) == 1
    (slot,) = slots
    assert abs((slot - (first_sent + timedelta(hours=1))).total_seconds()) < 1
    # Not yet: nothing more goes within the hour.
    await age_sent(db, timedelta(minutes=59))
    await drain(ctx)
    assert len(smtp.received) == 2
    # The hour has passed for the first two: two more go, the last waits again.
    await age_sent(db, timedelta(minutes=2))
    await drain(ctx)
    assert len(smtp.received) == 4
    await age_sent(db, timedelta(minutes=61))
    await drain(ctx)
    assert len(smtp.received) == 5  # never lost
    final = [await item(client, actor, i) for i in ids]
    assert {i["status"] for i in final} == {"sent"}
    assert {i["lastError"] for i in final} == {None}
    assert {i["attempts"] for i in final} == {1}
    assert sorted(m["To"] for m in smtp.received) == [f"p{n}@example.com" for n in range(5)]


async def test_the_daily_cap_counts_a_rolling_24_hours(app, client, actor, smtp, db) -> None:
    await queue(client, actor, 3, tag="a")
    ctx = capped(app, smtp, hour=100, day=3)
    await drain(ctx)
    assert len(smtp.received) == 3
    await age_sent(db, timedelta(hours=20))
    await queue(client, actor, 2, tag="b")
    await drain(ctx)
    assert len(smtp.received) == 3  # the three of 20 hours ago still count
    waiting = (
        await db.execute(
            select(EngageMessage.status, EngageMessage.last_error).where(
                EngageMessage.sent_at.is_(None)
            )
        )
    ).all()
    assert waiting == [("scheduled", CAP_REACHED)] * 2
    await age_sent(db, timedelta(hours=4, minutes=1))
    await drain(ctx)
    assert len(smtp.received) == 5


async def test_no_cap_sends_everything(app, client, actor, smtp) -> None:
    await queue(client, actor, 4)
    await drain(worker_context(app, smtp))
    assert len(smtp.received) == 4


async def test_messages_in_flight_at_another_worker_count(app, client, actor, smtp, db) -> None:
    await queue(client, actor, 5)
    other = capped(app, smtp, hour=3)
    # Another worker has claimed (not yet sent) up to the cap.
    async with app.state.sessionmaker() as session:
        claimed, deferred = await claim(session, other.settings, "other-worker")
        await session.commit()
    assert (len(claimed), deferred) == (3, 0)
    ctx = capped(app, smtp, hour=3)
    await drain(ctx)
    assert smtp.received == []
    waiting = (
        await db.execute(
            select(EngageMessage.last_error).where(EngageMessage.status == "scheduled")
        )
    ).scalars()
    assert list(waiting) == [CAP_REACHED] * 2


async def test_workers_draining_together_never_exceed_the_cap(app, client, actor, smtp) -> None:
    await queue(client, actor, 12)
    workers = [capped(app, smtp, hour=4) for _ in range(3)]

    async def loop(ctx: Any) -> None:
        for _ in range(20):
            try:
                if not await run_delivery(ctx):
                    return
            except Exception:  # SQLite: a claim on a stale snapshot fails and is tried again
                await asyncio.sleep(0.05)

    await asyncio.gather(*(loop(ctx) for ctx in workers))
    assert len(smtp.received) == 4
    async with app.state.sessionmaker() as session:
        statuses = (await session.execute(select(EngageMessage.status))).scalars().all()
    assert sorted(statuses).count("sent") == 4
    assert sorted(statuses).count("scheduled") == 8  # the rest waits for its free slot


async def test_a_message_held_by_the_cap_carries_its_next_free_slot_as_scheduled_at(
    app, client, actor, smtp, db
) -> None:
    """Contract §14 (2026-11-27): never `scheduledAt: null` while a cap holds it."""
    ids = await queue(client, actor, 3, tag="slot")
    await drain(capped(app, smtp, hour=1))
    waiting = [i for i in [await item(client, actor, i) for i in ids] if i["status"] != "sent"]
    assert len(waiting) == 2
    slot = (
        (
            await db.execute(
                select(EngageMessage.next_attempt_at).where(EngageMessage.status == "scheduled")
            )
        )
        .scalars()
        .first()
    )
    assert slot is not None
    for held in waiting:
        assert held["lastError"] == CAP_REACHED
        assert held["scheduledAt"] is not None
        assert held["scheduledAt"] == slot.isoformat().replace("+00:00", "Z")
