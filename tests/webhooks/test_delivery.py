"""Delivery (contract §13): Standard Webhooks signatures checked with the official
`standardwebhooks` package against a receiver on loopback; retries with a stable webhook-id;
410 and five days of failures disable; Retry-After; redirects fail; rotation signs twice;
attempts and replay; the outbox writes nothing for a rolled-back change."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update
from standardwebhooks.webhooks import Webhook

from salesplan.accounts.schemas import AccountIn
from salesplan.accounts.service import create_account
from salesplan.auth.principal import RequestContext
from salesplan.kit.clock import utcnow
from salesplan.kit.uow import commit
from salesplan.models.webhooks import WebhookDelivery, WebhookEndpoint, WebhookEvent
from salesplan.webhooks import delivery
from tests.webhooks.conftest import API, deliver_due, make_endpoint, worker_ctx
from tests.webhooks.receiver import Receiver


async def _account(client: Any, actor: Any, name: str = "Acme") -> dict[str, Any]:
    resp = await client.post("/api/v1/accounts", json={"name": name}, headers=actor.headers)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


async def _due_now(db: Any) -> None:
    """Time passes: every pending delivery is due."""
    await db.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.status == "pending")
        .values(next_attempt_at=utcnow())
    )
    await db.commit()


async def _deliveries(db: Any) -> list[WebhookDelivery]:
    db.expire_all()
    return list((await db.execute(select(WebhookDelivery))).scalars())


async def test_a_change_arrives_signed_with_the_resource_as_the_api_answers_it(
    app, client, actor, receiver
) -> None:
    endpoint = await make_endpoint(client, actor, receiver.url)
    account = await _account(client, actor)
    assert await deliver_due(worker_ctx(app)) == 1
    [got] = receiver.received
    assert got.headers["content-type"] == "application/json"
    payload = Webhook(endpoint["secret"]).verify(got.body, got.headers)
    assert payload["type"] == "account.created"
    assert payload["timestamp"].endswith("Z")
    fetched = await client.get(f"/api/v1/accounts/{account['id']}", headers=actor.headers)
    assert payload["data"] == fetched.json() == account
    # A body signed with another secret is refused by the same check.
    other = Webhook("whsec_" + "A" * 43 + "=")
    try:
        other.verify(got.body, got.headers)
    except Exception:
        pass
    else:
        raise AssertionError("a wrong secret verified")


async def test_events_of_each_write_reach_a_subscribed_endpoint(
    app, client, actor, receiver
) -> None:
    await make_endpoint(client, actor, receiver.url)
    account = await _account(client, actor)
    h = actor.headers
    aid = account["id"]
    await client.patch(f"/api/v1/accounts/{aid}", json={"name": "Acme 2"}, headers=h)
    contact = await client.post(
        f"/api/v1/accounts/{aid}/contacts", json={"firstName": "Ada", "lastName": "L"}, headers=h
    )
    assert contact.status_code == 201, contact.text
    opp = await client.post(
        "/api/v1/opportunities", json={"accountId": aid, "name": "D"}, headers=h
    )
    assert opp.status_code == 201
    plan = await client.post(
        "/api/v1/plans", json={"name": "P", "entityType": "ACCOUNT", "entityId": aid}, headers=h
    )
    assert plan.status_code == 201, plan.text
    pid = plan.json()["id"]
    task = await client.post(f"/api/v1/plans/{pid}/tasks", json={"title": "T"}, headers=h)
    assert task.status_code == 201, task.text
    tid = task.json()["id"]
    done = await client.patch(
        f"/api/v1/plans/{pid}/tasks/{tid}", json={"completed": True}, headers=h
    )
    assert done.status_code == 200, done.text
    again = await client.patch(f"/api/v1/plans/{pid}/tasks/{tid}", json={"title": "U"}, headers=h)
    assert again.status_code == 200
    await client.delete(f"/api/v1/opportunities/{opp.json()['id']}", headers=h)
    await client.delete(f"/api/v1/accounts/{aid}", headers=h)
    await client.delete(f"/api/v1/accounts/{aid}", headers=h)  # already archived: no event
    await deliver_due(worker_ctx(app))
    types = sorted(json.loads(r.body)["type"] for r in receiver.received)
    assert types == sorted(
        [
            "account.created",
            "account.updated",
            "contact.created",
            "opportunity.created",
            "plan.created",
            "plan_task.created",
            "plan_task.completed",
            "plan_task.updated",
            "plan.updated",  # one per task write, beside its plan_task event
            "plan.updated",
            "plan.updated",
            "opportunity.deleted",
            "account.deleted",
        ]
    )
    by_type = {json.loads(r.body)["type"]: json.loads(r.body)["data"] for r in receiver.received}
    assert by_type["plan_task.completed"] == done.json()
    assert by_type["plan.created"] == plan.json()
    assert by_type["account.deleted"]["archivedAt"] is not None


async def test_event_types_filter_what_an_endpoint_receives(app, client, actor, receiver) -> None:
    await make_endpoint(client, actor, receiver.url, eventTypes=["contact.*"])
    account = await _account(client, actor)
    await client.post(
        f"/api/v1/accounts/{account['id']}/contacts",
        json={"firstName": "Ada", "lastName": "L"},
        headers=actor.headers,
    )
    await deliver_due(worker_ctx(app))
    assert [json.loads(r.body)["type"] for r in receiver.received] == ["contact.created"]


async def test_nothing_is_recorded_without_an_endpoint_or_for_another_organization(
    app, client, actor, db, receiver
) -> None:
    from tests.fixtures.factories import make_actor

    other = await make_actor(db)
    await make_endpoint(client, other, receiver.url)
    await _account(client, actor)
    assert await db.scalar(select(func.count()).select_from(WebhookEvent)) == 0
    # A disabled endpoint receives nothing either.
    endpoint = await make_endpoint(client, actor, receiver.url)
    await client.patch(f"{API}/{endpoint['id']}", json={"enabled": False}, headers=actor.headers)
    await _account(client, actor)
    assert await db.scalar(select(func.count()).select_from(WebhookEvent)) == 0


async def test_a_rolled_back_change_records_no_event(app, client, actor, db, receiver) -> None:
    await make_endpoint(client, actor, receiver.url)
    ctx = RequestContext.internal(actor.org.id, actor.user.id)
    async with app.state.sessionmaker() as session:
        await create_account(session, ctx, AccountIn(name="Never"))
        await session.rollback()
    assert await db.scalar(select(func.count()).select_from(WebhookEvent)) == 0
    async with app.state.sessionmaker() as session:
        await create_account(session, ctx, AccountIn(name="Kept"))
        await commit(session)  # the unit of work's commit: the events' handlers, then COMMIT
    assert await db.scalar(select(func.count()).select_from(WebhookEvent)) == 1


async def test_retries_keep_the_webhook_id_until_the_receiver_is_back(
    app, client, actor, db, receiver
) -> None:
    down = {"on": True}
    receiver.status = lambda _r: 503 if down["on"] else 200
    await make_endpoint(client, actor, receiver.url)
    for n in range(3):
        await _account(client, actor, f"A{n}")
    ctx = worker_ctx(app)
    before = utcnow()
    await deliver_due(ctx)
    rows = await _deliveries(db)
    assert {r.status for r in rows} == {"pending"}
    for row in rows:
        assert row.attempts == 1 and row.last_status_code == 503
        # The first retry comes 5 s later, ± 10 %.
        wait = row.next_attempt_at - before
        assert timedelta(seconds=4.4) <= wait <= timedelta(seconds=5.6) + (utcnow() - before)
    await _due_now(db)
    await deliver_due(ctx)
    rows = await _deliveries(db)
    assert {r.attempts for r in rows} == {2}
    assert all(r.next_attempt_at - utcnow() > timedelta(minutes=4) for r in rows)  # 5 min ± 10 %
    down["on"] = False
    await _due_now(db)
    await deliver_due(ctx)
    rows = await _deliveries(db)
    assert {r.status for r in rows} == {"delivered"}
    ids: dict[str, set[str]] = {}
    for got in receiver.received:
        ids.setdefault(json.loads(got.body)["data"]["id"], set()).add(got.headers["webhook-id"])
    assert len(ids) == 3 and all(len(v) == 1 for v in ids.values())  # stable per event
    assert len(receiver.received) == 9
    endpoint = (await db.execute(select(WebhookEndpoint))).scalar_one()
    await db.refresh(endpoint)
    assert endpoint.failing_since is None and endpoint.enabled


async def test_410_disables_the_endpoint_at_once(app, client, actor, db, receiver) -> None:
    receiver.status = lambda _r: 410
    endpoint = await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    await _account(client, actor)
    await deliver_due(worker_ctx(app))
    got = (await client.get(f"{API}/{endpoint['id']}", headers=actor.headers)).json()
    assert got["enabled"] is False and "410" in got["disabledReason"]
    statuses = sorted(r.status for r in await _deliveries(db))
    assert "failed" in statuses
    # Nothing more goes to a disabled endpoint, even when due.
    await _due_now(db)
    count = len(receiver.received)
    assert await deliver_due(worker_ctx(app)) == 0
    assert len(receiver.received) == count


async def test_five_days_of_failures_disable_with_a_reason(
    app, client, actor, db, receiver
) -> None:
    receiver.status = lambda _r: 500
    endpoint = await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    await db.execute(
        update(WebhookEndpoint).values(failing_since=utcnow() - timedelta(days=5, minutes=1))
    )
    await db.commit()
    await deliver_due(worker_ctx(app))
    got = (await client.get(f"{API}/{endpoint['id']}", headers=actor.headers)).json()
    assert got["enabled"] is False and "5 days" in got["disabledReason"]


async def test_retry_after_is_honoured_and_redirects_fail(app, client, actor, db, receiver) -> None:
    receiver.status = lambda _r: 429
    receiver.headers = {"Retry-After": "600"}
    await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    await deliver_due(worker_ctx(app))
    [row] = await _deliveries(db)
    wait = row.next_attempt_at - utcnow()
    assert timedelta(seconds=590) <= wait <= timedelta(seconds=600)
    receiver.status = lambda _r: 302
    receiver.headers = {"Location": "http://127.0.0.1:9/elsewhere"}
    await _due_now(db)
    await deliver_due(worker_ctx(app))
    [row] = await _deliveries(db)
    assert row.status == "pending" and row.last_status_code == 302 and row.attempts == 2


async def test_after_every_retry_the_delivery_fails(app, client, actor, db, receiver) -> None:
    receiver.status = lambda _r: 500
    await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    ctx = worker_ctx(app)
    for _ in range(1 + len(delivery.RETRY_DELAYS)):
        await _due_now(db)
        await deliver_due(ctx)
    [row] = await _deliveries(db)
    assert row.status == "failed" and row.attempts == 10 and row.next_attempt_at is None
    assert len(receiver.received) == 10


async def test_rotation_signs_with_both_secrets_for_a_day(app, client, actor, db, receiver) -> None:
    endpoint = await make_endpoint(client, actor, receiver.url)
    rotated = await client.post(f"{API}/{endpoint['id']}/rotate-secret", headers=actor.headers)
    new_secret = rotated.json()["secret"]
    await _account(client, actor)
    await deliver_due(worker_ctx(app))
    [got] = receiver.received
    assert len(got.headers["webhook-signature"].split(" ")) == 2
    Webhook(new_secret).verify(got.body, got.headers)
    Webhook(endpoint["secret"]).verify(got.body, got.headers)
    # A day later the old secret no longer signs.
    await db.execute(
        update(WebhookEndpoint).values(previous_secret_expires_at=utcnow() - timedelta(seconds=1))
    )
    await db.commit()
    await _account(client, actor)
    await deliver_due(worker_ctx(app))
    later = receiver.received[1]
    assert len(later.headers["webhook-signature"].split(" ")) == 1
    Webhook(new_secret).verify(later.body, later.headers)


async def test_attempts_list_and_replay(app, client, actor, db, receiver) -> None:
    endpoint = await make_endpoint(client, actor, receiver.url)
    await _account(client, actor, "First")
    await deliver_due(worker_ctx(app))
    since = utcnow()
    await _account(client, actor, "Second")
    await deliver_due(worker_ctx(app))
    resp = await client.get(
        f"{API}/{endpoint['id']}/attempts", params={"limit": 1}, headers=actor.headers
    )
    assert resp.status_code == 200, resp.text
    page = resp.json()
    assert set(page["data"][0]) == {
        "eventId", "type", "status", "attempts", "lastStatusCode", "nextAttemptAt"
    }  # fmt: skip
    assert page["data"][0]["status"] == "delivered" and page["data"][0]["attempts"] == 1
    assert page["data"][0]["lastStatusCode"] == 204
    assert page["pagination"]["hasNextPage"] is True
    second = await client.get(
        f"{API}/{endpoint['id']}/attempts",
        params={"limit": 1, "cursor": page["pagination"]["nextCursor"]},
        headers=actor.headers,
    )
    assert second.json()["pagination"]["hasNextPage"] is False
    first_ids = {page["data"][0]["eventId"], second.json()["data"][0]["eventId"]}
    assert len(first_ids) == 2

    resp = await client.post(
        f"{API}/{endpoint['id']}/replay",
        json={"since": since.isoformat().replace("+00:00", "Z")},
        headers=actor.headers,
    )
    assert resp.status_code == 202, resp.text
    assert resp.json() == {"queued": 1}
    await deliver_due(worker_ctx(app))
    assert len(receiver.received) == 3
    replayed, original = receiver.received[2], receiver.received[1]
    assert replayed.headers["webhook-id"] == original.headers["webhook-id"]
    assert json.loads(replayed.body)["data"]["name"] == "Second"
    bad = await client.post(
        f"{API}/{endpoint['id']}/replay", json={"since": "yesterday"}, headers=actor.headers
    )
    assert bad.status_code == 400


async def test_replay_starts_at_the_endpoints_creation_at_the_earliest(
    app, client, actor, db, receiver
) -> None:
    """Issue 38: a replay since 1970 re-sent events from before the endpoint existed; it starts
    at the endpoint's creation (it never receives what happened before it was made)."""
    first = await make_endpoint(client, actor, receiver.url)
    await _account(client, actor, "Before")
    late_receiver = Receiver().start()
    try:
        late = await make_endpoint(client, actor, late_receiver.url)
        await _account(client, actor, "After")
        await deliver_due(worker_ctx(app))
        assert len(late_receiver.received) == 1
        resp = await client.post(
            f"{API}/{late['id']}/replay",
            json={"since": "1970-01-01T00:00:00Z"},
            headers=actor.headers,
        )
        assert resp.status_code == 202, resp.text
        assert resp.json() == {"queued": 1}  # "After" only
        await deliver_due(worker_ctx(app))
        names = [json.loads(r.body)["data"]["name"] for r in late_receiver.received]
        assert names == ["After", "After"]
        Webhook(late["secret"]).verify(
            late_receiver.received[1].body, late_receiver.received[1].headers
        )
    finally:
        late_receiver.stop()
    assert first["id"] != late["id"]


