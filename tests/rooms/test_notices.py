"""The room's e-mails (contract §16 "Events and notices"), on a clock the test sets: a buyer's
comments and ticks make one digest per plan per 15 minutes to the plan's creator and the
task's seller assignee; a buyer task due tomorrow or overdue reminds its contact at most once a
day, never for a hidden task nor to a suppressed address. All through the Engage outbox."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from salesplan.kit import clock
from salesplan.models.engage_delivery import EngageMessage
from salesplan.rooms.notices import run_room_digests, send_reminders
from tests.engage_delivery.conftest import SmtpSink, smtp, worker_context
from tests.fixtures.factories import make_user
from tests.plans.helpers import PLANS
from tests.rooms.helpers import (
    SELLER_EMAIL,
    Buyer,
    deliver,
    mail_text,
    make_deal,
    make_share,
    suppress,
    token_of,
)

__all__ = ["smtp"]


class Clock:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = clock.utcnow()
        monkeypatch.setattr(clock, "utcnow", lambda: self.now)

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def _to(smtp: SmtpSink, address: str, start: int = 0) -> list:
    return [m for m in smtp.received[start:] if m["To"] == address]


async def _queued(db) -> int:
    return int((await db.execute(select(func.count()).select_from(EngageMessage))).scalar_one())


async def test_one_digest_per_plan_per_15_minutes(app, client, db, actor, smtp, monkeypatch):
    deal = await make_deal(client, db, actor)
    sue = await make_user(db, actor.org, email="sue@seller.example")
    resp = await client.patch(
        f"{PLANS}/{deal.plan_id}/tasks/{deal.ids['seller_task']}",
        json={"assignedToId": str(sue.id)},
        headers=actor.in_org(),
    )
    assert resp.status_code == 200, resp.text
    share = await make_share(client, deal)
    ctx = worker_context(app, smtp)
    now = Clock(monkeypatch)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        start = len(smtp.received)
        assert await run_room_digests(ctx) == 0  # a view tells nobody
        await buyer.post(f"/tasks/{deal.ids['seller_task']}/comments", {"body": "Pilot Monday?"})
        assert await run_room_digests(ctx) == 1
        await deliver(app, smtp)
        # The plan's creator and the task's seller assignee.
        first = _to(smtp, SELLER_EMAIL, start)
        assert len(first) == 1 and len(_to(smtp, "sue@seller.example", start)) == 1
        text = mail_text(first[0])
        assert "Ada Lovelace commented on “Run the pilot”." in text
        assert first[0]["List-Unsubscribe"]
        # Ticks in the next 15 minutes wait for the next digest.
        start = len(smtp.received)
        for minutes, done in ((1, "true"), (10, "false")):
            now.now += timedelta(minutes=minutes)
            await buyer.post(f"/tasks/{deal.ids['buyer_task']}/completion", {"completed": done})
            assert await run_room_digests(ctx) == 0
        now.advance(minutes=3, seconds=59)  # 14:59 after the first digest
        assert await run_room_digests(ctx) == 0
        now.advance(seconds=2)
        assert await run_room_digests(ctx) == 1
        await deliver(app, smtp)
        second = _to(smtp, SELLER_EMAIL, start)
        assert len(second) == 1
        text = mail_text(second[0])
        assert "completed “Send the security questionnaire”" in text
        assert "reopened “Send the security questionnaire”" in text
        assert "Pilot" not in text and "commented" not in text  # told already
        # Sue is told of her task only: the ticks were of a buyer task.
        assert _to(smtp, "sue@seller.example", start) == []
        assert await run_room_digests(ctx) == 0  # nothing waits


async def test_a_buyer_task_due_reminds_its_contact_once_a_day(
    app, client, db, actor, smtp, monkeypatch
):
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    ctx = worker_context(app, smtp)
    now = Clock(monkeypatch)
    # Not reminded: a hidden task of Ada's due tomorrow, a seller's task, a completed task.
    tomorrow = (now.now + timedelta(days=1)).date().isoformat()
    for task, body in (
        ("hidden_task", {"assignedToId": str(deal.ada.id), "targetDate": tomorrow}),
        ("open_task", {"assignedToId": str(deal.ada.id), "targetDate": tomorrow,
                       "completed": True}),
    ):  # fmt: skip
        resp = await client.patch(
            f"{PLANS}/{deal.plan_id}/tasks/{deal.ids[task]}", json=body, headers=actor.in_org()
        )
        assert resp.status_code == 200, resp.text
    assert await send_reminders(ctx) == 1  # the overdue questionnaire
    assert await send_reminders(ctx) == 0  # once a day
    await deliver(app, smtp)
    mails = _to(smtp, deal.ada.email)
    assert len(mails) == 1
    text = mail_text(mails[0])
    assert "“Send the security questionnaire”" in text and "was due on 2020-01-15" in text
    assert "Redline" not in text and mails[0]["List-Unsubscribe"]
    assert f"http://testserver/rooms/{token_of(share['url'])}" not in text  # a link of its own
    assert "http://testserver/rooms/" in text
    now.advance(hours=23)
    assert await send_reminders(ctx) in (0, 1)  # the next UTC day, or not yet
    now.advance(days=1)
    assert await send_reminders(ctx) == 1
    # Ticked: no more.
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        await buyer.post(f"/tasks/{deal.ids['buyer_task']}/completion", {"completed": "true"})
    now.advance(days=1)
    assert await send_reminders(ctx) == 0


async def test_reminders_and_digests_honour_the_suppression_list(
    app, client, db, actor, smtp, monkeypatch
):
    deal = await make_deal(client, db, actor)
    await make_share(client, deal)  # Ada's, whose questionnaire is overdue
    graces = await make_share(client, deal, contactId=str(deal.grace.id))
    await suppress(db, actor, str(deal.ada.email))
    ctx = worker_context(app, smtp)
    Clock(monkeypatch)
    queued = await _queued(db)
    assert await send_reminders(ctx) == 0
    assert await _queued(db) == queued
    # Nor does a seller on the list get digests (the plan's creator here).
    await suppress(db, actor, SELLER_EMAIL)
    async with Buyer(app, token_of(graces["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        await buyer.post(f"/tasks/{deal.ids['buyer_task']}/comments", {"body": "On it."})
    assert await run_room_digests(ctx) == 1
    to_seller = select(func.count()).where(EngageMessage.to_address == SELLER_EMAIL)
    assert (await db.execute(to_seller)).scalar_one() == 0
