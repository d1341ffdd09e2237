"""Contract §13 (2026-11-27) "More events": plan_milestone.*, plan_goal.*, plan_task.deleted,
engage_suppression.created|deleted, and engage_campaign.completed however a campaign
completes (also when its last enrollment finishes in the worker). Each comes from a domain
event of the write's unit of work; `data` is the resource as its read answers it."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from tests.engage_delivery.test_campaign_start import contacts, enroll, make_campaign, start, work
from tests.engage_delivery.test_suppression_list import unsubscribed
from tests.engage_delivery.test_worker import make_due
from tests.webhooks.conftest import deliver_due, make_endpoint, worker_ctx

PLANS = "/api/v1/plans"


def _events(receiver: Any) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.received]


async def _plan(client: Any, actor: Any) -> str:
    account = await client.post("/api/v1/accounts", json={"name": "A"}, headers=actor.headers)
    plan = await client.post(
        PLANS,
        json={"name": "P", "entityType": "ACCOUNT", "entityId": account.json()["id"]},
        headers=actor.headers,
    )
    assert plan.status_code == 201, plan.text
    return str(plan.json()["id"])


async def test_milestone_events_carry_the_milestone(app, client, actor, receiver) -> None:
    pid = await _plan(client, actor)
    await make_endpoint(client, actor, receiver.url, eventTypes=["plan_milestone.*"])
    h = actor.headers
    body = {"milestone": {"name": "Kickoff"}}
    made = await client.post(f"{PLANS}/{pid}/milestones", json=body, headers=h)
    assert made.status_code == 201, made.text
    mid = made.json()["id"]
    url = f"{PLANS}/{pid}/milestones/{mid}"
    changed = await client.patch(url, json={"status": "in_progress"}, headers=h)
    assert changed.status_code == 200, changed.text
    assert (await client.delete(url, headers=h)).status_code == 204
    await deliver_due(worker_ctx(app))
    got = {e["type"]: e["data"] for e in _events(receiver)}  # order is not promised
    assert len(receiver.received) == 3
    assert set(got) == {
        "plan_milestone.created",
        "plan_milestone.updated",
        "plan_milestone.deleted",
    }
    assert got["plan_milestone.created"]["id"] == mid
    assert got["plan_milestone.updated"] == changed.json()
    deleted = got["plan_milestone.deleted"]
    assert deleted["id"] == mid and deleted["status"] == "in_progress"


async def test_goal_events_and_a_subtree_archive(app, client, actor, receiver) -> None:
    pid = await _plan(client, actor)
    await make_endpoint(client, actor, receiver.url, eventTypes=["plan_goal.*"])
    h = actor.headers
    body = {"title": "Grow", "goalType": "MILESTONE_BASED"}
    root = await client.post(f"{PLANS}/{pid}/goals", json=body, headers=h)
    assert root.status_code == 201, root.text
    child = await client.post(
        f"{PLANS}/{pid}/goals", json=body | {"parentGoalId": root.json()["id"]}, headers=h
    )
    assert child.status_code == 201, child.text
    url = f"{PLANS}/{pid}/goals/{root.json()['id']}"
    changed = await client.patch(url, json={"title": "Grow more"}, headers=h)
    assert changed.status_code == 200, changed.text
    assert (await client.delete(url, headers=h)).status_code == 204
    await deliver_due(worker_ctx(app))
    got = _events(receiver)  # order is not promised
    by_type: dict[str, list[dict[str, Any]]] = {}
    for event in got:
        by_type.setdefault(event["type"], []).append(event["data"])
    assert len(got) == 5
    created = {d["id"] for d in by_type["plan_goal.created"]}
    assert created == {root.json()["id"], child.json()["id"]}
    [updated] = by_type["plan_goal.updated"]
    assert updated["title"] == "Grow more"
    deleted = {d["id"] for d in by_type["plan_goal.deleted"]}
    assert deleted == {root.json()["id"], child.json()["id"]}  # the sub-goal went with it


async def test_a_deleted_task_is_an_event(app, client, actor, receiver) -> None:
    pid = await _plan(client, actor)
    await make_endpoint(client, actor, receiver.url, eventTypes=["plan_task.deleted"])
    task = await client.post(f"{PLANS}/{pid}/tasks", json={"title": "T"}, headers=actor.headers)
    tid = task.json()["id"]
    url = f"{PLANS}/{pid}/tasks/{tid}"
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.delete(url, headers=actor.headers)).status_code == 204  # no event
    await deliver_due(worker_ctx(app))
    [got] = _events(receiver)
    assert got["type"] == "plan_task.deleted"
    assert got["data"]["id"] == tid and got["data"]["title"] == "T"


async def test_suppressions_added_and_lifted_are_events(app, client, actor, smtp, receiver) -> None:
    await make_endpoint(client, actor, receiver.url, eventTypes=["engage_suppression.*"])
    await unsubscribed(app, client, actor, smtp, "Opt Out <OptOut@X.example>", "u-1")
    lifted = await client.delete(
        f"/api/v1/engage/suppressions/{quote('optout@x.example')}", headers=actor.in_org()
    )
    assert lifted.status_code == 204, lifted.text
    await deliver_due(worker_ctx(app))
    got = _events(receiver)
    assert sorted(e["type"] for e in got) == [
        "engage_suppression.created",
        "engage_suppression.deleted",
    ]
    for event in got:
        assert event["data"]["address"] == "optout@x.example"
        assert event["data"]["reason"] == "unsubscribed"


async def test_a_campaign_that_finishes_by_itself_is_completed_once(
    app, client, actor, db, smtp, receiver
) -> None:
    await make_endpoint(client, actor, receiver.url, eventTypes=["engage_campaign.completed"])
    (ada,) = await contacts(db, actor, "Ada")
    campaign = await make_campaign(client, actor, ("EMAIL", 0))
    await enroll(app, client, actor, campaign, [ada.id])
    assert (await start(client, actor, campaign["id"])).json()["started"] == 1
    await work(app, smtp)
    await make_due(db)
    await work(app, smtp)
    await work(app, smtp)
    await deliver_due(worker_ctx(app))
    [got] = _events(receiver)
    assert got["type"] == "engage_campaign.completed"
    read = await client.get(f"/api/v1/engage/campaigns/{campaign['id']}", headers=actor.in_org())
    assert read.json()["status"] == "completed"
    assert got["data"] == read.json()