async def test_one_replay_per_endpoint_at_a_time(app, client, actor, db, receiver) -> None:
    from tests.fixtures.envelope import assert_envelope

    endpoint = await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    await deliver_due(worker_ctx(app))
    url, since = f"{API}/{endpoint['id']}/replay", {"since": "2000-01-01T00:00:00Z"}
    first = await client.post(url, json=since, headers=actor.headers)
    assert first.status_code == 202 and first.json() == {"queued": 1}
    second = await client.post(url, json=since, headers=actor.headers)
    assert_envelope(second, 409, "conflict")
    assert second.json()["error"]["details"]["reason"] == "replay_in_progress"
    await deliver_due(worker_ctx(app))  # the first replay done: another may start
    third = await client.post(url, json=since, headers=actor.headers)
    assert third.status_code == 202 and third.json() == {"queued": 1}
    assert len(receiver.received) == 2  # the original and the first replay; the 409 sent none


async def test_a_refused_destination_is_not_contacted(app, client, actor, db, receiver) -> None:
    await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    app.state.settings.outbound_allow = ""  # loopback no longer allowed at use time
    await deliver_due(worker_ctx(app))
    assert receiver.received == []
    [row] = await _deliveries(db)
    assert row.status == "pending" and row.last_status_code is None
    assert row.last_error == "destination not allowed"


