"""Outbound Engage mail enters the feed when the delivery worker sends it (contract §7 engage: a
queue item is `sent` when the relay accepts it), not when it is queued: a scheduled step is not
in the inbox, a cancelled one never is, a sent one is."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from salesplan.engage.delivery.worker import run_delivery
from salesplan.kit.clock import isoformat, utcnow
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_campaign_start import enroll, make_campaign, start, work
from tests.engage_delivery.test_send import send
from tests.engage_delivery.test_worker import make_due
from tests.feed.test_inbox import acme, inbox
from tests.fixtures.crm import make_contact


async def test_a_scheduled_message_enters_the_inbox_when_the_worker_sends_it(
    app, client, db, actor, smtp
) -> None:
    account, _ = await acme(db, actor)
    later = isoformat(utcnow() + timedelta(hours=2))
    body = {
        "channel": "EMAIL",
        "to": "jane@acme.test",
        "subject": "Pricing",
        "body": "Here are the numbers.",
        "scheduledAt": later,
    }
    response = await send(client, actor, body)
    assert response.status_code == 202, response.text
    assert response.json()["message"]["status"] == "scheduled"
    assert (await inbox(client, actor, account.id))["data"] == []

    await make_due(db)
    assert await run_delivery(worker_context(app, smtp)) == 1
    assert len(smtp.received) == 1

    items = (await inbox(client, actor, account.id))["data"]
    assert [(i["type"], i["subject"], i["messageCount"]) for i in items] == [
        ("email", "Pricing", 1)
    ]
    assert items[0]["snippet"] == "Here are the numbers."
    assert {"email": "jane@acme.test", "name": None} in items[0]["participants"]
    thread = await client.get(
        f"/api/v1/accounts/{account.id}/inbox/threads/{items[0]['id']}/messages",
        headers=actor.in_org(),
    )
    assert thread.status_code == 200, thread.text
    assert [m["direction"] for m in thread.json()["data"]] == ["outbound"]


async def test_campaign_steps_are_not_in_the_inbox_until_sent_and_cancelled_ones_never(
    app, client, db, actor, smtp
) -> None:
    account, jane = await acme(db, actor)
    joe = await make_contact(db, account, "Joe", "Doe", email="joe@acme.test")
    sent_campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, sent_campaign, [jane.id])
    held_campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, held_campaign, [joe.id])
    for campaign, key in ((sent_campaign, "s-1"), (held_campaign, "s-2")):
        started = await start(client, actor, campaign["id"], key=key)
        assert started.status_code == 200, started.text
        assert started.json()["started"] == 1
    # Queued, not sent: neither step is in the inbox.
    assert (await inbox(client, actor, account.id))["data"] == []

    done = await client.patch(
        f"/api/v1/engage/campaigns/{held_campaign['id']}",
        json={"status": "completed"},
        headers=actor.in_org(),
    )
    assert done.status_code == 200, done.text
    await work(app, smtp)

    assert [m["To"].lower() for m in smtp.received] == ["jane@acme.test"]
    items: list[dict[str, Any]] = (await inbox(client, actor, account.id))["data"]
    assert len(items) == 1
    assert items[0]["subject"] == "Step 0: hello Jane"
    addresses = {p["email"] for p in items[0]["participants"]}
    assert "joe@acme.test" not in addresses
