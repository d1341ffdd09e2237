"""Contract §13 (2026-11-27) "Attempt history": the attempts list filtered by `status` and
`eventType`; `GET …/attempts/{eventId}` with every try `{at, statusCode, durationMs, error}`,
`error` in our own words (a refused connection and a receiver that never answers read
differently), never the receiver's body; `"payload": "thin"` per endpoint."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from sqlalchemy import update
from standardwebhooks.webhooks import Webhook

from salesplan.kit.clock import utcnow
from salesplan.models.webhooks import WebhookDelivery
from salesplan.webhooks import delivery
from tests.fixtures.envelope import assert_envelope
from tests.webhooks.conftest import API, deliver_due, make_endpoint, worker_ctx
from tests.webhooks.receiver import Receiver


async def _account(client: Any, actor: Any, name: str = "Acme") -> dict[str, Any]:
    resp = await client.post("/api/v1/accounts", json={"name": name}, headers=actor.headers)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


async def _attempts(client: Any, actor: Any, endpoint: dict[str, Any], **query: str) -> Any:
    resp = await client.get(f"{API}/{endpoint['id']}/attempts", params=query, headers=actor.headers)
    assert resp.status_code == 200, resp.text
    return resp.json()["data"]


async def _history(client: Any, actor: Any, endpoint: dict[str, Any]) -> dict[str, Any]:
    [row] = await _attempts(client, actor, endpoint)
    resp = await client.get(
        f"{API}/{endpoint['id']}/attempts/{row['eventId']}", headers=actor.headers
    )
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


async def test_a_refused_connection_and_a_silent_receiver_read_differently(
    app, client, actor, outbound_allow, monkeypatch
) -> None:
    monkeypatch.setattr(delivery, "TIMEOUT_SECONDS", 1.0)
    closed = Receiver().start()
    refused = await make_endpoint(client, actor, closed.url, eventTypes=["account.created"])
    closed.stop()  # the port is closed: the connection is refused
    silent = Receiver(hold=threading.Event()).start()  # accepts, never answers
    try:
        hung = await make_endpoint(client, actor, silent.url, eventTypes=["account.created"])
        await _account(client, actor)
        await deliver_due(worker_ctx(app))
    finally:
        silent.stop()
    [refusal] = (await _history(client, actor, refused))["tries"]
    [timeout] = (await _history(client, actor, hung))["tries"]
    assert refusal["error"] == "connection refused" and refusal["statusCode"] is None
    assert timeout["error"] == "timeout after 1 s" and timeout["statusCode"] is None
    assert timeout["durationMs"] >= 900 and refusal["durationMs"] < timeout["durationMs"]
    assert set(refusal) == {"at", "statusCode", "durationMs", "error"}
    assert delivery.timeout_error() == "timeout after 1 s"
    monkeypatch.undo()
    assert delivery.timeout_error() == "timeout after 15 s"


async def test_every_try_is_listed_without_the_receivers_body(
    app, client, actor, db, receiver
) -> None:
    down = {"on": True}
    receiver.status = lambda _r: 500 if down["on"] else 204
    receiver.body_size = 65536  # an error page the worker never reads nor shows
    endpoint = await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    ctx = worker_ctx(app)
    await deliver_due(ctx)
    down["on"] = False
    receiver.body_size = 0
    await db.execute(update(WebhookDelivery).values(next_attempt_at=utcnow()))
    await db.commit()
    await deliver_due(ctx)
    history = await _history(client, actor, endpoint)
    assert history["status"] == "delivered" and history["attempts"] == 2
    assert [(t["statusCode"], t["error"]) for t in history["tries"]] == [
        (500, "HTTP 500"),
        (204, None),
    ]
    assert history["tries"][0]["at"] <= history["tries"][1]["at"]
    assert history["event"]["type"] == "account.created"
    assert history["event"]["data"]["name"] == "Acme"
    assert "xxxxxxxx" not in str(history)
    unknown = await client.get(
        f"{API}/{endpoint['id']}/attempts/{uuid.uuid4()}", headers=actor.headers
    )
    assert_envelope(unknown, 404, "not_found")


async def test_attempts_are_filtered_by_status_and_event_type(app, client, actor, receiver) -> None:
    receiver.status = lambda r: 500 if b"Failing" in r.body else 204
    endpoint = await make_endpoint(client, actor, receiver.url)
    account = await _account(client, actor, "Failing")
    await _account(client, actor, "Fine")
    await client.post(
        f"/api/v1/accounts/{account['id']}/contacts",
        json={"firstName": "Ada", "lastName": "L"},
        headers=actor.headers,
    )
    await deliver_due(worker_ctx(app))
    every = await _attempts(client, actor, endpoint)
    assert len(every) == 3
    pending = await _attempts(client, actor, endpoint, status="pending")
    assert [r["status"] for r in pending] == ["pending"]
    assert len(await _attempts(client, actor, endpoint, status="delivered")) == 2
    assert await _attempts(client, actor, endpoint, status="failed") == []
    contacts = await _attempts(client, actor, endpoint, eventType="contact.*")
    assert [r["type"] for r in contacts] == ["contact.created"]
    created = await _attempts(client, actor, endpoint, eventType="account.created")
    assert [r["type"] for r in created] == ["account.created", "account.created"]
    both = await _attempts(client, actor, endpoint, eventType="account.created", status="delivered")
    assert len(both) == 1
    for bad in ({"status": "lost"}, {"eventType": "account.exploded"}):
        resp = await client.get(
            f"{API}/{endpoint['id']}/attempts", params=bad, headers=actor.headers
        )
        assert_envelope(resp, 400, "validation_error")


async def test_a_thin_endpoint_receives_the_id_and_updated_at(app, client, actor, receiver) -> None:
    thin = await make_endpoint(client, actor, receiver.url, payload="thin")
    assert thin["payload"] == "thin"
    full_receiver = Receiver().start()
    try:
        full = await make_endpoint(client, actor, full_receiver.url)
        assert full["payload"] == "snapshot"
        account = await _account(client, actor)
        await deliver_due(worker_ctx(app))
        [got] = receiver.received
        payload = Webhook(thin["secret"]).verify(got.body, got.headers)
        assert payload["type"] == "account.created"
        assert payload["data"] == {"id": account["id"], "updatedAt": account["updatedAt"]}
        [snapshot] = full_receiver.received
        full_payload = Webhook(full["secret"]).verify(snapshot.body, snapshot.headers)
        assert full_payload["data"] == account
        assert snapshot.headers["webhook-id"] == got.headers["webhook-id"]  # one event
    finally:
        full_receiver.stop()
    history = await _history(client, actor, thin)
    assert history["event"]["data"] == payload["data"]
    # PATCH switches an endpoint back; null is refused.
    url = f"{API}/{thin['id']}"
    back = await client.patch(url, json={"payload": "snapshot"}, headers=actor.headers)
    assert back.status_code == 200 and back.json()["payload"] == "snapshot"
    bad = await client.patch(url, json={"payload": None}, headers=actor.headers)
    assert_envelope(bad, 400, "validation_error")
    bad = await client.patch(url, json={"payload": "fat"}, headers=actor.headers)
    assert_envelope(bad, 400, "validation_error")