async def test_events_older_than_30_days_are_pruned(app, client, actor, db, receiver) -> None:
    await make_endpoint(client, actor, receiver.url)
    await _account(client, actor)
    await _account(client, actor)
    oldest = (await db.execute(select(WebhookEvent.id).limit(1))).scalar_one()
    await db.execute(
        update(WebhookEvent)
        .where(WebhookEvent.id == oldest)
        .values(created_at=utcnow() - timedelta(days=31))
    )
    await db.commit()
    from salesplan.jobs.kinds import job_kinds
    from salesplan.jobs.pruning import Periodic

    # Its own job kind, which prunes on its first call in a loop.
    (pruning,) = [
        k for k in job_kinds() if isinstance(k, Periodic) and k.__name__ == "run_webhook_prune"
    ]
    await pruning(worker_ctx(app))
    left = list((await db.execute(select(WebhookEvent.id))).scalars())
    assert oldest not in left and len(left) == 1
    assert len(await _deliveries(db)) == 1


async def test_an_oversized_resource_is_sent_truncated(app, client, actor, db, receiver) -> None:
    from salesplan.webhooks import events

    await make_endpoint(client, actor, receiver.url)
    async with app.state.sessionmaker() as session:
        big = {"id": str(uuid.uuid4()), "updatedAt": "2026-11-25T00:00:00Z", "x": "y" * 300_000}
        await events.record(session, actor.org.id, "account.updated", big)
        await session.commit()
    await deliver_due(worker_ctx(app))
    [got] = receiver.received
    assert len(got.body) <= events.MAX_BODY_BYTES
    assert json.loads(got.body)["data"] == {
        "id": big["id"], "updatedAt": big["updatedAt"], "truncated": True
    }  # fmt: skip


async def test_a_slow_receiver_holds_only_its_own_deliveries(app, client, actor, receiver) -> None:
    import asyncio
    import threading

    slow = Receiver(hold=threading.Event()).start()
    try:
        await make_endpoint(client, actor, slow.url)
        for n in range(10):
            await _account(client, actor, f"S{n}")
        ctx = worker_ctx(app)
        assert await delivery.run_webhook_delivery(ctx) == delivery.PER_ENDPOINT
        await asyncio.to_thread(slow.arrived.wait, 30)
        # The slow endpoint's deliveries hang; a new endpoint's events still go out at once,
        # and the job kind returned without waiting for the hung ones.
        await make_endpoint(client, actor, receiver.url)
        await _account(client, actor, "Fast")
        assert await delivery.run_webhook_delivery(ctx) == 1  # the slow one has no free slot
        for _ in range(300):
            if receiver.received:
                break
            await asyncio.sleep(0.05)
        assert json.loads(receiver.received[0].body)["data"]["name"] == "Fast"
        assert len(slow.received) == delivery.PER_ENDPOINT
    finally:
        slow.stop()
    await delivery.settle(ctx)
