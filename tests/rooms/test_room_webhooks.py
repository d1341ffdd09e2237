"""Buyer actions as webhooks (contract §16 "Events and notices", §13): `plan_room.viewed`,
`plan_room.commented`, `plan_room.invited`, and the task events of a buyer's tick, each with
`"actor": {"type": "contact", "id"}` beside `data`; recorded in the action's transaction."""

from __future__ import annotations

import json

from sqlalchemy import select

from salesplan.models.webhooks import WebhookEvent
from salesplan.webhooks.events import EVENT_TYPES, SUBSCRIBABLE
from tests.engage_delivery.conftest import smtp
from tests.plans.helpers import PLANS
from tests.rooms.helpers import DOMAIN, Buyer, make_deal, make_share, token_of
from tests.webhooks.conftest import make_endpoint

__all__ = ["smtp"]


async def _events(db) -> list[dict]:
    rows = (await db.execute(select(WebhookEvent.payload).order_by(WebhookEvent.id))).scalars()
    return [json.loads(p) for p in rows]


def test_the_room_types_are_in_the_list_of_types() -> None:
    assert {"plan_room.viewed", "plan_room.commented", "plan_room.invited"} <= set(EVENT_TYPES)
    assert "plan_room.*" in SUBSCRIBABLE


async def test_buyer_actions_are_webhooks_with_the_contact_as_actor(
    app, client, db, actor, smtp
) -> None:
    deal = await make_deal(client, db, actor)
    await make_endpoint(client, actor, "https://hooks.example/in")
    share = await make_share(client, deal, allowInvites=True)
    task_id = deal.ids["buyer_task"]
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        await buyer.post(f"/tasks/{task_id}/completion", {"completed": "true"})
        await buyer.post(f"/tasks/{task_id}/completion", {"completed": "false"})
        await buyer.post(f"/tasks/{task_id}/comments", {"body": "Sent it over."})
        await buyer.post("/invitations", {"email": f"grace@{DOMAIN}"})
    events = await _events(db)
    ada = {"type": "contact", "id": str(deal.ada.id)}
    room = [e for e in events if e["type"].startswith("plan_room.")]
    assert [e["type"] for e in room] == [
        "plan_room.viewed", "plan_room.commented", "plan_room.invited",
    ]  # fmt: skip
    activity = await client.get(f"{PLANS}/{deal.plan_id}/activity", headers=actor.in_org())
    by_id = {i["id"]: i for i in activity.json()["data"]}
    for event in room:
        assert event["actor"] == ada
        assert list(event) == ["type", "timestamp", "actor", "data"]
        assert event["data"] == by_id[event["data"]["id"]]  # the activity item, as listed
    assert room[1]["data"]["taskId"] == task_id
    tasks = [e for e in events if e["type"].startswith("plan_task.")]
    assert [e["type"] for e in tasks] == ["plan_task.completed", "plan_task.updated"]
    for event in tasks:
        assert event["actor"] == ada and event["data"]["id"] == task_id
    # The seller's own writes name no actor.
    before = len(events)
    resp = await client.patch(
        f"{PLANS}/{deal.plan_id}/tasks/{task_id}", json={"completed": True}, headers=actor.in_org()
    )
    assert resp.status_code == 200
    seller = (await _events(db))[before:]
    assert "plan_task.completed" in [e["type"] for e in seller]
    assert all("actor" not in e for e in seller)


async def test_an_endpoint_may_follow_only_the_room(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    await make_endpoint(client, actor, "https://hooks.example/in", eventTypes=["plan_room.*"])
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        await buyer.post(f"/tasks/{deal.ids['buyer_task']}/completion", {"completed": "true"})
    assert [e["type"] for e in await _events(db)] == ["plan_room.viewed"]
