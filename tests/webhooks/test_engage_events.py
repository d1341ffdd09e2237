"""Engage message events (contract §13): sent, opened and failed reach a subscribed endpoint,
the message as the queue answers it."""

from __future__ import annotations

import json
from typing import Any

from salesplan.engage.delivery.signing import open_url
from salesplan.engage.delivery.worker import run_delivery
from tests.engage_delivery.conftest import worker_context
from tests.webhooks.conftest import deliver_due, make_endpoint, worker_ctx

SEND = "/api/v1/engage/messages/send"


async def _send(client: Any, actor: Any, key: str) -> dict[str, Any]:
    body = {"channel": "EMAIL", "to": "ada@example.com", "subject": "Hi", "body": "Hello"}
    headers = actor.in_org() | {"Idempotency-Key": key}
    resp = await client.post(SEND, json=body, headers=headers)
    assert resp.status_code == 202, resp.text
    return dict(resp.json()["message"])


def _events(receiver: Any) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.received]


async def test_sent_and_opened_messages_are_events(app, client, actor, smtp, receiver) -> None:
    await make_endpoint(client, actor, receiver.url, eventTypes=["engage_message.*"])
    message = await _send(client, actor, "k-1")
    while await run_delivery(worker_context(app, smtp)):
        pass
    await deliver_due(worker_ctx(app))
    [sent] = _events(receiver)
    assert sent["type"] == "engage_message.sent"
    queued = await client.get(f"/api/v1/engage/queue/{message['id']}", headers=actor.in_org())
    assert sent["data"]["id"] == message["id"]
    assert sent["data"]["status"] == "sent" == queued.json()["status"]
    assert sent["data"]["sentAt"] is not None

    pixel = open_url("", app.state.settings.signing_key, message["id"])
    assert (await client.get(pixel)).status_code == 200
    await deliver_due(worker_ctx(app))
    opened = _events(receiver)[1]
    assert opened["type"] == "engage_message.opened"
    assert opened["data"]["openCount"] == 1


async def test_a_failed_message_is_an_event(app, client, actor, smtp, receiver) -> None:
    await make_endpoint(client, actor, receiver.url, eventTypes=["engage_message.failed"])
    smtp.refusals = ["550 5.1.1 no such user"]
    message = await _send(client, actor, "k-2")
    while await run_delivery(worker_context(app, smtp)):
        pass
    await deliver_due(worker_ctx(app))
    [failed] = _events(receiver)
    assert failed["type"] == "engage_message.failed"
    assert failed["data"]["id"] == message["id"] and failed["data"]["status"] == "failed"


async def test_a_campaign_started_and_completed_are_events(app, client, actor, receiver) -> None:
    from tests.engage.helpers import API as ENGAGE
    from tests.engage.helpers import campaign

    await make_endpoint(client, actor, receiver.url, eventTypes=["engage_campaign.*"])
    created = await campaign(client, actor)
    started = await client.post(
        f"{ENGAGE}/campaigns/{created['id']}/start",
        headers=actor.in_org() | {"Idempotency-Key": "s-1"},
    )
    assert started.status_code == 200, started.text
    done = await client.patch(
        f"{ENGAGE}/campaigns/{created['id']}", json={"status": "completed"}, headers=actor.headers
    )
    assert done.status_code == 200, done.text
    await deliver_due(worker_ctx(app))
    got = {e["type"]: e["data"] for e in _events(receiver)}  # delivery order is not promised
    assert set(got) == {"engage_campaign.started", "engage_campaign.completed"}
    assert got["engage_campaign.started"]["id"] == created["id"]
    assert got["engage_campaign.started"]["status"] == "active"
    assert got["engage_campaign.completed"] == done.json()


async def test_a_slack_message_received_is_a_feed_event(app, client, actor, db, receiver) -> None:
    import time

    from tests.feed.helpers import enable_slack, post_slack, slack_event

    await make_endpoint(client, actor, receiver.url, eventTypes=["feed_message.received"])
    await enable_slack(db, app, actor.org.id)
    payload = slack_event(
        "Can we talk pricing?", email="jane@customer.example", ts=f"{time.time():.6f}"
    )
    resp = await post_slack(client, actor.org.id, payload)
    assert resp.status_code == 200, resp.text
    again = await post_slack(client, actor.org.id, payload)  # Slack's retry: stored once
    assert again.status_code == 200
    await deliver_due(worker_ctx(app))
    [got] = _events(receiver)
    assert got["type"] == "feed_message.received"
    assert got["data"]["type"] == "slack" and got["data"]["text"] == "Can we talk pricing?"
    assert got["data"]["author"]["email"] == "jane@customer.example"
